"""Write imported turns as canonical ReMe session dialogs: session/dialog/<host>/<name>.jsonl.

One file per source session, one AgentScope message per line. The file name is the
session's native id made safe, plus a hash of where it came from, so two hosts or two
copies of a log never share a file. Each line keeps its native id, so a rerun (or a
lost cursor) appends nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from reme_mcp.ingest.model import SessionBatch, Turn
from reme_mcp.storage.file_names import legal_name
from reme_mcp.storage.text import json_escaped
from reme_mcp.storage.workspace import Workspace

DIALOG_DIR = "session/dialog"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def dialog_name(session_id: str, origin: str) -> str:
    """A safe, collision-free file name: the native id (cleaned, bounded) and a hash of the origin."""
    stem = _UNSAFE.sub("-", session_id).strip(".-")[:80] or "session"
    digest = hashlib.sha256(f"{origin}\n{session_id}".encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return legal_name(f"{stem}-{digest}.jsonl", "session")


def message_line(turn: Turn, batch: SessionBatch, source: str) -> str:
    meta: dict[str, str] = {"source": source, "session_id": batch.session_id, "native_id": turn.native_id}
    meta["source_path"] = batch.source_path
    if batch.project:
        meta["project"] = batch.project
    record = {
        "id": turn.native_id,
        "name": turn.role,
        "role": turn.role,
        "content": [{"type": "text", "text": turn.text}],
        "metadata": meta,
        "created_at": turn.created_at,
    }
    return json_escaped(json.dumps(record, ensure_ascii=False)) + "\n"


def imported_ids(path: Path) -> set[str]:
    """The native ids already in a dialog file (broken lines are skipped)."""
    ids: set[str] = set()
    try:
        data = path.read_bytes()
    except OSError:
        return ids
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            meta = obj.get("metadata")
            native = meta.get("native_id") if isinstance(meta, dict) else None
            ids.add(str(native if native is not None else obj.get("id")))
    return ids


class DialogWriter:
    """Appends a source's sessions under session/dialog/<host>/, never outside the workspace."""

    def __init__(self, ws: Workspace, host: str, source: str) -> None:
        self.ws = ws
        self.host = host
        self.source = source

    def target(self, batch: SessionBatch) -> Path:
        rel = f"{DIALOG_DIR}/{self.host}/{dialog_name(batch.session_id, batch.source_path)}"
        # contained_path resolves links: a symlinked folder pointing out is refused here.
        return self.ws.contained_path(rel)

    def new_turns(self, batch: SessionBatch, target: Path) -> list[Turn]:
        seen = imported_ids(target) if target.exists() else set()
        fresh: list[Turn] = []
        for turn in batch.turns:
            if turn.native_id not in seen:
                seen.add(turn.native_id)
                fresh.append(turn)
        return fresh

    def append(self, batch: SessionBatch, turns: list[Turn], target: Path) -> None:
        if not turns:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(message_line(turn, batch, self.source) for turn in turns).encode("utf-8")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(target) != b"\n":
                data = b"\n" + data  # a line cut by a crash stays broken, never glued to the next
            while data:
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1)
