"""Replacing a file that people and other programs also save, without losing their saves.

The day index is such a file. A replacement is a compare-and-swap: the new text is
written beside the file, the file is checked to be still as it was read, and the two
are exchanged in one atomic step (Linux renameat2), which hands back what was taken
out; when that is not what was read, the caller merges it and swaps again.

One case needs more: an editor that saves in place (truncate, then write) may have
opened the file just before the swap and write into the copy that was taken out. On
Linux a read lease tells at once whether anyone still holds that copy open for writing
(the lease cannot be taken then), so the copy is compared only once they have closed it.
Where leases are not available, each swapped-in file is marked (an extended attribute
holding its hash) so that a file nobody but reme-mcp has touched is recognised, and a
copy saved by someone else in the last few seconds is read again until it stops changing.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from reme_mcp.storage import temp_files
from reme_mcp.storage.files import fsync_dir, open_regular, read_regular, rename_exchange

MARK = "user.reme-mcp.swapped"
# A save by someone else this recent means they may still be writing.
HOT_SECONDS = 5.0
SETTLE_SECONDS = 0.05
SETTLE_AT_MOST = 1.0
# How long a save into the copy a swap took out may take: on a machine whose cores are all busy,
# a person's editor can wait over a second between truncating the file and writing it again.
HELD_AT_MOST = HOT_SECONDS


class Changed(Exception):
    """The file changed between the snapshot and the swap: take a new snapshot."""


@dataclass(frozen=True)
class Snapshot:
    """A file's bytes as read, with its identity (inode, mtime, size) and whether a swap of ours put them there."""

    data: bytes | None
    stamp: tuple[int, int, int] | None = None
    ours: bool = False

    @property
    def hot(self) -> bool:
        if self.stamp is None or self.ours:
            return False
        return time.time_ns() - self.stamp[1] < HOT_SECONDS * 1e9


def snapshot(path: Path, shown_as: str, known: bytes | None = None) -> Snapshot:
    """The file's bytes and identity, once nobody is writing it; a missing file is a snapshot with no data.

    `known`: the bytes this process last swapped in; finding exactly those needs no hash to count as ours.
    """
    with contextlib.suppress(OSError):
        _writers_gone(path)
    try:
        fh = open_regular(path, shown_as)
    except FileNotFoundError:
        return Snapshot(None)
    with fh:
        info = os.fstat(fh.fileno())
        data = fh.read()
        return Snapshot(data, _stamp(info), data == known or _marked(fh.fileno()) == _digest(data))


def swap(path: Path, data: bytes, seen: Snapshot, shown_as: str, settle: bool = False) -> tuple[bytes | None, Snapshot]:
    """Put `data` at `path` if it is still as `seen`; return what was taken out and a snapshot of what is there.

    With `settle` (or when `seen` is a recent save by someone else), the taken-out copy is
    read again until it stops changing. Raises Changed when the file moved on since `seen`
    (or appeared, when `seen` had none).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with temp_files.writing(path) as temp:
        tmp = temp.path
        assert temp.fd is not None
        with os.fdopen(temp.fd, "wb", closefd=False) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            _mark(fh.fileno(), _digest(data))
            ours = Snapshot(data, _stamp(os.fstat(fh.fileno())), ours=True)
        if _current_stamp(path) != seen.stamp:
            raise Changed
        temp.hold_instead(path)  # the copy the exchange takes out is no dead writer's: no sweep may remove it
        if rename_exchange(tmp, path):
            temp.holds_temp()
            gone = _writers_gone(tmp, HELD_AT_MOST)
            if gone is None and (settle or seen.hot):
                _settle(tmp, shown_as)
            before = _current_stamp(tmp)
            taken = read_regular(tmp, shown_as)
            # Still being written (a save slowed down by a busy machine): what was read may be half
            # of it, and the rest would go into a file about to be removed.
            writing = _current_stamp(tmp) != before
            if (taken != seen.data or writing) and _current_stamp(path) == ours.stamp and rename_exchange(tmp, path):
                # Saved by someone after the snapshot: theirs goes straight back, so that nobody reads
                # our text built on the older version, and the caller merges theirs.
                raise Changed
        elif seen.data is None:
            try:
                os.link(tmp, path)
            except FileExistsError as exc:
                raise Changed from exc
            taken = None
        else:
            # No atomic exchange here (not Linux, or the file system cannot): read just before a plain rename.
            taken = read_regular(path, shown_as)
            os.replace(tmp, path)
    fsync_dir(path.parent)
    return taken, ours


def _writers_gone(path: Path, at_most: float = SETTLE_AT_MOST) -> bool | None:
    """Wait until nobody holds `path` open for writing: True once so, False when someone still
    does after `at_most` seconds (then they are not saving), None when that cannot be known here."""
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    setlease = getattr(fcntl, "F_SETLEASE", None)
    if setlease is None or not hasattr(signal, "SIGIO") or signal.getsignal(signal.SIGIO) != signal.SIG_IGN:
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        deadline = time.monotonic() + at_most
        while True:
            try:
                fcntl.fcntl(fd, setlease, fcntl.F_RDLCK)
            except OSError as exc:
                if exc.errno != errno.EAGAIN:
                    return None  # no leases on this file system, or not our file
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
                continue
            fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
            return True
    finally:
        os.close(fd)


def _settle(tmp: Path, shown_as: str) -> None:
    """Wait until the taken-out copy stops changing (two reads alike, a moment apart)."""
    deadline = time.monotonic() + SETTLE_AT_MOST
    taken = read_regular(tmp, shown_as)
    while time.monotonic() < deadline:
        time.sleep(SETTLE_SECONDS)
        again = read_regular(tmp, shown_as)
        if again == taken:
            return
        taken = again


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def _current_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        return _stamp(os.lstat(path))
    except FileNotFoundError:
        return None


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _mark(fd: int, digest: bytes) -> None:
    with contextlib.suppress(OSError, AttributeError):  # no extended attributes here: every save counts as foreign
        os.setxattr(fd, MARK, digest)


def _marked(fd: int) -> bytes | None:
    try:
        return os.getxattr(fd, MARK)
    except (OSError, AttributeError):
        return None
