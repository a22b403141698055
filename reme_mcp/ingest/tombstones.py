"""Ingested sessions a person forgot: the importer never writes them again.

`reme-mcp forget` takes a dialog out of the workspace, but the host still holds its log, so
the next backfill (or a lost cursor) would import it again. Forgetting leaves a mark here that
the importer checks before it writes a session. A mark is a hash of the dialog's workspace path
(which names the host, the session and where its log was), so the marks do not say what was
forgotten. They live under metadata/ beside the cursors but, unlike the cursors, are not derived
state: deleting the file lets forgotten sessions come back with the next import.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable

from reme_mcp.storage.workspace import Workspace

FOLDER = "forgotten"
FILE = "sessions.json"


def mark(rel: str) -> str:
    """The mark of a dialog's workspace-relative path."""
    return hashlib.sha256(rel.encode("utf-8", "surrogatepass")).hexdigest()


class Tombstones:
    """The marks of one workspace, read again whenever the file changed (a server follows logs
    while a person forgets in another process)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.path = ws.state_dir / FOLDER / FILE
        self._seen: tuple[int, int, int] | None = None
        self._marks: frozenset[str] = frozenset()

    def buried(self, rel: str) -> bool:
        """Whether the dialog at `rel` was forgotten."""
        self._reload()
        return mark(rel) in self._marks

    def bury(self, rels: Iterable[str]) -> None:
        """Mark these dialogs forgotten; call under the workspace's write lock."""
        self._reload()
        marks = self._marks | {mark(rel) for rel in rels}
        if marks == self._marks:
            return
        folder = self.ws.state_folder(FOLDER)
        self.ws.write_atomic(folder / FILE, json.dumps({"format": 1, "marks": sorted(marks)}))
        self._seen, self._marks = None, frozenset(marks)

    def _reload(self) -> None:
        try:
            st = os.stat(self.path)
        except OSError:
            self._seen, self._marks = None, frozenset()
            return
        seen = (st.st_ino, st.st_size, st.st_mtime_ns)
        if seen == self._seen:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # a torn or foreign file: keep what was read before
        marks = data.get("marks") if isinstance(data, dict) else None
        if isinstance(marks, list):
            self._marks = frozenset(m for m in marks if isinstance(m, str))
            self._seen = seen
