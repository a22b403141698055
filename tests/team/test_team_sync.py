"""Team sync end to end: a bare repository on local disk as the remote, three clones, each served by
its own reme-mcp process; `reme-mcp sync` run in random order until nothing moves."""

from __future__ import annotations

import itertools
import json
import random
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from tests.team.team_git import (
    DAY,
    MARKERS,
    bare_remote,
    files,
    git,
    isolate_git,
    note_bodies,
    reme,
    served,
    sync,
    synced,
)

pytestmark = pytest.mark.anyio
CLONES = ("amber", "birch", "cedar")
PERSON_TOP = "Person on amber: the freeze moved to Monday, keep this line."
PERSON_END = "Person on cedar: ask Lin before changing the runbook."


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path, monkeypatch)


def body(clone: str, i: int) -> str:
    return f"On {clone} we decided item {i}: the token is zq{clone}{i}tok."


async def remember_all(url: str, clone: str, first: int, count: int) -> list[str]:
    """`count` notes on one clone: every other one named like the other clones' (same day, same names)."""
    paths = []
    async with Client(url) as client:
        for i in range(first, first + count):
            name = f"shared-{i}" if i % 2 == 0 else f"{clone}-{i}"
            args = {"content": body(clone, i), "name": name, "date": DAY, "request_id": f"{clone}-{i}"}
            result = await client.call_tool("remember", args)
            assert not result.is_error, result.content
            paths.append(result.structured_content["path"])  # type: ignore[index]
    return paths


def quiet(output: str) -> bool:
    return "  in: nothing" in output and "  out: nothing" in output and "commit: nothing" in output


def person_edit(path: Path, line: str, at_top: bool) -> None:
    text = path.read_text(encoding="utf-8")
    if at_top:
        front_end = text.index("\n---\n", 3) + len("\n---\n")
        text = text[:front_end] + line + "\n" + text[front_end:]
    else:
        text = text.rstrip("\n") + "\n\n" + line + "\n"
    path.write_text(text, encoding="utf-8")


