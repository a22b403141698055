"""The last sync and its error, kept beside reme-mcp's other state for `doctor` (never shared)."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from typing import Any

from reme_mcp.storage.workspace import Workspace

STATUS = "team-sync.json"


def record(ws: Workspace, error: str | None, came_in: int = 0, went_out: int = 0) -> None:
    """Note this sync's outcome; a failure keeps the time of the last one that worked."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    previous = read(ws)
    state: dict[str, Any] = {"last_attempt": now, "error": error}
    if error is None:
        state.update(last_sync=now, came_in=came_in, went_out=went_out)
    else:
        state.update({k: v for k, v in previous.items() if k in ("last_sync", "came_in", "went_out")})
    with contextlib.suppress(OSError):  # a read-only workspace: the sync itself said why
        ws.write_atomic(ws.state_folder("sync") / STATUS, json.dumps(state), durable=False)


def read(ws: Workspace) -> dict[str, Any]:
    path = ws.state_dir / "sync" / STATUS
    if path.parent.is_symlink():
        return {}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in state.items() if isinstance(v, str | int) or v is None} if isinstance(state, dict) else {}


def summary(ws: Workspace) -> dict[str, Any] | str:
    """What `doctor` shows: the last sync and its error, or why there is none."""
    state = read(ws)
    if not state:
        if (ws.root / ".git").exists():
            return "never run here (reme-mcp sync)"
        return "off (not a git work tree; see reme-mcp sync --init REMOTE)"
    return {"last_sync": state.get("last_sync") or "never", **{k: v for k, v in state.items() if k != "last_sync"}}
