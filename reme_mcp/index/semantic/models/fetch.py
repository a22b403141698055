"""`reme-mcp model fetch`: a model's files from a hub into the user's models folder, whole or not at all.

Run only by a person, from the command line: a server, a tool call, a search never
download (the semantic stage loads a model that is already here, models/hub_models.py).

Files come from `{hub}/{repo}/resolve/main/{file}`, the public file address of Hugging
Face and of the mirrors that copy its layout, by the standard library's HTTP client
(following the hub's redirect to its file store). They are written into a staging folder
beside the model's own and renamed into place once every file is complete: an interrupted
or failed fetch leaves no model folder, and the staging folder is removed (or, after a
kill, by the next fetch of that model).
"""

from __future__ import annotations

import errno
import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reme_mcp._version import __version__
from reme_mcp.errors import ReMeError, os_error_line, shown
from reme_mcp.index.semantic.models import hub_models
from reme_mcp.index.semantic.models.hub_models import HubModel

DEFAULT_HUB = hub_models.DEFAULT_HUB
CHUNK = 1 << 20
TIMEOUT = 30.0  # seconds without a byte before the hub counts as unreachable
# Bytes (file, done, total or None): the command line draws them as a progress bar.
Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class FetchResult:
    name: str
    folder: Path
    size: int
    already: bool  # it was here before this command

    def render(self) -> str:
        if self.already:
            return f"{self.name} is already fetched in {self.folder} (--force fetches it again)"
        return f"fetched {self.name} ({_mb(self.size)}) into {self.folder}"


def resolve_hub(flag: str | None, environ: dict[str, str] | None = None) -> str:
    """--hub, else REME_MODEL_HUB, else Hugging Face; an http(s) address without a trailing slash."""
    env = os.environ if environ is None else environ
    hub = (flag or env.get("REME_MODEL_HUB") or DEFAULT_HUB).strip().rstrip("/")
    parts = urllib.parse.urlsplit(hub)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ReMeError(f"model hub {shown(hub)} is not an http(s) address such as {DEFAULT_HUB}")
    return hub


def describe(
    name: str,
    repo: str | None = None,
    onnx: str | None = None,
    query_prefix: str | None = None,
    passage_prefix: str | None = None,
    pooling: str | None = None,
    onnx_data: str | None = None,
) -> HubModel:
    """A known model by name, or (with `repo`) a model of the user's choosing under that name."""
    if hub_models.is_bundled(name):
        raise ReMeError(f"{name} comes with reme-mcp[semantic]: there is nothing to fetch")
    if repo is None:
        known = hub_models.KNOWN.get(name)
        if known is None:
            names = ", ".join(hub_models.KNOWN)
            raise ReMeError(f"no known model is named {name} (known: {names}); name another with --repo OWNER/NAME")
        if (onnx, query_prefix, passage_prefix, pooling, onnx_data) != (None,) * 5:
            raise ReMeError(
                "--onnx-file, --onnx-data-file, --query-prefix, --passage-prefix and --pooling go with --repo"
            )
        return known
    if name in hub_models.KNOWN:
        raise ReMeError(f"{name} is a known model of {hub_models.KNOWN[name].repo}: give {repo} another name")
    model = HubModel(
        name,
        repo,
        onnx or HubModel.onnx,
        query_prefix=query_prefix or "",
        passage_prefix=passage_prefix or "",
        pooling=pooling or "mean",
        onnx_data=onnx_data or "",
    )
    try:
        return hub_models.check_model(model)
    except hub_models.BadModel as exc:
        raise ReMeError(str(exc)) from None


def fetch(model: HubModel, home: Path, hub: str, progress: Progress, force: bool = False) -> FetchResult:
    """Download the model's files into `home/NAME`, or leave everything as it was."""
    target = hub_models.folder_of(home, model.name)
    here = hub_models.fetched(home, model.name)
    if here is not None and not force:
        if here.model != model:
            raise ReMeError(
                f"{model.name} in {target} is {here.model.repo} {here.model.onnx}: --force replaces it "
                f"with {model.repo} {model.onnx}"
            )
        if not hub_models.missing_files(here):
            return FetchResult(model.name, target, here.size, already=True)
    home.mkdir(parents=True, exist_ok=True)
    _sweep(home, model.name)
    staging = Path(tempfile.mkdtemp(prefix=f".{model.name}.partial-{os.getpid()}-", dir=home))
    try:
        sizes: dict[str, int] = {}
        revision = None
        for path in model.files:
            sizes[path], revision = _download(hub, model.repo, path, staging / path, progress)
        (staging / hub_models.MANIFEST).write_text(
            hub_models.manifest_text(model, hub, sizes, revision), encoding="utf-8"
        )
        _into_place(staging, target)
    except OSError as exc:
        raise ReMeError(_disk_line(exc, home)) from None
    finally:  # an error, Ctrl-C or SIGTERM (the command turns it into an exit): nothing half-done stays
        shutil.rmtree(staging, ignore_errors=True)
    return FetchResult(model.name, target, sum(sizes.values()), already=False)


