"""Which day indexes are behind their notes, read without changing anything (for `doctor`).

A day index is derived: a process that could not refresh it (a full disk, a read-only
folder) owes it, marks the day (daily.py) when it can, and catches it up on its own as
soon as it can write. This says which are behind now and who is catching them up.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from reme_mcp.errors import ReMeError
from reme_mcp.notes.daily import DUE_FOLDER, MARK_RE, list_note_days, running
from reme_mcp.notes.day_index import listed
from reme_mcp.notes.day_notes import DayNotes
from reme_mcp.storage.workspace import Workspace


@dataclass(frozen=True)
class DayLag:
    """A day index that does not list exactly its day's notes."""

    day: str
    listed: int  # the notes its block lists
    notes: int  # the notes the day has
    owed_by: list[int]  # the running processes whose mark says they catch it up


def lagging(ws: Workspace) -> list[DayLag]:
    """The day indexes that do not list exactly their day's notes, newest day first."""
    notes = DayNotes(ws)
    owing = _owing(ws)
    found = []
    for day in list_note_days(ws):
        try:
            text = ws.layout_path(f"daily/{day}.md").read_text(encoding="utf-8", errors="replace")
        except (OSError, ReMeError):
            continue  # no day index: left to the day's next note, as ReMe leaves it
        shown, paths = listed(text), [n.path for n in notes.notes(day)]
        if sorted(shown) != paths:
            found.append(DayLag(day, len(shown), len(paths), owing.get(day, [])))
    return found


def _owing(ws: Workspace) -> dict[str, list[int]]:
    """Day -> the running processes (other than this one) whose mark says they owe its refresh."""
    owing: dict[str, list[int]] = {}
    folder = ws.state_dir / DUE_FOLDER
    if folder.is_symlink():
        return owing
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(folder)):
            mark = MARK_RE.fullmatch(name)
            if mark and int(mark[2]) != os.getpid() and running(int(mark[2])):
                owing.setdefault(mark[1], []).append(int(mark[2]))
    return owing
