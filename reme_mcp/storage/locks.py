"""Cross-process locks: an OS file lock (storage.os_lock) on a file that stays in place, checked to be the file at its path.

The OS releases such a lock when its holder dies, so a lock never goes stale. The file is
never removed by a holder, but anyone may delete or replace it (a person tidying up, a
cleaner): a lock won on a file that is no longer the one at the path excludes nobody, so
it is taken again on the file that is there now. Opening an existing lock file changes
nothing on disk (no truncation), so taking a free lock costs a few system calls and no
journal write.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from reme_mcp.errors import ReMeError
from reme_mcp.storage import os_lock

LOCK_TIMEOUT = 120.0
# Windows has no O_NOFOLLOW (nor symbolic links a user makes without privileges).
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# How often a waiter tries again: a long pause leaves the lock idle between waiters.
LOCK_POLL = 0.002


def take(path: Path, deadline: float, busy: Callable[[], ReMeError], prepare: Callable[[], None]) -> int:
    """Lock the file at `path` (created if missing) and return its descriptor; closing it releases the lock.

    `prepare` makes the folder ready before each attempt to open the file; `busy` is the
    error raised once `deadline` (monotonic) has passed.
    """
    while True:
        try:
            prepare()
            fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
        except FileNotFoundError:  # a folder on the way removed while preparing it, or after
            if time.monotonic() >= deadline:
                raise
            continue
        try:
            while not os_lock.try_lock(fd):
                if time.monotonic() >= deadline:
                    raise busy() from None
                time.sleep(LOCK_POLL)
            found = _is_at(fd, path)
        except BaseException:
            os.close(fd)
            raise
        if found:
            return fd
        os.close(fd)


def try_take(path: Path) -> int | None:
    """Lock the file at `path` (created if missing) if no one holds it: its descriptor (closing it
    releases the lock), or None while another holder has it. OSError when it cannot be opened."""
    for _ in range(3):  # the file replaced between opening and locking it: take the one there now
        fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
        try:
            if not os_lock.try_lock(fd):
                os.close(fd)
                return None
            if _is_at(fd, path):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    return None


def _is_at(fd: int, path: Path) -> bool:
    """Whether the open file is the one at `path` now (not deleted or replaced since it was opened)."""
    held = os.fstat(fd)
    try:
        there = os.lstat(path)
    except FileNotFoundError:
        return False
    return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)


_IN_PROCESS: dict[str, threading.RLock] = {}
_IN_PROCESS_GUARD = threading.Lock()


def in_process(key: str) -> threading.RLock:
    """The one in-process lock in front of the file lock `key`: threads of a process queue on it,
    so only one of them polls the file lock (16 threads polling every 2 ms was most of a server's CPU).
    Re-entrant, for a holder that takes the same lock again (an index commit that rebuilds)."""
    with _IN_PROCESS_GUARD:
        found = _IN_PROCESS.get(key)
        if found is None:
            found = _IN_PROCESS[key] = threading.RLock()
        return found
