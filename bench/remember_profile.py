"""Where a `remember` spends its time on a busy day: a cProfile of `Memory.remember` in process.

The peer harness writes 2,000 notes on one day through MCP; this writes `--warm` notes
on one day of a fresh workspace, then profiles the next `--notes` and prints the mean
time per call and the functions with the most cumulative time. It is the loop for
judging a write-path change; the harness's own run is the number to quote beside peers.

    python bench/remember_profile.py                 # 300 warm, 300 profiled
    python bench/remember_profile.py --warm 1500 --notes 500 --top 40
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
import time
from pathlib import Path

DAY = "2026-11-28"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm", type=int, default=300, help="notes already on the day (default: %(default)s)")
    parser.add_argument("--notes", type=int, default=300, help="notes profiled (default: %(default)s)")
    parser.add_argument("--top", type=int, default=30, help="functions listed (default: %(default)s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["REME_INDEX_DIR"] = str(Path(scratch) / "index-home")
        from reme_mcp.config import load_settings
        from reme_mcp.ops.memory import Memory

        root = Path(scratch) / "ws"
        root.mkdir()
        memory = Memory(load_settings(str(root), "UTC"))
        memory.search("warm up")
        for i in range(args.warm):
            memory.remember(f"Warm note {i} about the zqwarm{i} topic, with a few more words.", date=DAY)
        profile = cProfile.Profile()
        began = time.perf_counter()
        profile.enable()
        for i in range(args.notes):
            memory.remember(f"Profiled note {i} about the zqprofiled{i} topic, with a few more words.", date=DAY)
        profile.disable()
        took = time.perf_counter() - began
        memory.finish()
        print(
            f"{args.notes} remembers after {args.warm} on one day: {took / args.notes * 1000:.1f} ms a call (profiled)"
        )
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
