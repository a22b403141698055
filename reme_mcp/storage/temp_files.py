"""A writer's temp files, `.<name>.tmp-<hex>` beside the file they become, and the sweep of the
ones a dead writer left.

Temp names are random (two threads of one server may write one file at once), so a name says
nothing about whether its writer lives. Its lock does: a writer holds an OS lock
(storage.os_lock) on its temp file from creating it until it is renamed or removed, and the
OS releases that lock when the writer dies, however it dies. A sweeper that can take the lock
knows the writer is gone. Threads of this process are known from a registry instead (a
process's own lock does not exclude it everywhere), and a file is swept only once it has kept
still for a moment: that covers the instant between creating a file and locking it. A swap
(swap.py) hands the person's copy back under a temp name, with its old time: it locks that
copy before the exchange.
Where a temp file cannot be opened to test its lock, its age alone decides.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from reme_mcp.storage import os_lock

TEMP_RE = re.compile(r"^\..+\.tmp-[0-9a-f]+$")
# Seconds a free temp file must have kept still (no write, no rename) before it is swept.
STILL_SECONDS = 2.0
# Where its lock cannot be tested: a temp file this old is a dead writer's.
STALE_SECONDS = 60.0
# Windows cannot rename or remove a file that is open: its writer lets go just before.
_OPEN_BLOCKS_RENAME = os.name == "nt"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_LIVE: set[str] = set()
_LIVE_GUARD = threading.Lock()


def temp_path(target: Path) -> Path:
    return target.parent / f".{target.name}.tmp-{secrets.token_hex(6)}"


class Temp:
    """A temp file this process writes, locked while it lives."""

    def __init__(self, target: Path) -> None:
        self.path = temp_path(target)
        self.fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        with _LIVE_GUARD:
            _LIVE.add(str(self.path))
        try:
            os_lock.try_lock(self.fd)  # a new file: nobody else holds it
        except BaseException:
            self.close()
            raise

    def before_rename(self) -> None:
        """Let go of the file where the OS cannot rename one that is open."""
        if _OPEN_BLOCKS_RENAME:
            self._close()

    def hold_instead(self, path: Path) -> None:
        """Let go of this file and lock the one at `path`, which an exchange (swap.py) is about to
        hand back under this temp name: an old file there, that no sweep may take for a dead
        writer's. Checked with `holds_temp` once exchanged."""
        self._close()
        if _OPEN_BLOCKS_RENAME:
            return  # no exchange there, and the file at `path` is about to be replaced
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW)  # read-only: a read lease (swap.py) may follow
            self.fd = fd
            os_lock.try_lock(fd)

    def holds_temp(self) -> None:
        """Make sure the file under the temp name is the one held (another may have replaced the
        file at the path between `hold_instead` and the exchange)."""
        if self.fd is not None and _same_file(self.fd, self.path):
            return
        self.hold_instead(self.path)

    def _close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)

    def close(self) -> None:
        """Remove the temp file if it is still there, and let go of it."""
        if _OPEN_BLOCKS_RENAME:
            self._close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self._close()
        with _LIVE_GUARD:
            _LIVE.discard(str(self.path))


@contextlib.contextmanager
def writing(target: Path) -> Iterator[Temp]:
    """A locked temp file beside `target`; removed on leaving unless it was renamed away."""
    temp = Temp(target)
    try:
        yield temp
    finally:
        temp.close()


def _same_file(fd: int, path: Path) -> bool:
    try:
        held, there = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def sweep(folder: Path) -> int:
    """Remove the temp files in `folder` whose writers are gone; returns how many."""
    removed = 0
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if TEMP_RE.match(entry.name) and _abandoned(entry.path, now):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def _abandoned(path: str, now: float) -> bool:
    with _LIVE_GUARD:
        if path in _LIVE:
            return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    still = now - info.st_mtime
    if still < STILL_SECONDS:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return still > STALE_SECONDS
    try:
        return os_lock.try_lock(fd)
    except OSError:
        return still > STALE_SECONDS
    finally:
        os.close(fd)  # on Windows the file cannot be removed while open
