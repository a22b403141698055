"""The timeline: the days that have memory, newest first, each with its notes and the sessions
ingested that day grouped per host; with every day's count, for a chart.

Read from the index's file records (name and description of each file, kept in memory once per
commit), not from the files: a 10k-note workspace is listed without opening a note. A dialog
(`session/dialog/<host>/<session>.jsonl`) carries no date in its path: its day is the day of its
first message, read once per version of the file.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from reme_mcp.notes.daily import parse_date
from reme_mcp.storage.documents import parse_message
from reme_mcp.storage.workspace import DATE_RE, file_kind, path_date

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

# A page of the timeline holds whole days, stopping once it holds this many entries.
PAGE_ENTRIES = 300
# How much of a dialog is read for its first message's date.
DIALOG_HEAD_BYTES = 64 * 1024
# ReMe's own dialogs sit directly in session/dialog/; ingested ones in a folder per host.
REME_HOST = "reme"


@dataclass(frozen=True)
class TimelineEntry:
    """A note or a session on the timeline; name and description are the file's own (untrusted) text."""

    path: str
    name: str
    description: str
    superseded_by: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HostSessions:
    host: str
    sessions: list[TimelineEntry]


@dataclass(frozen=True)
class TimelineDay:
    date: str
    notes: list[TimelineEntry]
    hosts: list[HostSessions]

    @property
    def size(self) -> int:
        return len(self.notes) + sum(len(h.sessions) for h in self.hosts)


@dataclass(frozen=True)
class Timeline:
    days: list[TimelineDay]
    per_day: dict[str, int]  # every day with memory: how many notes and sessions
    older: str | None  # the `before` of the next page, None on the last one

    @property
    def total(self) -> int:
        return sum(self.per_day.values())


@dataclass
class _Dated:
    notes: list[tuple[str, str, str]] = field(default_factory=list)  # (path, name, description)
    sessions: list[tuple[str, str, str, str]] = field(default_factory=list)  # (host, path, name, description)


class TimelineReader:
    """Lists a Memory's timeline; remembers each dialog's date until the dialog changes."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._dialog_dates: dict[str, tuple[str, str]] = {}  # path -> (stamp, date)
        self._lock = threading.Lock()

    def read(self, before: str | None = None, max_entries: int = PAGE_ENTRIES) -> Timeline:
        """The newest whole days before `before` (a date, excluded) until `max_entries` is reached."""
        if before is not None:
            before = parse_date(before, "before")
        dated = self._dated()
        per_day = {day: len(d.notes) + len(d.sessions) for day, d in dated.items()}
        days: list[TimelineDay] = []
        taken = 0
        ordered = sorted(dated, reverse=True)
        older: str | None = None
        for day in ordered:
            if before is not None and day >= before:
                continue
            if taken >= max_entries:
                older = days[-1].date
                break
            days.append(self._day(day, dated[day]))
            taken += days[-1].size
        return Timeline(days=days, per_day=per_day, older=older)

    def _dated(self) -> dict[str, _Dated]:
        """Every daily note and dialog, by day."""
        ws = self.memory.ws
        if not ws.root.is_dir():
            return {}
        self.memory.index.sync()
        dated: dict[str, _Dated] = {}
        for path, record in self.memory.index.records().items():
            kind = file_kind(path)
            if kind == "daily":
                day = path_date(path)
                if day:
                    dated.setdefault(day, _Dated()).notes.append((path, record.name, record.description))
            elif kind == "dialog":
                day = self._dialog_date(path, record.stamp)
                if day:
                    parts = path.split("/")
                    host = parts[2] if len(parts) > 3 else REME_HOST
                    dated.setdefault(day, _Dated()).sessions.append((host, path, record.name, record.description))
        return dated

    def _day(self, day: str, dated: _Dated) -> TimelineDay:
        replaced = self.memory.index.superseded_by([p for p, _, _ in dated.notes])
        notes = [TimelineEntry(p, n, d, replaced[p]) for p, n, d in sorted(dated.notes)]
        by_host: dict[str, list[TimelineEntry]] = {}
        for host, path, name, description in sorted(dated.sessions):
            by_host.setdefault(host, []).append(TimelineEntry(path, name, description))
        return TimelineDay(day, notes, [HostSessions(h, s) for h, s in sorted(by_host.items())])

    def _dialog_date(self, path: str, stamp: str) -> str | None:
        with self._lock:
            known = self._dialog_dates.get(path)
        if known is not None and known[0] == stamp:
            return known[1] or None
        day = self._first_message_day(path)
        with self._lock:
            self._dialog_dates[path] = (stamp, day or "")
        return day

    def _first_message_day(self, path: str) -> str | None:
        """The day of a dialog's first dated message; else the day the file last changed."""
        full = self.memory.ws.root / path
        try:
            with full.open("rb") as fh:
                head = fh.read(DIALOG_HEAD_BYTES)
            changed = full.stat().st_mtime
        except OSError:
            return None
        for line in head.decode("utf-8", errors="replace").split("\n"):
            message = parse_message(line)
            if message is not None and DATE_RE.match(message.time[:10]):
                return message.time[:10]
        return datetime.fromtimestamp(changed, self.memory.settings.timezone).date().isoformat()


def weekly(per_day: dict[str, int]) -> dict[str, int]:
    """Counts per ISO week, keyed by the week's Monday."""
    weeks: Counter[str] = Counter()
    for day, count in per_day.items():
        date = datetime.strptime(day, "%Y-%m-%d").date()
        monday = date.fromordinal(date.toordinal() - date.weekday())
        weeks[monday.isoformat()] += count
    return dict(weeks)
