"""A real process running memory operations, for the reliability tests (not a test module).

    python tests/robust/robust_worker.py WORKSPACE PLAN.json

The plan is a JSON object: {"start_file": path or null, "ops": [...]}; each op is
{"op": "remember", "args": {...}, "token": "..."} or {"op": "search", "query": "...", "expect": path or null}.
One JSON line goes to stdout after each op *returns* (an acknowledgement), so a
parent that SIGKILLs this process knows exactly which writes were acknowledged.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from reme_mcp import process
from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError
from reme_mcp.ops.memory import Memory


def main(workspace: str, plan_file: str) -> int:
    plan: dict[str, Any] = json.loads(Path(plan_file).read_text(encoding="utf-8"))
    process.ignore_lease_breaks()  # as `reme-mcp` does: the day index is replaced under a file lease
    memory = Memory(load_settings(workspace=workspace, timezone="UTC"))
    start = plan.get("start_file")
    while start and not Path(start).exists():  # all workers start together
        time.sleep(0.005)
    out = sys.stdout
    last_path: str | None = None
    for op in plan["ops"]:
        began = time.monotonic()
        try:
            if op["op"] == "remember":
                result = memory.remember(**op["args"])
                last_path = result.path
                # What the tests read of an answer: a line a call, small, so a pipe never fills.
                kept = result.model_dump(include={"path", "created", "duplicate_of", "day_index", "day_index_behind"})
                line: dict[str, Any] = {"op": "remember", "token": op.get("token"), **kept}
            else:
                found = memory.search(op["query"], limit=10)
                paths = [hit.path for hit in found.results]
                if op.get("expect") == "$last":
                    op["expect"] = last_path
                line = {"op": "search", "query": op["query"], "paths": paths, "expect": op.get("expect")}
                missing = [p for p in paths if not (memory.ws.root / p).is_file()]
                if missing:
                    line["error"] = f"search pointed at missing files: {missing}"
                elif op.get("expect") and op["expect"] not in paths:
                    line["error"] = f"search for {op['query']!r} did not find {op['expect']}"
        except ReMeError as exc:
            line = {"op": op["op"], "token": op.get("token"), "error": f"ReMeError: {exc}"}
        except Exception as exc:
            line = {"op": op["op"], "token": op.get("token"), "error": f"{exc!r}", "trace": traceback.format_exc()}
        line["seconds"] = round(time.monotonic() - began, 4)
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()
    memory.finish()  # as a server does when its client leaves: what waits for a batch is written
    return 0


def read_loop(workspace: str, stop_file: str) -> int:
    """Read every note and day index over and over while writers run; report anything half-written."""
    root = Path(workspace)
    checks, problems = 0, []
    while not Path(stop_file).exists():
        for day_index in sorted((root / "daily").glob("*.md")):
            try:
                text = day_index.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            checks += 1
            if not text.startswith("---\n") or "<!-- notes:auto -->" not in text or "<!-- /notes:auto -->" not in text:
                problems.append(f"half-written day index {day_index.name}: {text[:80]!r}")
        for note in sorted((root / "daily").glob("*/*.md")):
            try:
                text = note.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            checks += 1
            _, sep, body = text.partition("\n---\n")
            if not text.startswith("---\n") or not sep or not body.strip() or not text.endswith("\n"):
                problems.append(f"half-written note {note.name}: {text[:80]!r}")
        time.sleep(0.01)
    print(json.dumps({"checks": checks, "problems": problems[:20]}))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--reader":
        sys.exit(read_loop(sys.argv[2], sys.argv[3]))
    sys.exit(main(sys.argv[1], sys.argv[2]))
