"""File I/O that refuses what a workspace from elsewhere may plant: links, folders, FIFOs and devices
where a file belongs; and the atomic name swap and directory sync that make a replace durable."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from reme_mcp.errors import ReMeError


def open_regular(path: Path, shown_as: str) -> BinaryIO:
    """A file opened for reading, refusing links, folders, FIFOs and devices with one clear line each."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ReMeError(
                f"{shown_as} is a symbolic link: reme-mcp does not follow or replace it; remove it"
            ) from exc
        raise
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise ReMeError(f"{shown_as} is not a regular file (a folder or a device?): move it away")
    return fh


def read_regular(path: Path, shown_as: str) -> bytes:
    """A file's bytes, refusing links, folders, FIFOs and devices with one clear line each."""
    with open_regular(path, shown_as) as fh:
        return fh.read()


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


@functools.cache
def _renameat2() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None


def rename_exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically (Linux renameat2); False when the kernel or file system cannot."""
    call = _renameat2()
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOENT, errno.EOPNOTSUPP):
        return False  # ENOENT: nothing at `b` yet, which the caller's plain path handles
    raise OSError(code, os.strerror(code), str(b))


def fsync_dir(folder: Path) -> None:
    """Make a rename durable: without this a power cut can undo it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
