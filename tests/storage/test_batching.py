"""Batched index commits: `remember` answers without a commit, and no write is ever lost to the batch.

Proves, with real processes: a run of remembers makes a handful of commits, not
one each, and every later search finds every note; the batch commits on its own
once writes pause; a process that dies before its batch leaves nothing a new
process does not find at its first search (and that process commits it); another
running process finds the notes before any commit; a stdio server whose client
leaves commits what waits before it exits.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

import reme_mcp.index.memory_index as index_module
from reme_mcp.config import load_settings
from reme_mcp.index.committer import commit_in_child
from reme_mcp.ops.memory import Memory

DAY = "2026-11-28"


def memory(ws: Path) -> Memory:
    return Memory(load_settings(workspace=str(ws), timezone="UTC"))


def generation(mem: Memory) -> int:
    """The index's latest commit, as Whoosh numbers its tables of contents on disk."""
    tocs = list(mem.index.directory.glob("_MAIN_*.toc"))
    return max((int(toc.stem.rsplit("_", 1)[1]) for toc in tocs), default=-1)


def spooled(mem: Memory) -> list[str]:
    spool = mem.index.folder / "pending"
    return sorted(p.name for p in spool.iterdir() if not p.name.startswith(".")) if spool.is_dir() else []


def found(mem: Memory, query: str) -> list[str]:
    return [hit.path for hit in mem.search(query, limit=5).results]


def cli_search(ws: Path, query: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "reme_mcp", "search", "-w", str(ws), "--json", query],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [hit["path"] for hit in json.loads(done.stdout)["results"]]


def test_a_run_of_remembers_shares_a_few_commits_and_every_later_search_finds_each_note(tmp_path: Path) -> None:
    mem = memory(tmp_path / "ws")
    mem.search("nothing yet")  # the index exists: commits from here on are the remembers'
    before = generation(mem)
    paths = [mem.remember(f"Batched fact zqbatch{i} about kelp.", date=DAY).path for i in range(40)]
    # One commit per note was 40; a pause of IDLE seconds on a loaded machine may cut the run once or twice.
    assert generation(mem) - before <= 3
    for i, path in enumerate(paths):
        assert found(mem, f"zqbatch{i}") == [path]
    assert spooled(mem) == []


def test_the_batch_commits_by_itself_once_writes_pause(tmp_path: Path) -> None:
    mem = memory(tmp_path / "ws")
    mem.search("nothing yet")
    before = generation(mem)
    mem.remember("A paused fact zqpause.", date=DAY)
    deadline = time.monotonic() + 30
    while (spooled(mem) or generation(mem) == before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spooled(mem) == [] and generation(mem) > before
    assert "daily/2026-11-28/a-paused-fact-zqpause.md" in mem.index.records()


WRITE_AND_DIE = textwrap.dedent(
    """
    import os, sys
    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory
    mem = Memory(load_settings(workspace=sys.argv[1], timezone="UTC"))
    mem.search("open the index first")
    print(mem.remember("A fact zqdied whose commit never ran.", date="2026-11-28").path, flush=True)
    os._exit(0)  # as a SIGKILL would: the batch thread never runs
    """
)


def test_a_process_that_dies_before_its_batch_loses_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    done = subprocess.run(
        [sys.executable, "-c", WRITE_AND_DIE, str(ws)], capture_output=True, text=True, timeout=120, check=True
    )
    path = done.stdout.strip()
    mem = memory(ws)
    assert spooled(mem), "the dead writer's paths wait in the spool"
    assert cli_search(ws, "zqdied") == [path]  # a new process, its first search
    assert spooled(mem) == []  # ... which committed them
    assert found(mem, "zqdied") == [path]


def server(ws: Path) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "--workspace", str(ws)], env={**os.environ}
    )
    return Client(params, read_timeout_seconds=60)


def test_another_running_server_finds_notes_before_any_commit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    mem = memory(ws)
    mem.search("open the index first")

    async def session() -> None:
        async with server(ws) as client:
            await client.call_tool("search", {"query": "warm"})
            path = mem.remember("A fact zqother for the other process.", date=DAY).path
            result = await client.call_tool("search", {"query": "zqother"})
            assert [hit["path"] for hit in result.structured_content["results"]] == [path]  # type: ignore[index]

    anyio.run(session)


