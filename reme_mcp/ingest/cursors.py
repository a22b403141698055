"""Where each source's import stopped: derived state under metadata/ingest/.

Deleting a cursor file is always safe: the next run reads the source again and
the writer's per-message ids skip what was already imported.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from reme_mcp.storage.workspace import Workspace

FORMAT = 1
# How often a long pass saves its cursors, in seconds: a kill costs at most this much re-reading.
SAVE_EVERY = 5.0


class CursorBook:
    """The cursors of one source: a key (a log file, a table) to a small JSON value."""

    def __init__(self, ws: Workspace, source: str, *, load: bool = True) -> None:
        self.ws = ws
        self.source = source
        self.path = ws.state_dir / "ingest" / f"{source}.json"
        self.entries: dict[str, Any] = {}
        self.location = ""
        self.updated = 0.0
        self.dirty = False
        if load:
            self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("cursors"), dict):
            self.entries = data["cursors"]
            self.location = str(data.get("location") or "")
            self.updated = float(data.get("updated") or 0)

    def get(self, key: str) -> Any:
        return self.entries.get(key)

    def set(self, key: str, value: Any) -> None:
        self.entries[key] = value
        self.dirty = True

    def save(self, location: Path) -> None:
        if not self.dirty and self.location == str(location):
            return
        self.location = str(location)
        self.updated = time.time()
        payload = {"format": FORMAT, "source": self.source, "location": self.location, "updated": self.updated}
        payload["cursors"] = self.entries
        self.ws.write_atomic(self.path, json.dumps(payload, ensure_ascii=False), durable=False)
        self.dirty = False


def cursor_summary(ws: Workspace) -> dict[str, dict[str, Any]]:
    """Each source's cursor file, for `doctor`: where it reads and when it last moved."""
    folder = ws.state_dir / "ingest"
    report: dict[str, dict[str, Any]] = {}
    if not folder.is_dir():
        return report
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            report[path.stem] = {"cursors": "unreadable (rebuilt on the next run)"}
            continue
        if not isinstance(data, dict):
            continue
        updated = float(data.get("updated") or 0)
        report[path.stem] = {
            "location": data.get("location", ""),
            "tracked": len(data.get("cursors") or {}),
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(updated)) if updated else "",
        }
    return report
