"""The workspace's own disk failing under a real stdio server (issue 12).

Proves, through the MCP client and a real `reme-mcp` process: a workspace on a full
tmpfs makes `remember` answer one line naming the cause and what to do, leaves no
note, temp file or half-written day index behind, and keeps search answering; once
space is back, the retry with the same request_id stores the note exactly once. A
workspace on a read-only bind mount answers search, read and daily_list and refuses
`remember` in one line; a file where the `daily/` folder belongs is named as such.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from tests.conftest import DAY, make_reme_workspace

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts")]


def mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount {' '.join(args)} is not permitted here: {done.stderr.strip()}")


@asynccontextmanager
async def server(ws: Path, tmp: Path) -> AsyncIterator[Client]:
    env = {**os.environ, "REME_INDEX_DIR": str(tmp / "index-home"), "REME_TIMEZONE": "UTC"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp", "-w", str(ws)], env=env)
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


def text(result: Any) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


def everything(root: Path) -> dict[str, bytes]:
    """Every file's bytes, but the empty lock files that writers share (state, not memory)."""
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    return {path: data for path, data in files.items() if not path.startswith("metadata/reme-mcp/locks/")}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A ReMe workspace on its own 2 MB tmpfs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(ws))
    try:
        make_reme_workspace(ws)
        yield ws
    finally:
        subprocess.run(["umount", "-l", str(ws)], check=True)


def fill(folder: Path) -> Path:
    filler = folder / "filler.bin"  # not a memory file: never indexed
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


async def test_a_full_disk_loses_nothing_and_the_retry_stores_once(small_disk: Path, tmp_path: Path) -> None:
    ws = small_disk
    note = {"content": "The zqorca pod hunts at dawn.", "request_id": "disk-1", "date": DAY}
    async with server(ws, tmp_path) as client:
        assert not (await client.call_tool("search", {"query": "Go backend"})).is_error
        before = everything(ws)
        filler = fill(ws)
        failed = await client.call_tool("remember", note)
        line = text(failed)
        assert failed.is_error and "\n" not in line.strip(), line
        assert "the disk is full" in line and "free some space" in line, line
        after = everything(ws)
        after.pop("filler.bin")
        assert after == before  # no note, no temp file, the day index as it was
        found = await client.call_tool("search", {"query": "Go backend services"})
        assert not found.is_error and "go-backend" in text(found)

        filler.unlink()
        stored = await client.call_tool("remember", note)
        assert not stored.is_error, text(stored)
        again = await client.call_tool("remember", note)
        assert not again.is_error and again.structured_content["created"] is False  # type: ignore[index]
        hits = await client.call_tool("search", {"query": "zqorca"})
        assert text(hits).count("zqorca") >= 1
    notes = [p for p in (ws / "daily" / DAY).glob("*.md") if b"zqorca" in p.read_bytes()]
    assert len(notes) == 1
    assert not [p for p in ws.rglob("*") if ".tmp-" in p.name]


async def test_a_read_only_workspace_serves_and_refuses_writes_in_one_line(tmp_path: Path) -> None:
    ws = make_reme_workspace(tmp_path / "ws")
    mount("--bind", str(ws), str(ws))
    try:
        mount("-o", "remount,bind,ro", str(ws))
        before = everything(ws)
        async with server(ws, tmp_path) as client:
            found = await client.call_tool("search", {"query": "Go backend services"})
            assert not found.is_error and "go-backend" in text(found)
            read = await client.call_tool("read", {"path": f"daily/{DAY}/go-backend.md"})
            assert not read.is_error
            listed = await client.call_tool("daily_list", {"date": DAY})
            assert not listed.is_error and "go-backend" in text(listed)
            refused = await client.call_tool("remember", {"content": "The zqnarwhal has a tusk.", "date": DAY})
            line = text(refused)
            assert refused.is_error and "\n" not in line.strip() and "read-only" in line, line
        assert everything(ws) == before
    finally:
        subprocess.run(["umount", "-l", str(ws)], check=True)


async def test_a_file_where_the_daily_folder_belongs_is_named(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "daily").write_text("not a folder\n", encoding="utf-8")
    async with server(ws, tmp_path) as client:
        refused = await client.call_tool("remember", {"content": "The zqwalrus sleeps on ice.", "date": DAY})
        line = text(refused)
        assert refused.is_error and "\n" not in line.strip(), line
        assert "daily" in line and ("file where a folder belongs" in line or "not a folder" in line), line
        assert not (await client.call_tool("search", {"query": "zqwalrus"})).is_error
    assert (ws / "daily").read_text(encoding="utf-8") == "not a folder\n"
