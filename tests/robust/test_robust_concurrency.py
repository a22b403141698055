"""Many writers at once: 8 real processes, 100 remember calls each, on one workspace (issue 5).

The writers run once (the module's `run` fixture); each test checks one property of
that run: no lock error or timeout reaches a caller, a reader never sees a half-written
note or day index, every distinct note is stored exactly once (repeated request_ids and
repeated content store nothing twice), colliding names get unique file names, no temp
file is left, each day index lists every note of its day, and a fresh process finds
every note by search (searches during the writing also check they answer consistently).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reme_mcp.storage.documents import BLOCK_END, BLOCK_START, split_front_matter

WORKER = Path(__file__).with_name("robust_worker.py")
WRITERS = int(os.environ.get("REME_TEST_WRITERS", "8"))
CALLS = int(os.environ.get("REME_TEST_CALLS", "100"))
DAYS = ("2026-11-28", "2026-11-29")


def word(prefix: str, n: int) -> str:
    """A unique all-letter search term (digits would be split off by the analyzer)."""
    letters = ""
    for _ in range(5):
        n, r = divmod(n, 26)
        letters += chr(ord("a") + r)
    return f"{prefix}{letters}"


def plan_for(writer: int) -> list[dict[str, Any]]:
    """Unique notes, colliding names, retried and shared request_ids, shared content, and searches."""
    ops: list[dict[str, Any]] = []
    for k in range(CALLS):
        day = DAYS[k % 2]
        if k % 25 == 3:  # the same request_id and content from every writer: stored once
            token = word("zshr", k)
            args: dict[str, Any] = {"content": f"Shared fact {k}: {token}.", "request_id": f"shared-{k}", "date": day}
        elif k % 25 == 4:  # the same content from every writer, no request_id: stored once
            token = word("zcom", k)
            args = {"content": f"Common fact {k}: {token}.", "date": day}
        elif k % 10 == 2 and ops and ops[-1]["op"] == "remember" and ops[-1]["args"].get("request_id"):
            ops.append({"op": "remember", "args": dict(ops[-1]["args"]), "token": ops[-1]["token"]})  # a retry
            continue
        else:
            token = word("zuni", writer * 1000 + k)
            args = {"content": f"Writer {writer} fact {k}: {token} matters.", "date": day}
            if k % 5 == 0:
                args["name"] = f"shared-name-{k % 3}"  # collides across writers and days
            if k % 10 == 1:
                args["request_id"] = f"w{writer}-{k}"
        ops.append({"op": "remember", "args": args, "token": token})
        if k % 7 == 6:
            ops.append({"op": "search", "query": token, "expect": "$last"})
    return ops


def run_workers(ws: Path, tmp: Path, plans: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    start = tmp / "go"
    procs = []
    for i, ops in enumerate(plans):
        plan_file = tmp / f"plan-{i}.json"
        plan_file.write_text(json.dumps({"start_file": str(start), "ops": ops}), encoding="utf-8")
        procs.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), str(ws), str(plan_file)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    time.sleep(0.5)  # let every interpreter get to the start line
    start.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        outputs.append([json.loads(line) for line in out.splitlines()])
    return outputs


@dataclass(frozen=True)
class Run:
    """One run of WRITERS processes plus a reader over one workspace, shared by every test below."""

    ws: Path
    tmp: Path
    plans: list[list[dict[str, Any]]]
    lines: list[dict[str, Any]]
    reader_report: dict[str, Any]

    @property
    def remembers(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["op"] == "remember"]

    @property
    def by_token(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for line in self.remembers:
            found.setdefault(line["token"], set()).add(line["path"])
        return found

    @property
    def notes(self) -> list[Path]:
        return sorted(self.ws.glob("daily/*/*.md"))

    @property
    def stored(self) -> set[str]:
        return {f"daily/{n.parent.name}/{n.name}" for n in self.notes}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("concurrency")
    ws = tmp / "ws"
    ws.mkdir()
    stop = tmp / "stop"
    reader = subprocess.Popen(
        [sys.executable, str(WORKER), "--reader", str(ws), str(stop)], stdout=subprocess.PIPE, text=True
    )
    plans = [plan_for(w) for w in range(WRITERS)]
    began = time.monotonic()
    try:
        outputs = run_workers(ws, tmp, plans)
    finally:
        stop.touch()
        reader_out, _ = reader.communicate(timeout=60)
    lines = [line for out in outputs for line in out]
    print(f"{WRITERS} writers x {CALLS} calls: {len(lines)} answers, {time.monotonic() - began:.1f} s")
    return Run(ws, tmp, plans, lines, json.loads(reader_out))


@pytest.mark.slow
def test_no_error_reaches_a_caller_and_every_call_is_answered(run: Run) -> None:
    errors = [line for line in run.lines if "error" in line]  # a LockError, a timeout, a search that missed
    assert not errors, errors[:5]
    assert len(run.remembers) == sum(1 for plan in run.plans for op in plan if op["op"] == "remember")


@pytest.mark.slow
def test_a_reader_never_sees_a_half_written_note_or_day_index(run: Run) -> None:
    assert run.reader_report["checks"] > 0
    assert run.reader_report["problems"] == []


@pytest.mark.slow
def test_every_distinct_note_is_stored_exactly_once(run: Run) -> None:
    """One path per token, one file per content; every other call answered duplicate_of."""
    assert all(len(paths) == 1 for paths in run.by_token.values()), [t for t, p in run.by_token.items() if len(p) > 1]
    bodies = Counter(note.read_text(encoding="utf-8").split("\n---\n", 1)[1] for note in run.notes)
    assert [b for b, n in bodies.items() if n > 1] == []
    assert len(run.notes) == len(run.by_token)
    assert run.stored == {next(iter(p)) for p in run.by_token.values()}
    assert len([line for line in run.remembers if line["created"]]) == len(run.stored)


@pytest.mark.slow
def test_colliding_names_get_unique_files_named_in_their_front_matter(run: Run) -> None:
    for note in run.notes:
        meta, _ = split_front_matter(note.read_text(encoding="utf-8"))
        assert meta["name"] == note.stem
    assert len([n for n in run.notes if n.stem.startswith("shared-name-")]) == sum(
        1 for plan in run.plans for op in plan if op["op"] == "remember" and op["args"].get("name")
    )


@pytest.mark.slow
def test_no_temp_file_is_left_behind(run: Run) -> None:
    assert [p for p in run.ws.rglob("*") if ".tmp-" in p.name and "metadata" not in p.parts] == []


@pytest.mark.slow
def test_each_day_index_lists_every_note_of_its_day_once(run: Run) -> None:
    for day in DAYS:
        text = (run.ws / "daily" / f"{day}.md").read_text(encoding="utf-8")
        block = text[text.index(BLOCK_START) : text.index(BLOCK_END)]
        listed = [line.split("]]")[0][4:] for line in block.splitlines() if line.startswith("- [[")]
        on_disk = sorted(p for p in run.stored if p.startswith(f"daily/{day}/"))
        assert sorted(listed) == on_disk
        meta, _ = split_front_matter(text)
        assert meta["description"] == f"{len(on_disk)} note(s) today."


@pytest.mark.slow
def test_a_fresh_process_finds_every_note(run: Run) -> None:
    checks = [{"op": "search", "query": token, "expect": next(iter(paths))} for token, paths in run.by_token.items()]
    (run.tmp / "fresh").mkdir()
    (fresh,) = run_workers(run.ws, run.tmp / "fresh", [checks])
    assert [line for line in fresh if "error" in line] == []
    assert len(fresh) == len(run.by_token)
