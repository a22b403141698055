"""Team sync: the time of `reme-mcp sync` and of the index catching up, for 1, 100 and 1,000
incoming notes on a 10,000-note workspace, beside plain git moving the same commits.

Three clones of one bare remote on local disk (no network: the numbers are git's and
reme-mcp's own work). `writer` adds N notes and pushes them with `reme-mcp sync`; `reader`
holds one note of its own on the same day (so the sync is a true merge: the day-index
driver runs and the day's block is rebuilt) and syncs: the sync's time (commit, fetch, vet,
merge, push) and the index catch-up's are reported apart, and a search for a word of one
incoming note must find it. `baseline` takes the same commits with plain `git pull
--ff-only` (no local change, no index): the floor git alone sets. The last row is a full
index rebuild of the reader's workspace, the other way to catch an index up.

    python bench/sync.py            # 10,000 notes, 1 / 100 / 1,000 incoming (a few minutes)
    python bench/sync.py --quick    # 1,000 notes, 1 / 10 / 100 incoming
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAYS = 100
TODAY = "2026-12-01"
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def write_notes(root: Path, count: int, prefix: str, days: list[str]) -> None:
    """`count` notes spread over `days`, as `remember` lays them out, then each day's index."""
    from reme_mcp.notes.daily import render_note
    from reme_mcp.notes.day_index import DayIndexFile
    from reme_mcp.notes.day_notes import DayNotes
    from reme_mcp.storage.workspace import Workspace

    ws = Workspace(root)
    for i in range(count):
        day = days[i % len(days)]
        folder = root / "daily" / day
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(12))
        content = f"Note {prefix}{i}: {words}. Token zq{prefix}{i}x."
        meta = {"name": f"{prefix}-{i}", "description": f"Note {prefix}{i}"}
        (folder / f"{prefix}-{i}.md").write_text(render_note(meta, content), encoding="utf-8")
    for day in sorted(set(days[: min(count, len(days))])):
        DayIndexFile(ws).refresh(day, DayNotes(ws).notes(day))


def memory(root: Path):  # type: ignore[no-untyped-def]
    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory

    return Memory(load_settings(str(root), "UTC"))


def run(size: int, batches: list[int]) -> None:
    with tempfile.TemporaryDirectory(prefix="reme-bench-sync-") as tmp_name:
        tmp = Path(tmp_name)
        os.environ["REME_INDEX_DIR"] = str(tmp / "index")
        config = tmp / "gitconfig"
        config.write_text("[user]\n\tname = Bench\n\temail = bench@example.invalid\n", encoding="utf-8")
        os.environ["GIT_CONFIG_GLOBAL"] = str(config)
        os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
        remote = tmp / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
        writer, reader, baseline = tmp / "writer", tmp / "reader", tmp / "baseline"
        days = [f"2026-{8 + d // 30:02d}-{1 + d % 30:02d}" for d in range(DAYS)]
        started = time.perf_counter()
        write_notes(writer, size, "base", days)
        memory(writer).team_sync(init=str(remote))
        memory(reader).team_sync(init=str(remote))
        git(tmp, "clone", "-q", str(remote), str(baseline))
        print(f"set-up: {size:,} notes on {DAYS} days, three clones, {time.perf_counter() - started:.1f} s", flush=True)
        rows = []
        for n in batches:
            write_notes(writer, n, f"in{n}", [TODAY])
            memory(writer).team_sync()
            write_notes(reader, 1, f"local{n}", [TODAY])
            mem = memory(reader)
            mem.index.sync(force=True)  # caught up before: only the incoming notes are new to it
            t0 = time.perf_counter()
            from reme_mcp.team.run import Sync

            report = Sync(mem.ws).run()
            t1 = time.perf_counter()
            indexed = mem.index.sync(force=True)
            t2 = time.perf_counter()
            hits = mem.search(f"zqin{n}{n - 1}x").results
            assert hits and hits[0].path.endswith(f"in{n}-{n - 1}.md"), hits
            assert len([c for c in report.came_in if c.path.startswith(f"daily/{TODAY}/in")]) == n
            b0 = time.perf_counter()
            git(baseline, "pull", "-q", "--ff-only")
            b1 = time.perf_counter()
            rows.append((n, t1 - t0, indexed, t2 - t1, b1 - b0))
        mem = memory(reader)
        r0 = time.perf_counter()
        files = mem.reindex().files
        rebuild = time.perf_counter() - r0
    print()
    print(
        f"{'incoming':>9} | {'reme-mcp sync':>13} | {'index catch-up':>14} | {'files indexed':>13} | {'git pull (baseline)':>19}"
    )
    print("-" * 82)
    for n, sync_s, indexed, index_s, pull_s in rows:
        print(f"{n:>9,} | {sync_s:>11.2f} s | {index_s:>12.2f} s | {indexed:>13,} | {pull_s:>17.2f} s")
    print(f"full index rebuild of the reader ({files:,} files): {rebuild:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 notes; 1, 10 and 100 incoming")
    args = parser.parse_args()
    if args.quick:
        run(1_000, [1, 10, 100])
    else:
        run(10_000, [1, 100, 1_000])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