async def test_three_clones_converge_with_nothing_lost(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    ws = {clone: tmp_path / clone for clone in CLONES}
    for clone in CLONES:
        synced(ws[clone], "--init", str(remote))
    rng = random.Random(26)
    with served(ws["amber"]) as a, served(ws["birch"]) as b, served(ws["cedar"]) as c:
        urls = dict(zip(CLONES, (a, b, c), strict=True))
        async with anyio.create_task_group() as tg:  # at the same time on all three
            for clone in CLONES:
                tg.start_soon(remember_all, urls[clone], clone, 0, 4)
        person_edit(ws["amber"] / "daily" / f"{DAY}.md", PERSON_TOP, at_top=True)
        person_edit(ws["cedar"] / "daily" / f"{DAY}.md", PERSON_END, at_top=False)

        async def round_with_writes(n: int) -> list[str]:
            """One sync of every clone in random order; the first round while the servers keep writing."""
            order = rng.sample(CLONES, len(CLONES))
            outputs: list[str] = []
            async with anyio.create_task_group() as tg:
                if n == 0:
                    for clone in CLONES:
                        tg.start_soon(remember_all, urls[clone], clone, 4, 3)
                for clone in order:
                    outputs.append(await anyio.to_thread.run_sync(synced, ws[clone]))
            return outputs

        for n in range(8):
            outputs = await round_with_writes(n)
            if n > 0 and all(quiet(out) for out in outputs):
                break
        else:
            raise AssertionError(f"still moving after 8 rounds: {outputs}")

        expected = sorted(body(clone, i) for clone in CLONES for i in range(7))
        for clone in CLONES:
            tree = files(ws[clone])
            assert sorted(note_bodies(ws[clone])) == expected, clone  # every note, once
            for rel, data in tree.items():
                assert not any(m.encode() in data for m in MARKERS), f"conflict marker in {clone}:{rel}"
            index = (ws[clone] / "daily" / f"{DAY}.md").read_text(encoding="utf-8")
            assert PERSON_TOP in index and PERSON_END in index, clone
            notes = sorted(p.name for p in (ws[clone] / "daily" / DAY).iterdir())
            listed = re.findall(rf"\[\[daily/{DAY}/([^\]]+)\]\]", index)
            assert listed == notes and f"{len(notes)} note(s) today." in index
            for note in notes:  # the stem is the name, renamed notes included
                assert f"\nname: {note.removesuffix('.md')}\n" in (ws[clone] / "daily" / DAY / note).read_text()
            assert tree == files(ws["amber"]), f"{clone} differs from amber"
            assert git(ws[clone], "status", "--porcelain") == ""
        assert {"shared-0.md", "shared-0-2.md", "shared-0-3.md"} <= set(notes)

        for clone in CLONES:  # every note found by search, through each clone's own server
            async with Client(urls[clone]) as client:
                for other in CLONES:
                    for i in range(7):
                        found = await client.call_tool("search", {"query": f"zq{other}{i}tok"})
                        hits = found.structured_content["results"]  # type: ignore[index]
                        assert hits, (clone, other, i)
                        top = (ws[clone] / hits[0]["path"]).read_text(encoding="utf-8")
                        assert body(other, i) in top
            # A retry of a request another clone stored is recognised once its note came in.
            async with Client(urls[clone]) as client:
                other = CLONES[(CLONES.index(clone) + 1) % 3]
                args = {"content": body(other, 1), "name": f"{other}-1", "date": DAY, "request_id": f"{other}-1"}
                again = await client.call_tool("remember", args)
                assert again.structured_content["created"] is False  # type: ignore[index]
    assert "metadata" not in git(remote, "ls-tree", "-r", "--name-only", "main")


def doctor(ws: Path) -> dict[str, Any]:
    done = reme("doctor", "-w", str(ws), "--json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["sync"])


async def test_unreachable_remote_loses_nothing_and_the_background_sync_resumes(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    synced(amber, "--init", str(remote))
    synced(birch, "--init", str(remote))
    log = tmp_path / "amber.log"
    away = tmp_path / "away.git"
    with served(amber, "--sync-every", "1s", stderr=log) as url:
        await remember_all(url, "amber", 0, 2)
        remote.rename(away)  # the remote is gone: a laptop on a train
        await remember_all(url, "amber", 2, 2)
        failed = sync(amber)
        assert failed.returncode == 1 and len(failed.stderr.strip().splitlines()) == 1, failed.stderr
        assert "does not appear to be a git repository" in failed.stderr or "failed" in failed.stderr
        deadline = time.monotonic() + 20
        while "trying again later" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            await anyio.sleep(0.2)
        assert doctor(amber)["error"]
        assert len(note_bodies(amber)) == 4  # nothing lost
        away.rename(remote)
        deadline = time.monotonic() + 30
        while True:  # the next background sync completes and pushes everything
            synced(birch)
            if len(note_bodies(birch)) == 4:
                break
            assert time.monotonic() < deadline, log.read_text()
            await anyio.sleep(0.5)
    text = log.read_text()
    assert text.count("trying again later") == 1, text  # said once, not once per attempt
    state = doctor(amber)
    assert state["error"] is None and state["last_sync"] != "never"
    assert sorted(note_bodies(birch)) == sorted(note_bodies(amber))


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    (amber / "daily" / DAY).mkdir(parents=True)
    (amber / "daily" / DAY / "go.md").write_text("---\nname: go\ndescription: Go\n---\nGo it is.\n")
    synced(amber, "--init", str(remote))
    synced(birch, "--init", str(remote))
    (amber / "digest" / "wiki").mkdir(parents=True)
    (amber / "digest" / "wiki" / "pets.md").write_text("---\nname: pets\n---\nThe office pet is a platypus.\n")
    synced(amber)
    (birch / "resource").mkdir()
    (birch / "resource" / "plan.txt").write_text("the plan\n")
    before, head = files(birch), git(birch, "rev-parse", "HEAD")
    out = synced(birch, "--dry-run")
    assert "dry run" in out and "1 resource (would)" in out and "1 digest (would merge)" in out, out
    assert files(birch) == before and git(birch, "rev-parse", "HEAD") == head
    assert git(birch, "status", "--porcelain") == "?? resource/\n"
    assert git(remote, "rev-parse", "main") == git(amber, "rev-parse", "HEAD")
    shutil.rmtree(birch / "resource")


def test_a_bad_sync_interval_is_one_line() -> None:
    done = reme("serve", "--sync-every", "soon")
    assert done.returncode == 2 and "--sync-every 'soon' is not a duration" in done.stderr, done.stderr


def test_the_background_sync_waits_for_answers_and_backs_off(caplog: pytest.LogCaptureFixture) -> None:
    """No sync starts while a tool call is answered; an unreachable remote is said once and tried less often."""
    from reme_mcp.team.background import BackgroundSync
    from reme_mcp.team.git import Unreachable

    started: list[float] = []
    answering = threading.Event()
    answering.set()

    def unreachable() -> None:
        started.append(time.monotonic())
        raise Unreachable("git fetch failed: could not read from remote repository")

    loop = BackgroundSync(unreachable, every=0.05, idle=lambda: not answering.is_set())
    loop.start()
    time.sleep(0.4)
    assert started == []  # eight intervals went by during one long answer
    answering.clear()
    deadline = time.monotonic() + 5
    while len(started) < 4:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    loop.stop()
    gaps = [b - a for a, b in itertools.pairwise(started)]
    # The waits double (a wait never ends early, so these are lower bounds whatever the load).
    assert all(gap >= 0.95 * 0.05 * 2 ** (k + 1) for k, gap in enumerate(gaps)), gaps
    assert gaps[2] >= 0.95 * 0.4 > 2 * 0.05, gaps
    said = [r.getMessage() for r in caplog.records if "trying again later" in r.getMessage()]
    assert len(said) == 1, said
