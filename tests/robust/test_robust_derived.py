"""Derived files after a refused or failed step: back in line with the notes in the same process (issue 50).

Proves, through the MCP client and one real `reme-mcp` stdio process on a real 2 MB tmpfs:
notes stored, the disk filled, a `remember` refused, then a `remember` with each count of free
pages from 0 to 6: every error leaves no note behind and names the full disk, every success is
found by `search` at once. `doctor`, run beside the server while the disk is full, names the
day index that is behind; once space is back and a note is written on each day, every day
index lists exactly its notes within 2 s, without a restart, and `doctor` says nothing is behind.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from reme_mcp.ops.reports import IN_LINE
from tests.conftest import DAY
from tests.robust.test_robust_day_index_crash import listed, on_disk
from tests.robust.test_robust_disk import server, small_disk, text

__all__ = ["small_disk"]  # the fixture, used by name

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts")]

NEXT_DAY = "2026-11-29"
PAGE = 4096
CAUGHT_UP_WITHIN = 2.0  # seconds after the last write


def leave_free(folder: Path, pages: int) -> Path:
    """Fill the file system `folder` is on, then free exactly `pages` pages of it."""
    filler = folder / "metadata" / "filler.bin"  # not memory: never walked, never indexed
    filler.parent.mkdir(exist_ok=True)
    for _ in range(2):  # again after a moment: a page the server's retry held meanwhile is taken too
        with open(filler, "ab", buffering=0) as fh:
            try:
                while True:
                    fh.write(b"\0" * PAGE)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        time.sleep(0.05)
    os.truncate(filler, max(0, filler.stat().st_size - pages * PAGE))
    return filler


def doctor(ws: Path, tmp: Path) -> dict[str, Any]:
    env = {**os.environ, "REME_INDEX_DIR": str(tmp / "index-home"), "REME_TIMEZONE": "UTC"}
    done = subprocess.run(
        [sys.executable, "-m", "reme_mcp", "doctor", "-w", str(ws), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def days(ws: Path) -> list[str]:
    """The days that have a day index."""
    return sorted(p.stem for p in (ws / "daily").glob("*.md"))


def in_line(ws: Path) -> bool:
    return all(sorted(listed(ws, day)) == on_disk(ws, day) for day in days(ws))


def notes_holding(ws: Path, token: str) -> list[Path]:
    return [p for p in (ws / "daily").rglob("*.md") if token in p.read_text(encoding="utf-8", errors="replace")]


def test_a_full_disk_leaves_every_derived_file_in_line_in_the_same_server(small_disk: Path, tmp_path: Path) -> None:
    ws = small_disk
    outcomes: dict[int, str] = {}

    async def session() -> None:
        async with server(ws, tmp_path) as client:
            for k in range(3):  # a burst: the day index waits for its batch
                done = await client.call_tool("remember", {"content": f"Before fact {k} zqbf{k}.", "date": DAY})
                assert not done.is_error, text(done)
            filler = leave_free(ws, 0)
            refused = await client.call_tool("remember", {"content": "Refused fact zqrefused.", "date": DAY})
            assert refused.is_error and "the disk is full" in text(refused), text(refused)
            assert not notes_holding(ws, "zqrefused")
            await anyio.sleep(2.5)  # the batch met the full disk: the day index is behind
            assert not in_line(ws)
            behind = doctor(ws, tmp_path)["behind"]
            assert isinstance(behind, dict) and f"daily/{DAY}.md" in behind, behind

            for pages in range(7):
                filler.unlink()
                filler = leave_free(ws, pages)
                token = f"zqpage{pages}x"
                day = NEXT_DAY if pages == 1 else f"2026-12-{pages + 10}"  # each day's first note
                done = await client.call_tool("remember", {"content": f"Page fact {token}.", "date": day})
                said = text(done)
                if done.is_error:
                    assert "\n" not in said.strip() and "the disk is full" in said, said
                    assert not notes_holding(ws, token), f"{pages} pages: an error left its note behind"
                    outcomes[pages] = "refused"
                    continue
                found = await client.call_tool("search", {"query": token})
                hits = (found.structured_content or {}).get("results", [])
                assert [h["path"] for h in hits][:1] == [done.structured_content["path"]], (pages, said)  # type: ignore[index]
                outcomes[pages] = "stored, day index behind" if "caught up" in said else "stored"

            filler.unlink()
            for day in (DAY, NEXT_DAY):
                done = await client.call_tool("remember", {"content": f"After fact zqafter {day}.", "date": day})
                assert not done.is_error, text(done)
            wrote = time.monotonic()
            while not in_line(ws) and time.monotonic() - wrote < CAUGHT_UP_WITHIN:
                await anyio.sleep(0.05)
            assert len(days(ws)) >= 7
            for day in days(ws):
                assert sorted(listed(ws, day)) == on_disk(ws, day), (
                    f"{day} behind {CAUGHT_UP_WITHIN} s after the last write"
                )
            deadline = time.monotonic() + 5
            while (report := doctor(ws, tmp_path))["behind"] != IN_LINE and time.monotonic() < deadline:
                await anyio.sleep(0.2)
            assert report["behind"] == IN_LINE, report["behind"]

    anyio.run(session)
    assert outcomes.get(0) == "refused" and "stored, day index behind" in outcomes.values(), outcomes
