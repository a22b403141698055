"""What a source hands the writer: sessions of kept turns, and counts of what was skipped."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Turn:
    """One kept message: user or assistant text, already cleaned and redacted."""

    native_id: str
    role: str
    text: str
    created_at: str


@dataclass
class SessionBatch:
    """New turns of one source session since its cursor (possibly none)."""

    session_id: str
    source_path: str
    project: str = ""
    turns: list[Turn] = field(default_factory=list)
    bytes_read: int = 0


@dataclass
class Tally:
    """What a run saw: sessions and messages imported, and why others were left out."""

    sessions: int = 0
    messages: int = 0
    bytes_read: int = 0
    first: str = ""
    last: str = ""
    skipped: Counter[str] = field(default_factory=Counter)

    def add_turn(self, turn: Turn) -> None:
        self.messages += 1
        if turn.created_at:
            if not self.first or turn.created_at < self.first:
                self.first = turn.created_at
            if turn.created_at > self.last:
                self.last = turn.created_at

    def merge(self, other: Tally) -> None:
        """Add what another pass (a worker's share) saw."""
        self.sessions += other.sessions
        self.messages += other.messages
        self.bytes_read += other.bytes_read
        if other.first and (not self.first or other.first < self.first):
            self.first = other.first
        self.last = max(self.last, other.last)
        self.skipped.update(other.skipped)

    def line(self) -> str:
        span = f", {self.first[:10]} to {self.last[:10]}" if self.first else ""
        text = f"{self.sessions} session(s), {self.messages} message(s){span}, {self.bytes_read} bytes read"
        if self.skipped:
            text += "; skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        return text


@dataclass(frozen=True)
class Filters:
    since: str = ""  # YYYY-MM-DD: only messages from that day on
    project: str = ""  # only sessions whose working folder is this one or inside it

    @property
    def active(self) -> bool:
        return bool(self.since or self.project)

    def keeps_session(self, batch: SessionBatch) -> bool:
        if not self.project:
            return True
        if not batch.project:
            return False
        project = Path(batch.project)
        wanted = Path(self.project)
        return project == wanted or project.is_relative_to(wanted)
