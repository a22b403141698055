"""The workspace: where memory lives, which paths are inside it, and how files change safely.

Everything that touches the file system goes through here: containment of
model-supplied paths, the walk over memory files, atomic writes and the
cross-process locks that keep concurrent writers from losing data.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from reme_mcp.errors import ReMeError
from reme_mcp.storage import locks, temp_files
from reme_mcp.storage.files import write_whole
from reme_mcp.storage.locks import LOCK_TIMEOUT
from reme_mcp.storage.text import nameable, require_unicode

# Folders that hold derived or runtime state: never memory, never served.
PRIVATE_DIRS = frozenset({"metadata", "mem_session"})
# A folder holding reme-mcp memory of its own (the projects root, the personal workspace) carries
# this file: a workspace that contains one (an older `~/.reme` served with --workspace) leaves it out.
NESTED_MEMORY_MARKER = ".reme-mcp-root"
STATE_DIR = PurePosixPath("metadata/reme-mcp")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TEXT_SUFFIXES = frozenset(
    {".md", ".markdown", ".txt", ".text", ".rst", ".org", ".jsonl", ".json", ".yaml", ".yml", ".csv", ".log"}
)
MAX_INDEXED_BYTES = 8 * 1024 * 1024
MAX_PATH_CHARS = 1024
MAX_NAME_BYTES = 255  # NAME_MAX of common file systems
_DRIVE_RE = re.compile(r"^[A-Za-z]:")
log = logging.getLogger("reme_mcp.storage")
_told: set[str] = set()  # the names not UTF-8 already said, once a process


@dataclass(frozen=True)
class FileEntry:
    """One memory file as the walk saw it."""

    path: str  # workspace-relative POSIX path
    stamp: str  # changes whenever the file's content may have changed
    size: int


def _left_out(path: str) -> None:
    """Say once that a file or folder whose name is not UTF-8 is not searched (text.py says why)."""
    if path not in _told:
        _told.add(path)
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        log.warning("reme-mcp: %s is left out of search: its name is not UTF-8; rename it to search it", shown)


def _nested_memory(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, NESTED_MEMORY_MARKER))


def file_stamp(st: os.stat_result) -> str:
    """A cheap change detector: mtime and size. Not the inode: `cp -a`, a restore or a sync
    service gives every file a new one, and the content did not change (an atomic replace
    writes a new file, so its mtime moves anyway)."""
    return f"{st.st_mtime_ns}:{st.st_size}"


def file_kind(path: str) -> str:
    """What a workspace file is, from its place in the layout (workspace-format.md)."""
    parts = path.split("/")
    top = parts[0]
    if top == "daily":
        if len(parts) == 2 and parts[1].endswith(".md") and DATE_RE.match(parts[1][:-3]):
            return "day_index"
        if len(parts) == 3 and DATE_RE.match(parts[1]) and parts[2].endswith(".md"):
            return "daily"
    if top == "digest" and path.endswith(".md"):
        return "digest"
    if top == "session" and path.endswith(".jsonl"):
        return "dialog" if len(parts) > 1 and parts[1] == "dialog" else "transcript"
    if top == "resource":
        return "resource"
    return "note" if path.endswith(".md") else "file"


def path_date(path: str) -> str | None:
    """The date a path carries: daily/<date>/..., daily/<date>.md or resource/<date>/..."""
    parts = path.split("/")
    if parts[0] in ("daily", "resource") and len(parts) >= 2:
        candidate = parts[1][:-3] if len(parts) == 2 and parts[1].endswith(".md") else parts[1]
        if DATE_RE.match(candidate):
            return candidate
    return None


def is_text_file(path: Path, head: bytes | None = None) -> bool:
    """Text formats are indexed; binaries are listed but not indexed."""
    if path.suffix.lower() in TEXT_SUFFIXES:
        return True
    if head is None:
        try:
            with path.open("rb") as fh:
                head = fh.read(4096)
        except OSError:
            return False
    return b"\0" not in head and path.suffix.lower() in ("", ".cfg", ".ini", ".toml", ".tex")


class Workspace:
    """A ReMe workspace folder. Nothing is created on disk until the first write."""

    def __init__(self, root: Path) -> None:
        self.root = root.expanduser().resolve()

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def state_folder(self, name: str) -> Path:
        """A folder of reme-mcp's state, made a real folder when something else is in its place.

        A workspace from elsewhere may hold a link there that leads outside; writing or removing
        through it would reach outside the workspace. Call under a lock, which checks the
        folders above it (`lock`).
        """
        folder = self.state_dir / name
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    # ---- containment -------------------------------------------------------------------------

    def contained_path(self, path: str, *, allow_root: bool = False) -> Path:
        """Resolve a model-supplied workspace-relative path, refusing anything that escapes.

        Refuses absolute, home, drive and UNC forms, backslashes, NUL bytes, `..`
        that climbs out, symbolic links that point outside, and the private folders.
        """
        raw = path.strip() if isinstance(path, str) else path
        if not isinstance(raw, str):
            raise ReMeError("path must be a string: a workspace-relative path such as daily/2026-11-28/a.md")
        if not raw:
            if allow_root:
                return self.root
            raise ReMeError("path is empty: give a workspace-relative path such as daily/2026-11-28/a.md")
        if len(raw) > MAX_PATH_CHARS:
            raise ReMeError(f"path is {len(raw)} characters long: at most {MAX_PATH_CHARS} are accepted")
        if any(len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in raw.split("/")):
            # The OS would refuse it later with ENAMETOOLONG; say so plainly instead.
            raise ReMeError(f"a part of the path is longer than {MAX_NAME_BYTES} bytes: no file has such a name")
        # Other control characters are allowed: a file named with a line break is the workspace's,
        # and search shows its exact path (inside the boundary) so that it can be read.
        if "\0" in raw:
            raise ReMeError("path contains a NUL character: use a plain workspace-relative path")
        require_unicode(raw, "path")
        if "\\" in raw or _DRIVE_RE.match(raw) or raw.startswith(("/", "~")):
            raise ReMeError(
                "path must be workspace-relative with forward slashes (like digest/wiki/a.md), "
                "not absolute, home-relative, a drive or a UNC path"
            )
        target = self.root / raw
        try:
            resolved = target.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on older Pythons
            raise ReMeError(f"path {raw!r} cannot be resolved: {exc.__class__.__name__}") from exc
        try:
            rel = resolved.relative_to(self.root)
        except ValueError as exc:
            raise ReMeError(f"path {raw!r} leads outside the workspace: only paths inside it are served") from exc
        if rel.parts and self._is_private(rel.parts[0]):
            raise ReMeError(f"path {raw!r} is in {rel.parts[0]}/, which holds derived state, not memory")
        if rel.parts and _nested_memory(str(self.root / rel.parts[0])):
            raise ReMeError(f"path {raw!r} is in {rel.parts[0]}/, which holds other memory: serve that folder itself")
        if not rel.parts and not allow_root:
            raise ReMeError("path names the workspace itself: give a file inside it")
        return resolved

    def layout_path(self, rel: str) -> Path:
        """A path remember or the day index writes or reads, checked after resolving symbolic links.

        The folders on the way may be links that stay inside the workspace; the file itself
        is opened without following links (see read_regular), so it cannot lead outside either.
        """
        target = self.root / rel
        try:
            resolved_parent = target.parent.resolve()
        except (OSError, RuntimeError) as exc:
            raise ReMeError(
                f"{rel} cannot be resolved ({exc.__class__.__name__}): fix the folders on its path"
            ) from exc
        inside = resolved_parent.relative_to(self.root).parts if resolved_parent.is_relative_to(self.root) else None
        if inside is None or (inside and self._is_private(inside[0])):
            raise ReMeError(
                f"{PurePosixPath(rel).parent} is a link that leads outside the workspace: "
                "reme-mcp writes only inside it; replace the link by a folder"
            )
        return target

    def _is_private(self, top: str) -> bool:
        """Whether a top-level name is a private folder: also a case twin of one, where the file
        system folds case (macOS, Windows) and so makes it the same folder."""
        if top in PRIVATE_DIRS:
            return True
        folded = top.casefold()
        if folded not in PRIVATE_DIRS:
            return False
        try:
            return os.path.samefile(self.root / top, self.root / folded)
        except OSError:
            return False  # either is missing: no private folder there to reach

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def read_text(self, path: str, max_bytes: int = MAX_INDEXED_BYTES) -> tuple[str, str]:
        """A served file's workspace-relative path and its text (invalid UTF-8 replaced).

        One clear line instead when the path is a folder, missing, over `max_bytes` (the whole
        file is held in memory: a 100 MB log must not be), unreadable, or binary.
        """
        full = self.contained_path(path)
        rel = self.relative(full)
        if full.is_dir():
            raise ReMeError(f"{rel} is a folder: use traverse to list it, or read one of its files")
        if not full.is_file():
            raise ReMeError(f"{rel} does not exist: search or traverse to find a file's path")
        try:
            size = full.stat().st_size
            if size > max_bytes:
                raise ReMeError(
                    f"{rel} is {size // (1024 * 1024)} MB: files over {max_bytes // (1024 * 1024)} MB are not read; "
                    "split it into smaller files to make it readable"
                )
            raw = full.read_bytes()
        except OSError as exc:
            raise ReMeError(f"{rel} cannot be read ({exc.strerror or exc.__class__.__name__})") from exc
        if not is_text_file(full, raw[:4096]):
            raise ReMeError(f"{rel} is a binary file ({len(raw)} bytes): only text files can be read")
        return rel, raw.decode("utf-8", errors="replace")

    # ---- the walk ----------------------------------------------------------------------------

    def walk(
        self, folder: Path | None = None, on_dir: Callable[[str, bool], None] | None = None
    ) -> Iterator[FileEntry]:
        """Every memory file under `folder`: private folders, dot-files and symlinks that leave are skipped.

        `on_dir(path, through_link)` is told of each folder just before it is listed.
        Runs before searches, so the per-file work is kept to one stat and a few string operations.
        """
        start = folder or self.root
        if not start.is_dir():
            return
        root = str(self.root)
        cut = len(root) + 1
        slash = os.sep != "/"
        stack = [(str(start), False)]
        seen: set[tuple[int, int]] = set()
        while stack:
            current, linked = stack.pop()
            try:
                st = os.stat(current)
                if (st.st_dev, st.st_ino) in seen:  # a symlink loop
                    continue
                seen.add((st.st_dev, st.st_ino))
                if on_dir is not None:
                    on_dir(current, linked)
                entries = list(os.scandir(current))
            except OSError:
                continue
            at_root = current == root
            for entry in entries:
                name = entry.name
                if name[0] == "." or (at_root and (name in PRIVATE_DIRS or _nested_memory(entry.path))):
                    continue
                if not nameable(name):
                    _left_out(entry.path)
                    continue
                try:
                    link = entry.is_symlink()
                    if link and not self._link_stays_inside(entry.path):
                        continue
                    if entry.is_dir():
                        stack.append((entry.path, linked or link))
                    elif entry.is_file():
                        est = entry.stat()
                        rel = entry.path[cut:]
                        yield FileEntry(
                            rel.replace(os.sep, "/") if slash else rel,
                            f"{est.st_mtime_ns}:{est.st_size}",  # file_stamp, inlined
                            est.st_size,
                        )
                except (OSError, RuntimeError):
                    continue

    def entry(self, rel: str) -> FileEntry | None:
        """The walk's entry for one workspace-relative path, if the walk would yield it."""
        parts = rel.split("/")
        if not rel or any(not p or p[0] == "." for p in parts) or self._is_private(parts[0]):
            return None
        if len(parts) > 1 and _nested_memory(os.path.join(self.root, parts[0])):
            return None
        full = os.path.join(self.root, *parts)
        try:
            if os.path.islink(full) and not self._link_stays_inside(full):
                return None
            st = os.stat(full)
        except (OSError, RuntimeError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return FileEntry(rel, file_stamp(st), st.st_size)

    def _link_stays_inside(self, path: str) -> bool:
        real = Path(path).resolve()
        if not real.is_relative_to(self.root):
            return False
        parts = real.relative_to(self.root).parts
        return not (parts and parts[0] in PRIVATE_DIRS)

    # ---- safe writes -------------------------------------------------------------------------

    def write_atomic(self, target: Path, data: str, *, exclusive: bool = False, durable: bool = True) -> os.stat_result:
        """Write a whole file or nothing (storage.files.write_whole has the options)."""
        return write_whole(target, data, exclusive=exclusive, durable=durable)

    def remove_stale_temp_files(self, folder: Path) -> int:
        """Temp files left by a writer that died mid-write (SIGKILL, power loss): storage.temp_files."""
        return temp_files.sweep(folder)

    # ---- locks ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, name: str, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """A cross-process lock; the OS releases it when its holder dies, so it never goes stale.

        Threads of one process first queue on an in-process lock, so only one of them
        polls the file lock: under 16 concurrent HTTP clients their polling every 2 ms
        was most of the server's CPU time.
        """
        folder = self.state_dir / "locks"

        def busy() -> ReMeError:
            return ReMeError(f"the workspace is busy ({name} lock held for over {timeout:.0f} s): try again")

        in_process = locks.in_process(str(folder / name))
        if not in_process.acquire(timeout=timeout):
            raise busy()
        try:
            deadline = time.monotonic() + timeout
            fd = locks.take(folder / f"{name}.lock", deadline, busy, lambda: self._repair_lock_path(folder, name))
            try:
                yield
            finally:
                os.close(fd)  # closing the only descriptor releases the flock
        finally:
            in_process.release()

    def _repair_lock_path(self, folder: Path, name: str) -> None:
        """Lock files are ours alone: a file where the folder belongs, a folder or link where
        the lock file belongs (a workspace from elsewhere, a stray tool) is removed, not obeyed."""
        for path in (self.root / "metadata", self.state_dir, folder):
            if path.is_symlink() or (path.exists() and not path.is_dir()):
                if path == self.root / "metadata":
                    raise ReMeError(
                        "metadata is not a folder in the workspace: move it away so reme-mcp can keep its state"
                    )
                path.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        lock_file = folder / f"{name}.lock"
        if lock_file.is_symlink() or (lock_file.exists() and not lock_file.is_file()):
            if lock_file.is_dir() and not lock_file.is_symlink():
                shutil.rmtree(lock_file, ignore_errors=True)
            else:
                lock_file.unlink()
