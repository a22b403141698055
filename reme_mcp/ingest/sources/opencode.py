"""OpenCode: ~/.local/share/opencode/opencode.db (or $XDG_DATA_HOME/opencode).

Tables `session(id, directory, ...)`, `message(id, session_id, time_created,
time_updated, data)` and `part(id, message_id, session_id, data)`; `data` is JSON:
a message's role and times, a part's type (text, reasoning, tool, file, step-start...).
Parts are written while the reply streams, so an assistant message is imported once
it is completed (or has not changed for a while), and the cursor is the
(time_updated, id) of the last message imported.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from reme_mcp.ingest.model import Tally, Turn
from reme_mcp.ingest.sources.base import home
from reme_mcp.ingest.sources.blocks import iso_time, make_turn
from reme_mcp.ingest.sources.sqlite_base import PAGE, SqliteSource

# A reply not completed after this long will not be (the host died mid-stream).
_ABANDONED_MS = 10 * 60 * 1000
_PART_SCAFFOLD = frozenset({"step-start", "step-finish", "snapshot", "agent", "compaction", "subtask", "retry"})
_PART_DROPS = {"reasoning": "thinking", "tool": "tool calls", "file": "attachments", "patch": "tool calls"}


class OpenCode(SqliteSource):
    name = "opencode"
    host = "opencode"
    parser_version = "opencode/1 (opencode.db, OpenCode 1.x)"
    description = "OpenCode"
    needed: ClassVar[dict[str, set[str]]] = {
        "message": {"id", "session_id", "time_updated", "data"},
        "part": {"id", "message_id", "data"},
        "session": {"id"},
    }

    def default_location(self, env: Mapping[str, str]) -> Path:
        base = env.get("XDG_DATA_HOME")
        return (Path(base) if base else home(env) / ".local" / "share") / "opencode"

    def databases(self, location: Path) -> list[Path]:
        db = location if location.suffix == ".db" else location / "opencode.db"
        return [db] if db.is_file() else []

    def read_rows(
        self, conn: sqlite3.Connection, cursor: Any, tally: Tally
    ) -> tuple[list[tuple[str, str, Turn]], Any, int]:
        stamp, last_id = (int(cursor[0]), str(cursor[1])) if isinstance(cursor, list) and len(cursor) == 2 else (0, "")
        columns = {row[1] for row in conn.execute("PRAGMA table_info(session)")}
        directory = "s.directory" if "directory" in columns else "''"
        now_ms = int(time.time() * 1000)
        out: list[tuple[str, str, Turn]] = []
        size = 0
        while True:
            page = conn.execute(
                f"SELECT m.id, m.session_id, m.time_updated, m.data, {directory} FROM message m "
                "LEFT JOIN session s ON s.id = m.session_id "
                "WHERE m.time_updated > ? OR (m.time_updated = ? AND m.id > ?) "
                "ORDER BY m.time_updated, m.id LIMIT ?",
                (stamp, stamp, last_id, PAGE),
            ).fetchall()
            for message_id, session_id, updated, data, project in page:
                info = _json(data)
                role = info.get("role")
                raw_times = info.get("time")
                times: dict[str, Any] = raw_times if isinstance(raw_times, dict) else {}
                if role == "assistant" and not times.get("completed") and now_ms - int(updated or 0) < _ABANDONED_MS:
                    out.sort(key=lambda row: row[2].created_at)
                    return out, [stamp, last_id], size  # still streaming: wait for it
                stamp, last_id = int(updated or 0), str(message_id)
                if role not in ("user", "assistant"):
                    tally.skipped[f"unknown roles ({role})"] += 1
                    continue
                text = self._text(conn, str(message_id), tally)
                size += len(text)
                turn = make_turn(str(message_id), role, text, iso_time(times.get("created")), tally)
                if turn is not None:
                    out.append((str(session_id), str(project or ""), turn))
            if len(page) < PAGE:
                # A message's time_updated moves when its reply lands: a dialog reads in the order said.
                out.sort(key=lambda row: row[2].created_at)
                return out, [stamp, last_id], size

    def _text(self, conn: sqlite3.Connection, message_id: str, tally: Tally) -> str:
        parts: list[str] = []
        for (data,) in conn.execute("SELECT data FROM part WHERE message_id = ? ORDER BY id", (message_id,)):
            part = _json(data)
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                if part.get("synthetic") or part.get("ignored"):
                    tally.skipped["host-injected text"] += 1
                else:
                    parts.append(part["text"])
            elif kind in _PART_DROPS:
                tally.skipped[_PART_DROPS[kind]] += 1
            elif kind not in _PART_SCAFFOLD:
                tally.skipped[f"unknown parts ({kind})"] += 1
        return "\n".join(parts)


def _json(data: Any) -> dict[str, Any]:
    try:
        value = json.loads(data) if isinstance(data, str | bytes) else None
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
