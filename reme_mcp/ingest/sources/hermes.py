"""Hermes Agent: $HERMES_HOME/state.db (default ~/.hermes), tables `sessions` and `messages`.

`messages(id INTEGER PRIMARY KEY, session_id, role, content, tool_calls, tool_name,
timestamp REAL, ...)`: the row id is the native id and the cursor. Roles other than
user and assistant (tool, system) are dropped, as are assistant rows that only
call tools.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from reme_mcp.ingest.model import Tally, Turn
from reme_mcp.ingest.sources.base import home
from reme_mcp.ingest.sources.blocks import content_text, iso_time, make_turn
from reme_mcp.ingest.sources.sqlite_base import PAGE, SqliteSource


class Hermes(SqliteSource):
    name = "hermes"
    host = "hermes"
    parser_version = "hermes/1 (state.db schema versions up to 22)"
    description = "Hermes Agent"
    needed: ClassVar[dict[str, set[str]]] = {
        "messages": {"id", "session_id", "role", "content", "timestamp"},
        "sessions": {"id"},
    }

    def default_location(self, env: Mapping[str, str]) -> Path:
        base = env.get("HERMES_HOME")
        return Path(base) if base else home(env) / ".hermes"

    def databases(self, location: Path) -> list[Path]:
        db = location if location.suffix == ".db" else location / "state.db"
        return [db] if db.is_file() else []

    def read_rows(
        self, conn: sqlite3.Connection, cursor: Any, tally: Tally
    ) -> tuple[list[tuple[str, str, Turn]], Any, int]:
        after = int(cursor) if isinstance(cursor, int) else 0
        columns = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
        cwd = "s.cwd" if "cwd" in columns else "''"
        out: list[tuple[str, str, Turn]] = []
        size = 0
        while True:
            page = conn.execute(
                f"SELECT m.id, m.session_id, m.role, m.content, m.timestamp, {cwd} FROM messages m "
                "LEFT JOIN sessions s ON s.id = m.session_id WHERE m.id > ? ORDER BY m.id LIMIT ?",
                (after, PAGE),
            ).fetchall()
            for row_id, session_id, role, content, timestamp, project in page:
                after = row_id
                size += len(content or "")
                if role not in ("user", "assistant"):
                    known = {"tool": "tool results", "system": "system prompts", "developer": "system prompts"}
                    tally.skipped[known.get(role, f"unknown roles ({role})")] += 1
                    continue
                turn = make_turn(str(row_id), role, _text(content, tally), iso_time(timestamp), tally)
                if turn is not None:
                    out.append((str(session_id), str(project or ""), turn))
            if len(page) < PAGE:
                return out, after, size


def _text(content: Any, tally: Tally) -> str:
    if not isinstance(content, str):
        return ""
    if content.startswith("[{"):
        try:  # multimodal content is stored as a JSON list of parts
            return content_text(json.loads(content), tally)
        except ValueError:
            pass
    return content
