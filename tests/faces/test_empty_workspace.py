"""A new user's first search: a workspace with nothing indexable answers "no memory matched", never an error.

Each case runs the real `reme-mcp` server over stdio through the SDK client, with
its stderr kept, since the failure this guards against reached the caller only as
"Error executing tool search" with the traceback on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.anyio


def _no_folder(root: Path) -> None:
    assert not root.exists()


def _empty_folder(root: Path) -> None:
    root.mkdir()


def _empty_daily(root: Path) -> None:
    (root / "daily").mkdir(parents=True)
    (root / "daily/2026-11-28").mkdir()


def _only_binary(root: Path) -> None:
    # The query's word is in the bytes: a binary file must not match it, wherever it lies.
    body = b"\x89PNG\r\n\x1a\n\x00\x01 platypus \xff\xfe\x00" * 200
    for rel in ("photo.png", "daily/2026-11-28/scan.pdf", "daily/2026-11-28/blob", "session/archive.zip"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(body)


WORKSPACES: dict[str, Callable[[Path], None]] = {
    "no folder": _no_folder,
    "empty folder": _empty_folder,
    "empty daily": _empty_daily,
    "only binary files": _only_binary,
}

SEARCHES = [
    {"query": "platypus"},
    {"query": "鸭嘴兽 platypus", "limit": 50, "max_chars": 100},
    {"query": "platypus", "start_date": "2026-11-01", "end_date": "2026-11-30"},
    {"query": "platypus", "path_prefix": "daily/"},
]


@pytest.mark.parametrize("case", WORKSPACES)
async def test_search_on_a_workspace_without_memory_answers_no_match(case: str, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    WORKSPACES[case](root)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "reme_mcp", "--workspace", str(root)],
        env={**os.environ, "REME_TIMEZONE": "UTC"},
    )
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w", encoding="utf-8") as stderr:
        async with Client(stdio_client(params, errlog=stderr), read_timeout_seconds=60) as client:
            for arguments in SEARCHES:
                result = await client.call_tool("search", arguments)
                text = result.content[0].text  # type: ignore[union-attr]
                assert not result.is_error, f"{arguments}: {text}"
                assert result.structured_content is not None
                assert result.structured_content["results"] == []
                assert result.structured_content["total_hits"] == 0
                assert text.startswith("No memory matched"), text
    logged = stderr_path.read_text(encoding="utf-8")
    assert "Traceback" not in logged and "Error" not in logged, logged
    if case == "no folder":
        assert not root.exists(), "a search must not create the workspace"
