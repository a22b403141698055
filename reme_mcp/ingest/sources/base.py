"""What every source provides, and the shared reading of JSONL-per-session logs.

A source names its default location, says in one line what is wrong with a
location (missing, unreadable, unknown version), and yields sessions of new
turns past its cursors. Parsers are tolerant: an event they do not know is
skipped and counted, never an error.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from reme_mcp.ingest.cursors import CursorBook
from reme_mcp.ingest.model import SessionBatch, Tally, Turn
from reme_mcp.ingest.tail import FileCursor, iter_files, read_new_lines, unchanged


class Pending:
    """A cursor to store once its batch is written (never in a dry run)."""

    def __init__(self, key: str, value: Any) -> None:
        self.key = key
        self.value = value


class Source(ABC):
    name: str  # what a person types: claude-code
    host: str  # the folder under session/dialog/: claude_code
    parser_version: str
    description: str

    @abstractmethod
    def default_location(self, env: Mapping[str, str]) -> Path: ...

    @abstractmethod
    def problem(self, location: Path) -> str | None:
        """One line saying why `location` cannot be read, or None."""

    @abstractmethod
    def units(self, location: Path) -> list[Path]:
        """The files to read (log files, or the one database), for progress and counts."""

    @abstractmethod
    def batches(
        self, location: Path, units: list[Path], book: CursorBook, tally: Tally
    ) -> Iterator[tuple[SessionBatch, Pending | None]]: ...


def home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


class JsonlSource(Source):
    """A host that writes one append-only JSONL file per session."""

    @abstractmethod
    def parse(self, event: dict[str, Any], state: dict[str, str], tally: Tally) -> Turn | None:
        """The kept turn in one event, or None; may record session facts in `state`."""

    def session_of(self, path: Path, state: dict[str, str]) -> str:
        return state.get("session_id") or path.stem

    def problem(self, location: Path) -> str | None:
        if not location.exists():
            return f"{self.name}: no session logs at {location} (is {self.description} installed and used?)"
        if not location.is_dir() or not os.access(location, os.R_OK | os.X_OK):
            return f"{self.name}: {location} is not a readable folder"
        return None

    def units(self, location: Path) -> list[Path]:
        return list(iter_files(location))

    def batches(
        self, location: Path, units: list[Path], book: CursorBook, tally: Tally
    ) -> Iterator[tuple[SessionBatch, Pending | None]]:
        for path in units:
            key = str(path)
            cursor = FileCursor.from_json(book.get(key))
            if unchanged(path, cursor):
                continue
            try:
                reading = read_new_lines(path, cursor)
            except OSError as exc:
                tally.skipped[f"unreadable log ({exc.__class__.__name__})"] += 1
                continue
            if reading.restarted:
                tally.skipped["logs truncated or replaced (read again)"] += 1
            state = reading.cursor.state
            turns: list[Turn] = []
            for raw in reading.lines:
                turn = self._parse_line(raw, state, tally)
                if turn is not None:
                    turns.append(turn)
            batch = SessionBatch(
                session_id=self.session_of(path, state),
                source_path=key,
                project=state.get("project", ""),
                turns=turns,
                bytes_read=reading.bytes_read,
            )
            yield batch, Pending(key, reading.cursor.to_json())

    def _parse_line(self, raw: bytes, state: dict[str, str], tally: Tally) -> Turn | None:
        if not raw.strip():
            return None
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            tally.skipped["malformed lines"] += 1
            return None
        if not isinstance(event, dict):
            tally.skipped["malformed lines"] += 1
            return None
        if state.get("unknown_version"):
            tally.skipped["events of an unknown format version"] += 1
            return None
        return self.parse(event, state, tally)
