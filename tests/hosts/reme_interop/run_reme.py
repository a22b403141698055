"""Run the real ReMe's daily-note code for tests/hosts/test_reme_interop.py.

Executed by the Python of ReMe's own virtual environment (reme-ai 0.4.2.0), never
imported by reme-mcp: ReMe pins fastmcp 3.x, which cannot share an environment
with our `mcp` 2.x. It serves JSON requests, one per line on stdin, and answers one
JSON line each on stdout, so the test pays ReMe's slow import (its package
`__init__` builds the whole app registry) once per session, not once per call.

Request:  {"op": "<name>", ...arguments}
Answer:   {"ok": true, "result": ...} or {"ok": false, "error": "<traceback>"}

Every op calls ReMe's code as it ships: no patching, no re-implementation.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The protocol owns the real stdout; anything ReMe prints or logs goes to stderr.
_PROTOCOL = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
sys.stdout = sys.stderr

import frontmatter  # noqa: E402  (after the stdout swap, like every import that may log)
import reme  # noqa: E402
from reme.components import ApplicationContext  # noqa: E402
from reme.components.file_store import LocalFileStore  # noqa: E402
from reme.enumeration import ComponentEnum  # noqa: E402
from reme.steps.file_io._daily_index import refresh_day_index, scan_notes  # noqa: E402
from reme.steps.file_io._path import validate_filename_component  # noqa: E402
from reme.steps.file_io.daily_write import DailyWriteStep  # noqa: E402

DAILY_DIR = "daily"


def _app(workspace: str) -> ApplicationContext:
    """The minimal application context ReMe's own daily-step tests build."""
    return ApplicationContext(workspace_dir=workspace, timezone="Asia/Shanghai")


async def _with_store(workspace: str, run: Callable[[ApplicationContext, LocalFileStore], Any]) -> Any:
    """Run with ReMe's LocalFileStore registered as the app's file store.

    The store is not started: the daily code uses only its `workspace_path`, and
    starting it would resolve its index components from a full app we do not build.
    """
    app = _app(workspace)
    store = LocalFileStore(name="interop", embedding_store="", app_context=app)
    app.components[ComponentEnum.FILE_STORE] = {"default": store}
    return await run(app, store)


def op_version() -> dict[str, str]:
    return {"reme": reme.__version__, "frontmatter": getattr(frontmatter, "__version__", "?")}


def op_scan(workspace: str, date: str) -> list[dict[str, Any]]:
    """ReMe's scan_notes: the notes of a day as ReMe parses them."""
    notes: list[dict[str, Any]] = scan_notes(Path(workspace), date, DAILY_DIR)
    return notes


def op_refresh(workspace: str, date: str) -> dict[str, Any]:
    """ReMe's refresh_day_index on one day, through a real LocalFileStore."""

    async def run(_app: ApplicationContext, store: LocalFileStore) -> Any:
        return await refresh_day_index(store, date, DAILY_DIR)

    return asyncio.run(_with_store(workspace, run))


def op_daily_write(workspace: str, **params: Any) -> dict[str, Any]:
    """ReMe's daily_write step: write_step for the note, then refresh_day_index."""

    async def run(app: ApplicationContext, _store: LocalFileStore) -> Any:
        step = DailyWriteStep(app_context=app)
        await step(**params)
        assert step.context is not None
        response = step.context.response
        return {"success": response.success, "answer": response.answer, "metadata": response.metadata}

    return asyncio.run(_with_store(workspace, run))


def op_validate(names: list[str]) -> list[str | None]:
    """ReMe's validate_filename_component: None when accepted, else its error."""
    return [validate_filename_component(name, kind="name") for name in names]


OPS: dict[str, Callable[..., Any]] = {
    "version": op_version,
    "scan": op_scan,
    "refresh": op_refresh,
    "daily_write": op_daily_write,
    "validate": op_validate,
}


def main() -> None:
    _PROTOCOL.write(json.dumps({"ok": True, "result": "ready"}) + "\n")
    _PROTOCOL.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            answer = {"ok": True, "result": OPS[request.pop("op")](**request)}
        except Exception:
            answer = {"ok": False, "error": traceback.format_exc()}
        # Front matter may hold dates; they cross as ISO strings.
        _PROTOCOL.write(json.dumps(answer, ensure_ascii=False, default=str) + "\n")
        _PROTOCOL.flush()


if __name__ == "__main__":
    main()
