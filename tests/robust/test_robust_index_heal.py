"""Index state that is unusable is moved aside and rebuilt; no call fails because of it (issue 25, defect 6).

Proves, through real `reme-mcp` processes: Whoosh's write lock replaced by a folder, the
index's `pending/` spool replaced by a file, the newest `_stored.col` cut to a third,
each leave `remember` succeeding and its note found by search, in the process that met
the damage and in the next one; and the index folder and `metadata/` deleted every 0.5 s under
three writing and searching processes cost no call, on a quiet machine and with every core busy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from reme_mcp.index.home import workspace_key
from reme_mcp.index.schema import SCHEMA_VERSION
from reme_mcp.storage.workspace import Workspace
from tests.conftest import DAY, make_reme_workspace

WORKER = Path(__file__).with_name("robust_worker.py")
ROUNDS = 50  # remember, search it, search an old note: about 5 s per worker here, some ten deletions


def text(result: Any) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


def index_folder(root: Path, home: Path) -> Path:
    return home / workspace_key(Workspace(root))


def serve(root: Path, home: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str, dict[str, Any]]]:
    """Run these tool calls in a fresh stdio server; (is_error, text, structured) for each."""
    env = {**os.environ, "REME_INDEX_DIR": str(home), "REME_TIMEZONE": "UTC"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp", "-w", str(root)], env=env)
    out: list[tuple[bool, str, dict[str, Any]]] = []

    async def session() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for tool, args in calls:
                result = await client.call_tool(tool, args)
                out.append((bool(result.is_error), text(result), result.structured_content or {}))

    anyio.run(session)
    return out


def remember_and_find(root: Path, home: Path, token: str) -> None:
    """In one fresh server: remember a note, then search finds it; neither call fails."""
    stored, found = serve(
        root,
        home,
        [("remember", {"content": f"The {token} fact is kept.", "date": DAY}), ("search", {"query": token})],
    )
    assert not stored[0], stored[1]
    assert not found[0], found[1]
    assert [hit["path"] for hit in found[2]["results"]][:1] == [stored[2]["path"]], found[1]


def damaged(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace indexed once (a build and a committed note), its index folder, and the index home."""
    root = make_reme_workspace(tmp_path / "ws")
    home = tmp_path / "index-home"
    remember_and_find(root, home, "zqfirst")
    return root, home, index_folder(root, home)


def test_a_write_lock_replaced_by_a_folder_heals(tmp_path: Path) -> None:
    root, home, folder = damaged(tmp_path)
    lock = folder / f"index-v{SCHEMA_VERSION}" / "MAIN_WRITELOCK"
    if lock.exists():
        lock.unlink()
    lock.mkdir()
    (lock / "inside").write_text("x", encoding="utf-8")
    remember_and_find(root, home, "zqlockone")
    remember_and_find(root, home, "zqlocktwo")  # and in the next process


def test_a_spool_replaced_by_a_file_heals(tmp_path: Path) -> None:
    root, home, folder = damaged(tmp_path)
    shutil.rmtree(folder / "pending", ignore_errors=True)
    (folder / "pending").write_text("not a folder\n", encoding="utf-8")
    remember_and_find(root, home, "zqspoolone")
    remember_and_find(root, home, "zqspooltwo")


def cut_newest_stored_column(directory: Path) -> None:
    newest = max(directory.glob("*_stored.col"), key=lambda p: p.stat().st_mtime_ns)
    os.truncate(newest, newest.stat().st_size // 3)


def other_process_writes(root: Path, home: Path, tmp: Path, notes: int) -> None:
    ops = [{"op": "remember", "args": {"content": f"Other walrus zqother{k}.", "date": DAY}} for k in range(notes)]
    plan = tmp / "other.json"
    plan.write_text(json.dumps({"start_file": None, "ops": ops}), encoding="utf-8")
    env = {**os.environ, "REME_INDEX_DIR": str(home)}
    done = subprocess.run([sys.executable, str(WORKER), str(root), str(plan)], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "error" not in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("run", range(3))
def test_a_stored_column_cut_to_a_third_heals(tmp_path: Path, run: int) -> None:
    """Cut under a running server (a segment another process committed), then searched, written and
    searched again in it."""
    root, home, folder = damaged(tmp_path)
    directory = folder / f"index-v{SCHEMA_VERSION}"
    env = {**os.environ, "REME_INDEX_DIR": str(home), "REME_TIMEZONE": "UTC"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp", "-w", str(root)], env=env)
    failed: list[str] = []

    async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(tool, args)
        if result.is_error:
            failed.append(text(result))
        return result.structured_content or {}

    async def session() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for k in range(3 + run):
                await call(client, "remember", {"content": f"Walrus census {k}: zqcol{k}.", "date": DAY})
            await call(client, "search", {"query": "walrus census"})  # commits what waits
            other_process_writes(root, home, tmp_path, run + 1)  # a segment this server has not opened yet
            cut_newest_stored_column(directory)
            for query in ("walrus census", "Go backend services", "zqcol1"):
                found = await call(client, "search", {"query": query})
                assert found.get("results"), (query, failed)
            await call(client, "remember", {"content": "After the cut: zqaftercut.", "date": DAY})
            for query in ("zqaftercut", "walrus census", "zqfirst"):
                found = await call(client, "search", {"query": query})
                assert found.get("results"), (query, failed)

    anyio.run(session)
    assert not failed, failed


@pytest.mark.slow
@pytest.mark.parametrize("load", ["quiet", "busy"], indirect=True)
def test_the_index_folder_and_metadata_deleted_every_half_second_cost_no_call(tmp_path: Path, load: str) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    home = tmp_path / "index-home"
    env = {**os.environ, "REME_INDEX_DIR": str(home)}
    assert subprocess.run([sys.executable, "-m", "reme_mcp", "-w", str(root), "search", "x"], env=env).returncode == 0
    folder = index_folder(root, home)
    start = tmp_path / "start"
    workers = []
    for w in range(3):
        ops: list[dict[str, object]] = []
        for i in range(ROUNDS):
            token = f"zqdel{w}x{i}"
            ops.append({"op": "remember", "args": {"content": f"Deleted note {token}.", "date": DAY}, "token": token})
            ops.append({"op": "search", "query": token, "expect": "$last"})
            ops.append({"op": "search", "query": "Go backend services", "expect": f"daily/{DAY}/go-backend.md"})
        plan = tmp_path / f"plan-{w}.json"
        plan.write_text(json.dumps({"start_file": str(start), "ops": ops}), encoding="utf-8")
        # Answers go to a file: a pipe nobody reads until the end would stop a worker once full.
        with (tmp_path / f"answers-{w}.jsonl").open("wb") as answers:
            workers.append(
                subprocess.Popen([sys.executable, str(WORKER), str(root), str(plan)], env=env, stdout=answers)
            )
    start.touch()
    deletions = 0
    while any(w.poll() is None for w in workers):
        time.sleep(0.5)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(root / "metadata", ignore_errors=True)
        deletions += 1
    for worker in workers:
        worker.wait(timeout=300)
    lines = [
        json.loads(line)
        for w in range(len(workers))
        for line in (tmp_path / f"answers-{w}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert deletions >= 4, "the workers finished before the folder was deleted"
    assert len(lines) == 3 * 3 * ROUNDS
    errors = [str(line.get("trace") or line.get("error")) for line in lines if "error" in line]
    assert not errors, f"{len(errors)} calls failed:\n" + "\n".join(errors[:3])
