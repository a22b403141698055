"""A dead writer's temp files (`.<name>.md.tmp-<hex>`) are swept, and a live writer's never are.

The writer is reme-mcp's own (storage.temp_files, as `remember` and the day index use it) in a
process of its own, killed with SIGKILL between writing and renaming; the sweep is a real
`reme-mcp` server starting on the workspace, driven by the MCP client.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from reme_mcp.storage.temp_files import STILL_SECONDS

pytestmark = [pytest.mark.anyio, pytest.mark.integration]
DAY = "2026-11-28"
# A writer that has written its temp file and stops before renaming it, until it is killed.
WRITER = """
import sys, time
from pathlib import Path
from reme_mcp.storage import temp_files
temp = temp_files.Temp(Path(sys.argv[1]))
temp_files.os.write(temp.fd, b"---\\nname: half\\n---\\nhalf written\\n")
print(temp.path, flush=True)
time.sleep(600)
"""


def _writer(target: Path) -> tuple[subprocess.Popen[str], Path]:
    target.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


async def _serve_until_gone(ws: Path, *temps: Path) -> None:
    """A server started on the workspace, serving until these temp files are gone (or 30 s)."""
    env = {**os.environ, "REME_TIMEZONE": "UTC"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp", "-w", str(ws)], env=env)
    async with Client(params, read_timeout_seconds=60) as client:
        await client.list_tools()
        await client.call_tool("search", {"query": "half"})
        deadline = time.monotonic() + 30
        while any(temp.exists() for temp in temps) and time.monotonic() < deadline:
            await anyio.sleep(0.1)  # the warm-up sweeps beside the first answers


@pytest.mark.parametrize("load", ["quiet", "busy"], indirect=True)
async def test_a_killed_writers_temp_files_go_at_the_next_start_and_a_live_writers_stay(
    tmp_path: Path, load: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "daily" / DAY).mkdir(parents=True)
    alive, alive_temp = _writer(ws / "daily" / DAY / "slow.md")
    dead_note, note_temp = _writer(ws / "daily" / DAY / "killed.md")
    dead_index, index_temp = _writer(ws / "daily" / f"{DAY}.md")
    try:
        for proc in (dead_note, dead_index):
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        # An hour old by its clock, but its writer still holds it: it stays.
        _age(alive_temp, 3600)
        time.sleep(STILL_SECONDS + 0.5)
        assert note_temp.exists() and index_temp.exists()
        await _serve_until_gone(ws, note_temp, index_temp)
        assert not note_temp.exists() and not index_temp.exists()
        assert alive_temp.exists()
    finally:
        alive.kill()
        alive.wait(timeout=10)
    # Now its writer is gone too.
    time.sleep(STILL_SECONDS + 0.5)
    await _serve_until_gone(ws, alive_temp)
    assert not alive_temp.exists()
