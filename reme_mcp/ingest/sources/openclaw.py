"""OpenClaw: ~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite (or $OPENCLAW_STATE_DIR).

Table `transcript_events(session_id, seq, event_json, event_zstd, ...)`: one
Pi-shaped event per row (`session`, `message{role user|assistant|toolResult|custom}`).
Large events are stored zstd-compressed; without a zstd decoder they are skipped
and counted. The cursor is the table's rowid.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from reme_mcp.ingest.model import Tally, Turn
from reme_mcp.ingest.sources.base import home
from reme_mcp.ingest.sources.pi import pi_event
from reme_mcp.ingest.sources.sqlite_base import PAGE, SqliteSource


def _zstd() -> Callable[[bytes], bytes] | None:
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    decompress: Callable[[bytes], bytes] = zstandard.ZstdDecompressor().decompress
    return decompress


class OpenClaw(SqliteSource):
    name = "openclaw"
    host = "openclaw"
    parser_version = "openclaw/1 (transcript_events, OpenClaw 2026.x)"
    description = "OpenClaw"
    needed: ClassVar[dict[str, set[str]]] = {"transcript_events": {"session_id", "seq", "event_json"}}

    def default_location(self, env: Mapping[str, str]) -> Path:
        base = env.get("OPENCLAW_STATE_DIR")
        return Path(base) if base else home(env) / ".openclaw"

    def databases(self, location: Path) -> list[Path]:
        if location.suffix == ".sqlite":
            return [location] if location.is_file() else []
        real = location.resolve()
        found = sorted((location / "agents").glob("*/agent/openclaw-agent.sqlite"))
        return [db for db in found if db.resolve().is_relative_to(real)]

    def read_rows(
        self, conn: sqlite3.Connection, cursor: Any, tally: Tally
    ) -> tuple[list[tuple[str, str, Turn]], Any, int]:
        after = int(cursor) if isinstance(cursor, int) else 0
        columns = {row[1] for row in conn.execute("PRAGMA table_info(transcript_events)")}
        blob = "event_zstd" if "event_zstd" in columns else "NULL"
        decompress = _zstd()
        states: dict[str, dict[str, str]] = {}
        out: list[tuple[str, str, Turn]] = []
        size = 0
        while True:
            page = conn.execute(
                f"SELECT rowid, session_id, seq, event_json, {blob} FROM transcript_events "
                "WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (after, PAGE),
            ).fetchall()
            for row_id, session_id, seq, event_json, packed in page:
                after = row_id
                session = str(session_id)
                state = states.get(session)
                if state is None:
                    state = states[session] = self._header(conn, session, decompress)
                text = event_json
                if text is None and packed is not None:
                    if decompress is None:
                        tally.skipped["compressed events (no zstd decoder installed)"] += 1
                        continue
                    text = decompress(packed).decode("utf-8", "replace")
                size += len(text or "")
                event = _load(text)
                if event is None:
                    tally.skipped["malformed events"] += 1
                    continue
                if not event.get("id"):
                    event["id"] = f"{session}:{seq}"
                turn = pi_event(event, state, tally)
                if turn is not None:
                    out.append((session, state.get("project", ""), turn))
            if len(page) < PAGE:
                return out, after, size

    def _header(self, conn: sqlite3.Connection, session: str, decompress: Any) -> dict[str, str]:
        # The session's first event holds its cwd, read again so a resumed cursor still knows it.
        state: dict[str, str] = {}
        row = conn.execute(
            "SELECT event_json FROM transcript_events WHERE session_id = ? ORDER BY seq LIMIT 1", (session,)
        ).fetchone()
        event = _load(row[0]) if row and row[0] else None
        if event and event.get("type") == "session":
            pi_event(event, state, Tally())
        return state


def _load(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None
