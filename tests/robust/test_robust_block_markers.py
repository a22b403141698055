"""Block markers inside notes cannot end or open the day index's block (issue 25, defect 2).

Proves, through a real stdio server: notes whose descriptions hold the block's end or
start marker (alone, twice, on a line of their own in a hand-written note's YAML,
after a carriage return, U+2028 or NEL) are each listed on one line of the block, which keeps
exactly one start and one end marker, and every later note is listed too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from reme_mcp.storage.documents import BLOCK_END, BLOCK_START

DAY = "2026-11-28"
DESCRIPTIONS = (BLOCK_END, f"before {BLOCK_START} after", f"{BLOCK_END}\n{BLOCK_START}", "plain words")


def test_markers_in_descriptions_leave_the_block_whole(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = ws / "daily" / DAY
    folder.mkdir(parents=True)
    # Written by a person or another tool: YAML puts the markers on lines of their own.
    (folder / "by-hand.md").write_text(
        f'---\nname: by-hand\ndescription: "x\\n{BLOCK_END}\\r{BLOCK_START}\\u2028{BLOCK_END}\\x85y"\n---\nHand fact zqhand.\n',
        encoding="utf-8",
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "-w", str(ws)], env={**os.environ, "REME_TIMEZONE": "UTC"}
    )

    async def session() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for k, description in enumerate(DESCRIPTIONS):
                args = {"content": f"Marker fact {k} zqmk{k}.", "description": description, "date": DAY}
                assert not (await client.call_tool("remember", args)).is_error

    anyio.run(session)
    text = (ws / "daily" / f"{DAY}.md").read_bytes().decode("utf-8")
    lines = text.splitlines()  # every line break an editor or ReMe's reader may honour (\r, U+2028, ...)
    assert lines.count(BLOCK_START) == 1 and lines.count(BLOCK_END) == 1, text
    assert text.count(BLOCK_START) == 1 and text.count(BLOCK_END) == 1, text
    block = lines[lines.index(BLOCK_START) + 1 : lines.index(BLOCK_END)]
    listed = sorted(line.split("]]")[0][4:] for line in block)
    assert listed == sorted(f"daily/{DAY}/{p.name}" for p in folder.glob("*.md")), text
    assert len(listed) == len(DESCRIPTIONS) + 1
