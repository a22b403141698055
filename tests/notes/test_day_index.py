"""The day index: rendered from what it was made of, refreshed in batches in a burst, caught up after a crash.

A refresh that reuses what it last put in the file must write exactly what a refresh
from the file's text would (checked against that plain path on many layouts); a
burst of remembers on one day refreshes the file a few times, not once per note,
and it lists every note once the burst ends, when the server ends, and after a
process that died mid-burst, at the next process's warm-up.
"""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from reme_mcp.config import load_settings
from reme_mcp.notes.day_index import DayIndexFile, layout, render
from reme_mcp.notes.day_notes import DayNotes, NoteInfo
from reme_mcp.ops.memory import Memory
from reme_mcp.storage.workspace import Workspace
from tests.conftest import render_day_index

DAY = "2026-11-28"

EXISTING = [
    "",
    "Only a person's line, no front matter.\n",
    "---\nname: '2026-11-28'\ndescription: 2 note(s) today.\n---\n\n<!-- notes:auto -->\n(none)\n<!-- /notes:auto -->",
    "---\n# a person's comment\ndescription: >\n  folded\n  over lines\ntags: [a, b]\n---\nTop text.\n\n"
    "<!-- notes:auto -->\n- old line\n<!-- /notes:auto -->\n\nText after the block.\n",
    "---\nname: custom\n---\nno description, a block quoted `<!-- notes:auto -->` in a sentence\n",
    "---\n: : not yaml [\n---\nbroken front matter is kept whole\n",
    "---\ndescription: 5 note(s) today.\n---\n",
    "---\nname: x\ndescription: x\n...\nbody after a YAML end marker\n<!-- /notes:auto -->\n",
]


def notes(count: int) -> list[NoteInfo]:
    return [NoteInfo(f"daily/{DAY}/n{i}.md", {"name": f"n{i}", "description": f"note {i}"}) for i in range(count)]


@pytest.mark.parametrize("existing", EXISTING)
def test_rendering_from_the_parts_it_was_made_of_is_rendering_from_its_text(existing: str) -> None:
    for first, then in itertools.product(range(3), range(4)):
        made = render(DAY, notes(first), layout(existing))
        assert render(DAY, notes(then), layout(existing)) == render_day_index(DAY, notes(then), made)
    assert render(DAY, notes(2), None) == render_day_index(DAY, notes(2), render_day_index(DAY, notes(1), None))


def test_the_block_descriptions_are_written_as_pyyaml_writes_them() -> None:
    for count in [*range(0, 120), 999, 1000, 12345]:
        description = f"{count} note(s) today." if count else "No notes today."
        text = render(DAY, notes(count), None)
        expected = yaml.safe_dump({"name": DAY, "description": description}, default_flow_style=False)
        assert text.startswith(f"---\n{expected}---\n")


def test_a_save_of_the_same_size_between_refreshes_is_kept(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    files = DayIndexFile(ws)
    target = files.refresh(DAY, notes(1))
    text = target.read_text(encoding="utf-8")
    edited = text.replace("name: '2026-11-28'", "name: '2026-11-29'")  # same length, other bytes
    assert len(edited) == len(text)
    target.write_text(edited + "\nA person's line.\n", encoding="utf-8")
    files.refresh(DAY, notes(2))
    after = target.read_text(encoding="utf-8")
    assert "name: '2026-11-29'" in after and after.endswith("A person's line.\n") and "n1.md" in after


def test_a_note_written_is_known_as_it_reads_back(tmp_path: Path) -> None:
    memory = Memory(load_settings(workspace=str(tmp_path), timezone="UTC"))
    tricky = ["yes", "2026-11-28", "1e3", "null", "~", "key: value", "- item", "#x", "'quoted'", '"dq"', "a" * 200]
    for i, word in enumerate(tricky):
        memory.remember(f"Fact {i} about {word}", name=f"t{i}", description=word, tags=[word[:50], str(i)], date=DAY)
    assert memory.days.notes(DAY) == DayNotes(Workspace(tmp_path)).notes(DAY)


def listed(root: Path) -> int:
    index = root / "daily" / f"{DAY}.md"
    return index.read_text(encoding="utf-8").count(f"[[daily/{DAY}/") if index.exists() else 0


def test_a_lone_remember_is_in_the_day_index_when_it_answers(tmp_path: Path) -> None:
    memory = Memory(load_settings(workspace=str(tmp_path), timezone="UTC"))
    memory.remember("One fact on its own.", date=DAY)
    assert listed(tmp_path) == 1


def test_a_burst_of_remembers_is_listed_once_it_pauses_and_when_the_server_ends(tmp_path: Path) -> None:
    memory = Memory(load_settings(workspace=str(tmp_path), timezone="UTC"))
    for i in range(20):
        memory.remember(f"Burst fact {i}.", date=DAY)
    deadline = time.monotonic() + 30
    while listed(tmp_path) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listed(tmp_path) == 20
    for i in range(5):
        memory.remember(f"Second burst fact {i}.", date=DAY)
    memory.finish()
    assert listed(tmp_path) == 25


BURST_AND_DIE = textwrap.dedent(
    """
    import os, sys
    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory
    mem = Memory(load_settings(workspace=sys.argv[1], timezone="UTC"))
    for i in range(5):
        mem.remember(f"A fact {i} of a burst cut short.", date="2026-11-28")
    os._exit(0)  # as a SIGKILL would: the batch never runs
    """
)


def test_a_process_that_dies_mid_burst_has_its_day_index_caught_up_by_the_next(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-c", BURST_AND_DIE, str(tmp_path)], timeout=120, check=True)
    assert len(list((tmp_path / "daily" / DAY).glob("*.md"))) == 5
    assert listed(tmp_path) < 5, "the burst's later notes were left to the batch that never ran"
    marks = list((tmp_path / "metadata").rglob("days-due/*"))
    assert [m.name.split(".")[0] for m in marks] == [DAY], "the dead process marked the day it owed"
    Memory(load_settings(workspace=str(tmp_path), timezone="UTC")).warm_up()
    assert listed(tmp_path) == 5
    assert not any(m.exists() for m in marks)  # its process is gone: the mark is done with


def test_a_planted_mark_writes_no_day_index(tmp_path: Path) -> None:
    memory = Memory(load_settings(workspace=str(tmp_path), timezone="UTC"))
    memory.remember("A fact to make the state folder.", date=DAY)
    due = memory.ws.state_dir / "days-due"
    due.mkdir(parents=True, exist_ok=True)
    for name in ("2001-01-01.4242", "not-a-day.1", f"{DAY}.99999999999", "../escape.1"):
        with contextlib.suppress(OSError):
            (due / name).write_text("", encoding="utf-8")
    memory.warm_up()
    assert sorted(p.name for p in (tmp_path / "daily").iterdir()) == [DAY, f"{DAY}.md"]


@pytest.mark.parametrize("folder", ["days-due", "bodies", "requests"])
def test_a_state_folder_linked_outside_gets_nothing_written_or_removed_through_it(tmp_path: Path, folder: str) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    (outside / f"{DAY}.1").write_text("a file a mark's removal would delete", encoding="utf-8")
    state = root / "metadata" / "reme-mcp"
    state.mkdir(parents=True)
    (state / folder).symlink_to(outside, target_is_directory=True)
    memory = Memory(load_settings(workspace=str(root), timezone="UTC"))
    for i in range(3):
        memory.remember(f"Fact {i} beside a linked folder.", request_id=f"r{i}", date=DAY)
    memory.finish()
    memory.warm_up()
    assert [p.name for p in outside.iterdir()] == [f"{DAY}.1"]
    assert listed(root) == 3
