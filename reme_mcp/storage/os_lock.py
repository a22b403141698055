"""The one seam between reme-mcp and the OS's file locks: an exclusive lock on an open file that the
OS releases when its holder dies, so a lock never goes stale.

- Where `fcntl` imports (Linux, macOS): flock, held by the open file description, so a child
  given the descriptor holds it too, and two descriptors of one process exclude each other.
- Windows: a lock on the file's first byte (msvcrt.locking), held by the handle.
- A POSIX process without `fcntl`: lockf from `os`, held by the process; the in-process locks
  in front of it (locks.in_process) and the writers' own registry (temp_files) keep threads
  of one process apart.

Each module is imported where it exists and nowhere else, so importing this never fails.
Standard library only: the plugin's front imports it before any environment is built.
"""

from __future__ import annotations

import os
import time
from types import ModuleType


def _optional(name: str) -> ModuleType | None:
    try:
        return __import__(name)
    except ImportError:
        return None


_FCNTL = _optional("fcntl")
_MSVCRT = _optional("msvcrt")
# How often a blocking wait tries again where the OS offers no blocking call of its own.
_POLL = 0.01


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on the open file `fd` if no other holder has it: True when taken."""
    try:
        if _FCNTL is not None:
            _FCNTL.flock(fd, _FCNTL.LOCK_EX | _FCNTL.LOCK_NB)
        elif _MSVCRT is not None:
            os.lseek(fd, 0, os.SEEK_SET)  # the lock covers the byte at the file position
            _MSVCRT.locking(fd, _MSVCRT.LK_NBLCK, 1)
        else:
            os.lockf(fd, os.F_TLOCK, 0)
    except (BlockingIOError, PermissionError):
        return False
    except OSError:
        # Windows says "deadlock avoided" (EDEADLOCK) for a byte another handle holds.
        if _MSVCRT is not None and _FCNTL is None:
            return False
        raise
    return True


def lock(fd: int) -> None:
    """Wait for the exclusive lock on the open file `fd`."""
    if _FCNTL is not None:
        _FCNTL.flock(fd, _FCNTL.LOCK_EX)
    elif _MSVCRT is None:
        os.lockf(fd, os.F_LOCK, 0)
    else:
        while not try_lock(fd):
            time.sleep(_POLL)
