"""What `read` accepts besides a plain path: every reference an answer shows.

A search answer names a hit `path#L3-L9`, and a path that is not plain text outside the boundary
as `[file c8dcfb7cb9a0]` (safety/boundary.shown_path); a person or a model passes either back to
`read`. Both are resolved here to the workspace path (and lines) they stand for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reme_mcp.errors import ReMeError
from reme_mcp.safety.boundary import shown_path
from reme_mcp.storage.workspace import Workspace

_FILE_REFERENCE = re.compile(r"\[file ([0-9a-f]{12})\]")
_LINES = re.compile(r"(?P<path>.+?)#L(?P<start>\d{1,9})(?:-L(?P<end>\d{1,9}))?")


def resolve_reference(
    path: str, start_line: int | None, end_line: int | None, workspaces: Iterable[Workspace]
) -> tuple[str, int | None, int | None]:
    """The workspace path and lines a shown reference stands for; a plain path as it is."""
    found = _LINES.fullmatch(path.strip())
    if found and not _exists(path, workspaces):
        path = found["path"]
        start_line = int(found["start"]) if start_line is None else start_line
        if end_line is None and found["end"] is not None:
            end_line = int(found["end"])
    reference = _FILE_REFERENCE.fullmatch(path.strip())
    if reference is None:
        return path, start_line, end_line
    for ws in workspaces:
        if ws.root.is_dir():
            for entry in ws.walk():
                if shown_path(entry.path) == reference[0]:
                    return entry.path, start_line, end_line
    raise ReMeError(f"{reference[0]} names no file of this memory now: search again for its current reference")


def _exists(path: str, workspaces: Iterable[Workspace]) -> bool:
    for ws in workspaces:
        try:
            if ws.root.is_dir() and ws.contained_path(path).is_file():
                return True
        except ReMeError:
            continue
    return False
