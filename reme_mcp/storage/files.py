"""File I/O that refuses what a workspace from elsewhere may plant: links, folders, FIFOs and devices
where a file belongs; the whole-or-nothing write, and the atomic name swap and directory sync that
make a replace durable."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from reme_mcp.errors import ReMeError
from reme_mcp.storage import temp_files


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


def write_whole(target: Path, data: str | bytes, *, exclusive: bool = False, durable: bool = True) -> os.stat_result:
    """Write a whole file or nothing (text as UTF-8, as written): a temp file of its own in the
    same folder (storage.temp_files), then a rename.

    The temp name is random, never the process id: two threads of one server writing the same
    file at once (a tool call and ingest creating a project's workspace) must not share one.
    With `exclusive`, an existing file is never replaced: FileExistsError instead. Without
    `durable` (derived state that can be rebuilt), no fsync: still whole or nothing if the
    process dies, but a power cut may lose it. Returns the written file's stat.

    A folder removed meanwhile (a person or a cleaner deleting derived state) is made again and
    the write started over, a few times, before the error is let through.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    for _ in range(_ATTEMPTS - 1):
        with contextlib.suppress(FileNotFoundError):
            return _write_once(target, payload, exclusive, durable)
    return _write_once(target, payload, exclusive, durable)


_ATTEMPTS = 5


def _write_once(target: Path, payload: bytes, exclusive: bool, durable: bool) -> os.stat_result:
    target.parent.mkdir(parents=True, exist_ok=True)
    with temp_files.writing(target) as tmp:
        assert tmp.fd is not None
        with os.fdopen(tmp.fd, "wb", closefd=False) as fh:
            fh.write(payload)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
            written = os.fstat(fh.fileno())
        tmp.before_rename()
        if exclusive:
            os.link(tmp.path, target)  # fails if the name was taken meanwhile
        else:
            os.replace(tmp.path, target)
    if durable:
        fsync_dir(target.parent)
    return written
