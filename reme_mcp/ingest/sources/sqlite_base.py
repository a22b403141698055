"""Hosts that keep sessions in SQLite: read new rows past a row cursor, grouped by session."""

from __future__ import annotations

import sqlite3
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from reme_mcp.ingest.cursors import CursorBook
from reme_mcp.ingest.model import SessionBatch, Tally, Turn
from reme_mcp.ingest.rows import connect_ro, schema_problem
from reme_mcp.ingest.sources.base import Pending, Source

PAGE = 5000


class SqliteSource(Source):
    needed: ClassVar[dict[str, set[str]]]

    @abstractmethod
    def databases(self, location: Path) -> list[Path]: ...

    @abstractmethod
    def read_rows(
        self, conn: sqlite3.Connection, cursor: Any, tally: Tally
    ) -> tuple[list[tuple[str, str, Turn]], Any, int]:
        """New (session id, project, turn) after `cursor`, the cursor after them, and bytes read."""

    def units(self, location: Path) -> list[Path]:
        return self.databases(location)

    def problem(self, location: Path) -> str | None:
        dbs = self.databases(location)
        if not dbs:
            return f"{self.name}: no {self.description} database under {location}"
        for db in dbs:
            trouble = schema_problem(db, self.name, self.needed)
            if trouble:
                return trouble
        return None

    def batches(
        self, location: Path, units: list[Path], book: CursorBook, tally: Tally
    ) -> Iterator[tuple[SessionBatch, Pending | None]]:
        for db in units:
            if schema_problem(db, self.name, self.needed) is not None:
                tally.skipped["databases of an unknown version"] += 1
                continue
            key = str(db)
            stored = book.get(key)
            inode = db.stat().st_ino
            # A database replaced by another (restored, recreated) is read again from its start.
            same = isinstance(stored, dict) and stored.get("inode") == inode
            if isinstance(stored, dict) and not same:
                tally.skipped["databases replaced (read again)"] += 1
            cursor = stored.get("at") if same and isinstance(stored, dict) else None
            try:
                conn = connect_ro(db)
                try:
                    rows, after, size = self.read_rows(conn, cursor, tally)
                finally:
                    conn.close()
            except sqlite3.Error as exc:
                # Busy or mid-checkpoint: the next tick tries again from the same cursor.
                tally.skipped[f"database reads that failed ({exc.__class__.__name__})"] += 1
                continue
            sessions: dict[str, SessionBatch] = {}
            for session_id, project, turn in rows:
                batch = sessions.get(session_id)
                if batch is None:
                    batch = sessions[session_id] = SessionBatch(session_id, f"{db}#{session_id}", project)
                batch.turns.append(turn)
            ordered = list(sessions.values())
            if not ordered:
                if after != cursor or not same:
                    yield SessionBatch("", key, bytes_read=size), Pending(key, {"inode": inode, "at": after})
                continue
            ordered[0].bytes_read = size
            for batch in ordered[:-1]:
                yield batch, None
            yield ordered[-1], Pending(key, {"inode": inode, "at": after})
