"""The memory page's timeline on a large workspace: server time of `GET /`, beside `daily_list`.

Builds a workspace of N daily notes (default 10,000) over a year, with a supersede link in every
tenth note and a few hundred ingested sessions from four hosts, indexes it once, then times:

- the timeline page: the whole request through the page's ASGI app in process (auth, the
  timeline read, both charts, the HTML), as a browser would get it, minus the socket;
- the timeline read alone (`TimelineReader.read`, the operation behind the page);
- the baseline, `Memory.daily_list` over the same notes: its default (the last 7 days) and a year.

Each is run --runs times after one warm-up call (whose time is shown as "first"); median and p95.

    python bench/view.py [--notes 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

HOSTS = ("claude-code", "codex", "opencode", "hermes")
DAYS = 365


def build(root: Path, notes: int, sessions: int) -> None:
    start = date(2026, 12, 6) - timedelta(days=DAYS - 1)
    for i in range(notes):
        day = (start + timedelta(days=i % DAYS)).isoformat()
        folder = root / "daily" / day
        folder.mkdir(parents=True, exist_ok=True)
        older = f"daily/{(start + timedelta(days=(i - DAYS) % DAYS)).isoformat()}/note-{i - DAYS}.md"
        supersedes = f"supersedes: ['[[{older}]]']\n" if i % 10 == 0 and i >= DAYS else ""
        (folder / f"note-{i}.md").write_text(
            f"---\nname: note-{i}\ndescription: fact {i} about service {i % 97}\n{supersedes}---\n"
            f"Service {i % 97} uses port {8000 + i % 1000} and owner team-{i % 13}.\n",
            encoding="utf-8",
        )
    for j in range(sessions):
        host = HOSTS[j % len(HOSTS)]
        when = (start + timedelta(days=(j * 7) % DAYS)).isoformat()
        folder = root / "session" / "dialog" / host
        folder.mkdir(parents=True, exist_ok=True)
        line = json.dumps(
            {
                "id": f"m{j}",
                "name": "user",
                "role": "user",
                "content": f"question {j}",
                "created_at": f"{when}T10:00:00Z",
            }
        )
        (folder / f"s{j}.jsonl").write_text(line + "\n", encoding="utf-8")


def timed(step: Callable[[], object], runs: int) -> tuple[float, float, float]:
    """(first, median, p95) in milliseconds."""
    t0 = time.perf_counter()
    step()
    first = (time.perf_counter() - t0) * 1000
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        step()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return first, statistics.median(samples), samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="reme-view-bench-") as tmp:
        os.environ["REME_INDEX_DIR"] = str(Path(tmp) / "index")
        os.environ["REME_SEMANTIC"] = "off"
        from starlette.testclient import TestClient

        from reme_mcp.config import load_settings
        from reme_mcp.faces.view.app import build_page_app
        from reme_mcp.faces.view.auth import PageKeys
        from reme_mcp.ops.memory import Memory
        from reme_mcp.ops.page.timeline import TimelineReader

        root = Path(tmp) / "ws"
        t0 = time.perf_counter()
        build(root, args.notes, args.sessions)
        memory = Memory(load_settings(str(root), "UTC"))
        indexed = memory.reindex()
        print(
            f"workspace: {args.notes:,} notes, {args.sessions} sessions, {indexed.files:,} files indexed "
            f"in {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
        keys = PageKeys(7332)
        client = TestClient(build_page_app({"default": memory}, keys, 7332), base_url="http://127.0.0.1:7332")
        client.cookies.set(keys.cookie, keys.session)
        reader = TimelineReader(memory)

        def page() -> None:
            answer = client.get("/")
            assert answer.status_code == 200 and "note-" in answer.text, answer.status_code

        rows = [
            ("timeline page, GET / (the route, in process)", timed(page, args.runs)),
            ("timeline read alone (TimelineReader.read)", timed(reader.read, args.runs)),
            ("baseline: Memory.daily_list() (7 days)", timed(memory.daily_list, args.runs)),
            ("baseline: Memory.daily_list(limit=366) (a year)", timed(lambda: memory.daily_list(limit=366), args.runs)),
        ]
        size = len(client.get("/").content)
        shown = sum(day.size for day in reader.read().days)
        print(f"\n{args.notes:,} notes; the first timeline page holds {shown} entries, {size / 1024:.0f} KB of HTML\n")
        print(f"| {'what':52} | first ms | median ms | p95 ms |")
        print(f"| {'-' * 52} | -------- | --------- | ------ |")
        for name, (first, median, p95) in rows:
            print(f"| {name:52} | {first:8.1f} | {median:9.1f} | {p95:6.1f} |")
        memory.finish()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
