"""Secrets `remember` refused, counted by kind for `doctor` and the memory page: never a value.

Kept beside the workspace's index, in the person's private folder, not in the workspace: a
refused write leaves nothing in the memory, and a workspace that was never written stays unmade.
"""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reme_mcp.storage.files import write_whole

FILE = "refused-secrets.json"


def record(folder: Path, kind: str) -> None:
    """Count one refusal of `kind` (best effort: a count is not worth failing an answer for)."""
    with contextlib.suppress(OSError, ValueError):
        held = _read(folder)
        kinds = held.get("kinds", {})
        kinds[kind] = int(kinds.get(kind, 0)) + 1
        held = {"kinds": kinds, "last": datetime.now(UTC).isoformat(timespec="seconds")}
        write_whole(folder / FILE, json.dumps(held), durable=False)


def summary(folder: Path) -> dict[str, Any] | str:
    """What doctor shows: the count by kind and the last time, or "none"."""
    try:
        held = _read(folder)
    except (OSError, ValueError):
        return "none"
    kinds = {str(k): int(v) for k, v in held.get("kinds", {}).items()}
    if not kinds:
        return "none"
    return {"total": sum(kinds.values()), "by_kind": kinds, "last": str(held.get("last", ""))}


def _read(folder: Path) -> dict[str, Any]:
    path = folder / FILE
    if not path.exists():
        return {}
    data = json.loads(path.read_text("utf-8"))
    return data if isinstance(data, dict) else {}
