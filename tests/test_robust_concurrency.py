"""Many writers at once: 8 real processes, 100 remember calls each, on one workspace (issue 5).

Proves: every distinct note is stored exactly once (colliding names get unique
file names, repeated request_ids and repeated content store nothing twice),
each day index lists every note of its day, every note is found by search from
a fresh process, a reader never sees a half-written note or day index, searches
during the writing answer from a consistent state, and no lock error or
timeout reaches a caller.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reme_mcp.daily import BLOCK_END, BLOCK_START
from reme_mcp.documents import split_front_matter

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


@pytest.mark.slow
def test_eight_processes_remember_concurrently(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, str(WORKER), "--reader", str(ws), str(stop)], stdout=subprocess.PIPE, text=True
    )
    plans = [plan_for(w) for w in range(WRITERS)]
    began = time.monotonic()
    try:
        outputs = run_workers(ws, tmp_path, plans)
    finally:
        stop.touch()
        reader_out, _ = reader.communicate(timeout=60)
    elapsed = time.monotonic() - began
    lines = [line for out in outputs for line in out]
    remembers = [line for line in lines if line["op"] == "remember"]
    print(f"{WRITERS} writers x {CALLS} calls: {len(remembers)} remember, {elapsed:.1f} s")

    # No error of any kind (a LockError, a timeout, a search that missed) reached a caller.
    errors = [line for line in lines if "error" in line]
    assert not errors, errors[:5]
    assert len(remembers) == sum(1 for plan in plans for op in plan if op["op"] == "remember")

    # A reader never saw a half-written note or day index.
    report = json.loads(reader_out)
    assert report["checks"] > 0
    assert report["problems"] == []

    # Every distinct note stored exactly once: one path per token, one file per content.
    by_token: dict[str, set[str]] = {}
    for line in remembers:
        by_token.setdefault(line["token"], set()).add(line["path"])
    assert all(len(paths) == 1 for paths in by_token.values()), [t for t, p in by_token.items() if len(p) > 1]
    notes = sorted(p for p in ws.glob("daily/*/*.md"))
    bodies = Counter(note.read_text(encoding="utf-8").split("\n---\n", 1)[1] for note in notes)
    assert [b for b, n in bodies.items() if n > 1] == []
    assert len(notes) == len(by_token)
    stored = {f"daily/{n.parent.name}/{n.name}" for n in notes}
    assert stored == {next(iter(p)) for p in by_token.values()}
    created = [line for line in remembers if line["created"]]
    assert len(created) == len(stored)  # every other call answered duplicate_of
    # Each note's front-matter name is its file stem, even where names collided.
    for note in notes:
        meta, _ = split_front_matter(note.read_text(encoding="utf-8"))
        assert meta["name"] == note.stem
    assert len([n for n in notes if n.stem.startswith("shared-name-")]) == sum(
        1 for plan in plans for op in plan if op["op"] == "remember" and op["args"].get("name")
    )
    # No temp file left behind by a writer that finished.
    assert [p for p in ws.rglob("*") if ".tmp-" in p.name and "metadata" not in p.parts] == []

    # Each day index lists every note of its day, exactly once, and nothing else.
    for day in DAYS:
        text = (ws / "daily" / f"{day}.md").read_text(encoding="utf-8")
        block = text[text.index(BLOCK_START) : text.index(BLOCK_END)]
        listed = [line.split("]]")[0][4:] for line in block.splitlines() if line.startswith("- [[")]
        on_disk = sorted(p for p in stored if p.startswith(f"daily/{day}/"))
        assert sorted(listed) == on_disk
        meta, _ = split_front_matter(text)
        assert meta["description"] == f"{len(on_disk)} note(s) today."

    # Every note is found by search from a fresh process.
    checks = [{"op": "search", "query": token, "expect": next(iter(paths))} for token, paths in by_token.items()]
    (tmp_path / "fresh").mkdir()
    (fresh,) = run_workers(ws, tmp_path / "fresh", [checks])
    assert [line for line in fresh if "error" in line] == []
    assert len(fresh) == len(by_token)
