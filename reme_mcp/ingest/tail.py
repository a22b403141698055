"""Follow an append-only JSONL log by byte offset.

A half-written last line (no newline yet) is left for the next read. A log that
was truncated, or replaced by another file under the same name (rotation), is
noticed by its inode, its size and a hash of the bytes it began with, and is
read again from the start (the writer's per-message ids keep that idempotent).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HEAD_BYTES = 1024
_BLOCK = 1 << 20


@dataclass
class FileCursor:
    offset: int = 0
    inode: int = 0
    head: str = ""
    state: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"offset": self.offset, "inode": self.inode, "head": self.head, "state": self.state}

    @classmethod
    def from_json(cls, data: Any) -> FileCursor:
        if not isinstance(data, dict):
            return cls()
        state = data.get("state")
        return cls(
            offset=int(data.get("offset") or 0),
            inode=int(data.get("inode") or 0),
            head=str(data.get("head") or ""),
            state={str(k): str(v) for k, v in state.items()} if isinstance(state, dict) else {},
        )


def _head_hash(data: bytes) -> str:
    return f"{len(data)}:{hashlib.sha1(data).hexdigest()[:16]}"


def unchanged(path: Path, cursor: FileCursor) -> bool:
    """True when nothing was appended since the cursor (one stat, no open)."""
    try:
        st = path.stat()
    except OSError:
        return True
    return st.st_ino == cursor.inode and st.st_size == cursor.offset and cursor.offset > 0


@dataclass
class Reading:
    """Complete lines past the cursor, and the cursor after them."""

    lines: list[bytes]
    cursor: FileCursor
    restarted: bool
    bytes_read: int


def read_new_lines(path: Path, cursor: FileCursor) -> Reading:
    """Every complete line after `cursor`; raises OSError when the file cannot be read."""
    with path.open("rb") as fh:
        st = os.fstat(fh.fileno())
        restarted = False
        start = cursor.offset
        state = dict(cursor.state)
        if start:
            head_len = int(cursor.head.split(":", 1)[0] or 0) if cursor.head else 0
            fh.seek(0)
            same_head = _head_hash(fh.read(head_len)) == cursor.head if head_len else True
            if st.st_ino != cursor.inode or st.st_size < start or not same_head:
                start, state, restarted = 0, {}, True
        fh.seek(0)
        head = _head_hash(fh.read(_HEAD_BYTES))
        fh.seek(start)
        lines, end = _complete_lines(fh, start)
    new = FileCursor(offset=end, inode=st.st_ino, head=head, state=state)
    return Reading(lines=lines, cursor=new, restarted=restarted, bytes_read=end - start)


def _complete_lines(fh: Any, start: int) -> tuple[list[bytes], int]:
    lines: list[bytes] = []
    pending = b""
    end = start
    for block in iter(lambda: fh.read(_BLOCK), b""):
        data = pending + block
        parts = data.split(b"\n")
        pending = parts.pop()
        for part in parts:
            end += len(part) + 1
            lines.append(part)
    return lines, end


def iter_files(root: Path, suffix: str = ".jsonl") -> Iterator[Path]:
    """Log files under `root`, sorted; symlinks are followed only where they stay inside it."""
    real_root = root.resolve()
    stack = [root]
    found: list[Path] = []
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink() and not path.resolve().is_relative_to(real_root):
                continue
            if entry.is_dir():
                if not entry.is_symlink():
                    stack.append(path)
            elif entry.name.endswith(suffix) and not entry.name.startswith("."):
                found.append(path)
    yield from sorted(found)
