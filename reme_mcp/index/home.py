"""Where a workspace's index lives: a folder only this user's reme-mcp writes, outside the workspace.

Whoosh unpickles its table of contents and segment list when it opens an index,
so whoever can write the index folder can run code in the server. A workspace
often comes from elsewhere (a cloned repository, a synced folder, an archive),
so the index is never kept or opened inside it. It lives under the index home
(`Settings.index_home`: REME_INDEX_DIR, else $XDG_CACHE_HOME/reme-mcp/index),
in a folder named after the workspace's real path, so every reme-mcp process of
this user on the same workspace shares it, whatever path it was given.

A folder not owned by this user, or writable by others, is refused: the index is
then built in a fresh private temporary folder for this process (said on stderr).
The files are the truth, so that costs a build, never an answer; failing instead
would leave the memory unusable in every host that hides stderr.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from reme_mcp.errors import ReMeError
from reme_mcp.storage import locks
from reme_mcp.storage.locks import LOCK_TIMEOUT, take
from reme_mcp.storage.workspace import Workspace

log = logging.getLogger("reme_mcp.index")

KEY_CHARS = 24  # hex digits of the real path's SHA-256: collisions need 2^48 workspaces


def workspace_key(ws: Workspace) -> str:
    """The name of a workspace's index folder: the same for every path that resolves to it."""
    return hashlib.sha256(os.fsencode(str(ws.root.resolve()))).hexdigest()[:KEY_CHARS]


def unsafe_reason(folder: Path) -> str | None:
    """Why a folder cannot be trusted to hold an index (None: it can, or it does not exist yet)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others may write it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def private_folder(ws: Workspace, home: Path) -> Path:
    """This workspace's index folder under `home`, created 0700; a private temporary one if unsafe."""
    folder = home / workspace_key(ws)
    for checked in (home, folder):
        reason = unsafe_reason(checked)
        if reason is not None:
            fallback = temporary_folder()
            log.warning(
                "reme-mcp: not using the index folder %s: %s; this process indexes into %s instead "
                "(make the folder yours with mode 700, or set REME_INDEX_DIR)",
                checked,
                reason,
                fallback,
            )
            return fallback
    return folder


def ensure_folder(folder: Path) -> None:
    """Create the folder and any missing parents private to this user (0700); existing ones are left as they are."""
    missing: list[Path] = []
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            os.mkdir(path, mode=0o700)


def clear_unusable(path: Path, want_folder: bool) -> None:
    """Remove what stands where the index keeps a folder (`want_folder`) or a regular file, when it
    is something else (a file, a folder, a link): derived state of the index's own, which would
    otherwise fail every later write. Call under the index lock, or for a path nobody else writes."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode) if want_folder else stat.S_ISREG(st.st_mode):
        return
    log.warning("reme-mcp: removing %s: %s", path, "not a folder" if want_folder else "not a regular file")
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def temporary_folder() -> Path:
    """A fresh folder private to this process (0700), removed when it exits.

    It is made inside a private temporary folder so that its lock file, which lives
    beside it (`index_lock`), is not in the shared temporary directory.
    """
    parent = Path(tempfile.mkdtemp(prefix="reme-mcp-index-"))  # mode 0700, ours
    atexit.register(shutil.rmtree, parent, True)
    folder = parent / "index"
    folder.mkdir(mode=0o700)
    return folder


_DEPTH: dict[str, int] = {}  # how deeply the thread holding a folder's RLock holds its index lock


@contextlib.contextmanager
def index_lock(folder: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """The cross-process lock every index writer and builder holds; the OS releases it when its holder dies.

    The lock file lives beside the folder, not in it: the folder is what gets cleared or
    deleted (by a person, a cache cleaner, a rebuild), and a lock deleted with it would let
    a second process take a fresh one while the first still holds the old. Re-entrant in
    one thread (a commit that finds the folder cleared builds it under the lock it holds).
    Threads of this process queue on an in-process lock first, so only one of them polls.
    """
    path = folder.parent / f"{folder.name}.lock"
    key = str(path)
    in_process = locks.in_process(key)
    if not in_process.acquire(timeout=timeout):
        raise _busy(timeout)
    try:
        depth = _DEPTH.get(key, 0)  # only the thread holding `in_process` reads or writes it
        if depth:
            _DEPTH[key] = depth + 1
            try:
                yield
            finally:
                _DEPTH[key] = depth
            return
        fd = take(path, time.monotonic() + timeout, lambda: _busy(timeout), lambda: ensure_folder(path.parent))
        _DEPTH[key] = 1
        try:
            yield
        finally:
            _DEPTH[key] = 0
            os.close(fd)  # closing the only descriptor releases the flock
    finally:
        in_process.release()


def _busy(timeout: float) -> ReMeError:
    return ReMeError(f"the index is busy (its lock held for over {timeout:.0f} s): try again")