def _download(hub: str, repo: str, path: str, dest: Path, progress: Progress) -> tuple[int, str | None]:
    """One file into `dest`; its size, and the hub's commit when it says one."""
    url = f"{hub}/{urllib.parse.quote(repo)}/resolve/main/{urllib.parse.quote(path)}"
    request = urllib.request.Request(url, headers={"User-Agent": f"reme-mcp/{__version__}"})
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        raise ReMeError(_http_line(exc.code, repo, path, url)) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ReMeError(
            f"cannot reach the model hub at {hub} ({reason}): check the network, "
            "or give --hub (or REME_MODEL_HUB) a mirror with the same layout"
        ) from None
    with response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        if total is not None:
            _room_for(dest.parent, total, path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        done = 0
        progress(path, 0, total)
        with open(dest, "wb") as out:
            while True:
                try:
                    chunk = response.read(CHUNK)
                except (http.client.HTTPException, TimeoutError, ConnectionError) as exc:
                    raise ReMeError(_broke_off(path, done, total, exc)) from None
                if not chunk:
                    break
                out.write(chunk)
                done += len(chunk)
                progress(path, done, total)
            out.flush()
            os.fsync(out.fileno())
        if total is not None and done != total:
            raise ReMeError(_broke_off(path, done, total, None))
        return done, response.headers.get("X-Repo-Commit")


def _room_for(folder: Path, size: int, path: str) -> None:
    free = shutil.disk_usage(folder if folder.exists() else folder.parent).free
    if free < size:
        raise ReMeError(
            f"{path} needs {_mb(size)} and the disk has {_mb(free)} free: free some space, "
            "or set REME_MODELS_DIR to a folder on another disk"
        )


def _into_place(staging: Path, target: Path) -> None:
    """Rename the finished folder into place; a model fetched before is swapped out, then removed."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        os.rename(target, old)
    try:
        os.rename(staging, target)
    except OSError:
        if old.exists():
            os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _sweep(home: Path, name: str) -> None:
    """Staging and swapped-out folders of this model that a killed fetch left behind."""
    for kind in ("partial", "old"):
        prefix = f".{name}.{kind}-"
        for leftover in home.glob(f"{prefix}*"):
            pid = leftover.name[len(prefix) :].split("-")[0]
            if not pid.isdigit() or not _alive(int(pid)):
                shutil.rmtree(leftover, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _http_line(code: int, repo: str, path: str, url: str) -> str:
    if code == 404:
        return f"the hub has no {path} in {repo} (HTTP 404 at {url}): check the name (reme-mcp model list) or --repo"
    if code in (401, 403):
        return (
            f"the hub refused {path} of {repo} (HTTP {code}): the repository may be private or gated; "
            "reme-mcp fetches public files only"
        )
    return f"the hub answered HTTP {code} for {url}: try again later, or give --hub a mirror"


def _broke_off(path: str, done: int, total: int | None, exc: BaseException | None) -> str:
    got = f"{done:,} of {total:,} bytes" if total is not None else f"{done:,} bytes"
    why = f" ({exc.__class__.__name__}: {exc})" if exc is not None else ""
    return f"the download of {path} broke off after {got}{why}: nothing was kept; run the command again"


def _disk_line(exc: OSError, home: Path) -> str:
    line = os_error_line(exc, f"saving the model under {home}")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        line += ", or set REME_MODELS_DIR to a folder on another disk"
    return line


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1_000_000 else f"{size / 1e3:.1f} kB"


@dataclass(frozen=True)
class ModelRow:
    """One line of `reme-mcp model list`."""

    name: str
    state: str  # bundled, not installed (a bundled model's wheel), fetched, not fetched, incomplete
    size: str
    source: str
    folder: str

    def render(self) -> str:
        where = f"  {self.folder}" if self.folder else ""
        return f"{self.name:28} {self.state:12} {self.size:>10}  {self.source}{where}"


def extra_for(model: str) -> str:
    """The extra of reme-mcp that runs `model`: a bundled model's weights come with `semantic`; a
    fetched one needs the runtime alone, `semantic-hub`."""
    return "semantic" if hub_models.is_bundled(model) else "semantic-hub"


def listing(home: Path) -> list[ModelRow]:
    """The bundled models, the known hub models, and any other model fetched into `home`."""
    rows = [
        ModelRow(m.name, "bundled" if hub_models.packages_installed(m.name) else "not installed", m.size, m.source, "")
        for m in hub_models.BUNDLED_MODELS
    ]
    here = {f.model.name: f for f in hub_models.all_fetched(home)}
    for name, known in hub_models.KNOWN.items():
        rows.append(_row(known, here.pop(name, None)))
    rows.extend(_row(found.model, found) for found in here.values())
    return rows


def _row(model: HubModel, found: hub_models.Fetched | None) -> ModelRow:
    if found is None:
        about = f"~{model.about_mb} MB" if model.about_mb else ""
        return ModelRow(model.name, "not fetched", about, model.repo, "")
    state = "incomplete" if hub_models.missing_files(found) else "fetched"
    return ModelRow(model.name, state, _mb(found.size), f"{found.model.repo} from {found.hub}", str(found.folder))
