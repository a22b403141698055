"""The last sync and its error, kept beside reme-mcp's other state for `doctor` (never shared)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any

from reme_mcp.storage.batching import CommitBatcher
from reme_mcp.storage.workspace import Workspace

STATUS = "team-sync.json"


class SyncStatus:
    """One workspace's record of its last sync, in a process that syncs it.

    The record is derived from the syncs this process ran: one that cannot be written (a full
    disk, a read-only folder) is owed, and written by a batch as soon as it can be
    (storage/batching.py), so `doctor` does not keep showing the sync before it as the last.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._owed: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._batch = CommitBatcher(
            self._write_owed,
            lambda: int(self._owed is not None),
            idle=0.0,
            max_age=0.0,
            doing="recording the last sync for doctor",
            meanwhile="the sync's outcome is recorded as soon as the state folder can be written",
        )

    @property
    def owed(self) -> dict[str, Any] | None:
        """The record this process could not write yet, if any."""
        return self._owed

    def record(self, error: str | None, came_in: int = 0, went_out: int = 0) -> None:
        """Note this sync's outcome; a failure keeps the time of the last one that worked."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        state: dict[str, Any] = {"last_attempt": now, "error": error}
        if error is None:
            state.update(last_sync=now, came_in=came_in, went_out=went_out)
        else:
            previous = self.read()
            state.update({k: v for k, v in previous.items() if k in ("last_sync", "came_in", "went_out")})
        with self._lock:
            self._owed = state
        try:
            self._write_owed()
        except OSError:
            self._batch.wrote()

    def read(self) -> dict[str, Any]:
        """The last sync as this process knows it: its owed record, else the one on disk."""
        owed = self._owed
        return dict(owed) if owed is not None else read(self.ws)

    def _write_owed(self) -> None:
        with self._lock:
            state = self._owed
        if state is None:
            return
        self.ws.write_atomic(self.ws.state_folder("sync") / STATUS, json.dumps(state), durable=False)
        with self._lock:
            if self._owed is state:  # not replaced by a later sync's meanwhile
                self._owed = None


def read(ws: Workspace) -> dict[str, Any]:
    path = ws.state_dir / "sync" / STATUS
    if path.parent.is_symlink():
        return {}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in state.items() if isinstance(v, str | int) or v is None} if isinstance(state, dict) else {}


def summary(ws: Workspace, status: SyncStatus | None = None) -> dict[str, Any] | str:
    """What `doctor` shows: the last sync and its error, or why there is none."""
    state = status.read() if status is not None else read(ws)
    if not state:
        if (ws.root / ".git").exists():
            return "never run here (reme-mcp sync)"
        return "off (not a git work tree; see reme-mcp sync --init REMOTE)"
    return {"last_sync": state.get("last_sync") or "never", **{k: v for k, v in state.items() if k != "last_sync"}}