def test_a_stdio_server_commits_what_waits_when_its_client_leaves(tmp_path: Path) -> None:
    ws = tmp_path / "ws"

    async def session() -> None:
        async with server(ws) as client:
            for i in range(5):
                stored = await client.call_tool("remember", {"content": f"Leaving fact zqleave{i}.", "date": DAY})
                assert not stored.is_error

    anyio.run(session)
    mem = memory(ws)
    assert spooled(mem) == []
    assert {f"daily/{DAY}/leaving-fact-zqleave{i}.md" for i in range(5)} <= set(mem.index.records())


@pytest.mark.parametrize("folder", ["spool", "index"])
def test_a_write_whose_index_folder_is_cleared_is_still_found(tmp_path: Path, folder: str) -> None:
    mem = memory(tmp_path / "ws")
    mem.search("open the index first")
    path = mem.remember("A fact zqcleared.", date=DAY).path
    shutil.rmtree(mem.index.folder / "pending" if folder == "spool" else mem.index.folder)
    assert found(mem, "zqcleared") == [path]  # the files are the truth: the sync finds it anyway


def test_a_child_process_commits_the_spool_and_names_what_it_took(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    writer = memory(ws)
    writer.search("open the index first")
    path = writer.remember("A fact zqchild for the child's commit.", date=DAY).path
    assert spooled(writer)
    home = Path(os.environ["REME_INDEX_DIR"])
    taken = commit_in_child(ws, home)
    assert taken is not None and path in taken
    assert spooled(writer) == []
    other = memory(ws)  # a fresh process's view: committed, nothing left for it to do
    assert path in other.index.records()


def test_a_server_commits_its_batches_off_its_own_process(tmp_path: Path) -> None:
    settings = dataclasses.replace(load_settings(workspace=str(tmp_path / "ws"), timezone="UTC"), commit_in_child=True)
    mem = Memory(settings)
    mem.search("nothing yet")
    before = generation(mem)
    paths = [mem.remember(f"Server fact zqsrv{i}.", date=DAY).path for i in range(5)]
    deadline = time.monotonic() + 60
    while (spooled(mem) or generation(mem) == before) and time.monotonic() < deadline:
        time.sleep(0.05)
    committed = generation(mem)
    assert spooled(mem) == [] and committed > before
    for i, path in enumerate(paths):
        assert found(mem, f"zqsrv{i}") == [path]
    assert generation(mem) == committed  # the searches had nothing left to commit


def test_a_note_spooled_again_while_a_child_commits_leaves_nothing_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A remember that lands after the server noted what waits, but before its child reads
    # the spool, re-spools the day index: the child takes both entries, yet the server's
    # note of the day index is newer than what it sent. It must still be taken, or the
    # server starts a child for it again and again while the workspace is idle.
    settings = dataclasses.replace(load_settings(workspace=str(tmp_path / "ws"), timezone="UTC"), commit_in_child=True)
    mem = Memory(settings)
    mem.search("nothing yet")
    real = index_module.commit_in_child
    runs: list[list[str]] = []

    def child_with_a_remember_meanwhile(root: Path, home: Path, waiting: Iterable[str] = ()) -> list[str] | None:
        if not runs:
            mem.remember("A fact zqmeanwhile written while the child starts.", date=DAY)
        taken = real(root, home, waiting)
        runs.append(taken or [])
        return taken

    monkeypatch.setattr(index_module, "commit_in_child", child_with_a_remember_meanwhile)
    first = mem.remember("A fact zqbefore the batch.", date=DAY).path
    deadline = time.monotonic() + 60
    settled_at = None
    while time.monotonic() < deadline:
        count = len(runs)
        time.sleep(1.5)  # three times the batch's idle wait: a child still due would have run
        if runs and len(runs) == count:
            settled_at = count
            break
    assert settled_at is not None, f"children kept starting: {len(runs)} runs, the last took {runs[-1]}"
    assert settled_at <= 3, runs
    assert spooled(mem) == []
    other = memory(tmp_path / "ws")  # a fresh process's view: nothing left to index
    assert first in other.index.records()
    assert found(other, "zqmeanwhile")
