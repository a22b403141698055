"""The day index is a person's file too: merged, never overwritten blind (issue 12).

Proves, with real processes: a person saving `daily/<date>.md` over and over (by rename,
as editors do, and in place) while four processes `remember` loses none of the person's
lines, and the block ends up listing every note; the person's front matter (comments,
and a block that does not parse) is kept line for line, ReMe's name and description
added; block markers inside a note's
description or quoted in the person's prose neither corrupt the block nor move it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.notes.daily import BLOCK_END, BLOCK_START
from reme_mcp.ops.memory import Memory

WORKER = Path(__file__).with_name("robust_worker.py")
DAY = "2026-11-28"
WRITERS = 4
NOTES = 25
# Far more often than anyone saves a file, yet enough for the refresh to get a turn.
SAVE_EVERY = 0.02


def memory_for(ws: Path) -> Memory:
    return Memory(load_settings(workspace=str(ws), timezone="UTC"))


def start_writers(ws: Path, tmp: Path) -> tuple[list[subprocess.Popen[str]], Path]:
    go = tmp / "go"
    procs = []
    for w in range(WRITERS):
        ops = [
            {"op": "remember", "args": {"content": f"Writer {w} fact {k} zqw{w}n{k}.", "date": DAY}}
            for k in range(NOTES)
        ]
        plan = tmp / f"plan-{w}.json"
        plan.write_text(json.dumps({"start_file": str(go), "ops": ops}), encoding="utf-8")
        procs.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), str(ws), str(plan)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    return procs, go


def person_saves(target: Path, how: str, stop: threading.Event) -> list[str]:
    """Append a line to the day index and save, again and again, the way an editor would."""
    written: list[str] = []
    i = 0
    while not stop.is_set():
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = f"---\ndate: {DAY}\n---\n"
        line = f"person line {i}"
        text = text + ("" if text.endswith("\n") else "\n") + line + "\n"
        if how == "rename":
            tmp = target.with_name(f".{target.name}.~{i}")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)
        else:
            with target.open("r+" if target.exists() else "w", encoding="utf-8") as fh:
                fh.truncate(0)
                fh.write(text)
        written.append(line)
        i += 1
        time.sleep(SAVE_EVERY)
    return written


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "load"), [("rename", "quiet"), ("in place", "quiet"), ("in place", "busy")], indirect=["load"]
)
def test_a_person_saving_the_day_index_during_remembers_loses_nothing(tmp_path: Path, how: str, load: str) -> None:
    ws = tmp_path / "ws"
    (ws / "daily").mkdir(parents=True)
    target = ws / "daily" / f"{DAY}.md"
    procs, go = start_writers(ws, tmp_path)
    stop = threading.Event()
    saved: list[str] = []
    person = threading.Thread(target=lambda: saved.extend(person_saves(target, how, stop)))
    time.sleep(0.5)
    person.start()
    go.touch()
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        assert all("error" not in json.loads(line) for line in out.splitlines()), out
    stop.set()
    person.join()
    memory_for(ws).remember("The last fact zqlastone.", date=DAY)
    text = target.read_text(encoding="utf-8")
    lost = [line for line in saved if f"\n{line}\n" not in text]
    assert not lost, f"{len(lost)} of {len(saved)} person lines lost, e.g. {lost[:3]}"
    assert text.count(BLOCK_START) == 1 and text.count(BLOCK_END) == 1
    block = text[text.index(BLOCK_START) : text.index(BLOCK_END)]
    notes = sorted(p.name for p in (ws / "daily" / DAY).glob("*.md"))
    assert len(notes) == WRITERS * NOTES + 1
    assert all(f"{DAY}/{name[:-3]}" in block or name[:-3] in block for name in notes)


def test_front_matter_is_kept_byte_for_byte(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "daily").mkdir(parents=True)
    target = ws / "daily" / f"{DAY}.md"
    commented = f"---\n# my own comment\ndate: {DAY}   # trailing\nmood: fine\n---\nMy words.\n"
    target.write_text(commented, encoding="utf-8")
    memory = memory_for(ws)
    memory.remember("First fact zqfirst.", date=DAY)
    text = target.read_text(encoding="utf-8")
    # Every line of the person's front matter stays, in order; only ReMe's name and description are added.
    front = text[: text.index("\n---\n") + 5].split("\n")
    theirs = commented[: commented.index("My words.")].split("\n")
    assert [line for line in front if line in theirs] == theirs, front
    assert all(line in theirs or line.startswith(("name: ", "description: ")) for line in front), front
    assert "My words.\n" in text and "zqfirst" not in text.split(BLOCK_START)[0]

    broken = "---\nimportant: call Alice about the lease\n  : [ not yaml\n---\nStill mine.\n"
    target.write_text(broken, encoding="utf-8")
    memory.remember("Second fact zqsecond.", date=DAY)
    text = target.read_text(encoding="utf-8")
    assert text.startswith(broken), text[:200]


def test_block_markers_in_text_do_not_break_the_block(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "daily").mkdir(parents=True)
    target = ws / "daily" / f"{DAY}.md"
    prose = f"I noted that `{BLOCK_START}` and {BLOCK_END} are the markers.\nMore of my words.\n"
    target.write_text(f"---\ndate: {DAY}\n---\n{prose}", encoding="utf-8")
    memory = memory_for(ws)
    for k in range(4):
        memory.remember(f"Fact {k} zqmark{k}.", description=f"sneaky {BLOCK_END} {BLOCK_START} {k}", date=DAY)
    memory.finish()  # the burst's day index is written by its batch (daily.py)
    text = target.read_text(encoding="utf-8")
    assert prose in text  # the quoted markers were not taken for the block
    lines = text.split("\n")
    assert lines.count(BLOCK_START) == 1 and lines.count(BLOCK_END) == 1, text
    block = text[text.index(f"\n{BLOCK_START}\n") : text.index(f"\n{BLOCK_END}")]
    assert sum(1 for line in block.split("\n") if line.startswith("- ")) == 4, block
    listed = memory.daily_list(DAY)
    assert sum(len(day.notes) for day in listed.days) == 4
