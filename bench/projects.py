"""Search across a project's workspace and the personal one, beside one workspace of both sizes.

    python bench/projects.py [--chunks 10000] [--queries 300] [--rounds 3]

Builds two workspaces of `--chunks` chunks each (the project's and the personal one, as a
session reads them by default) and one holding both (their files copied together; a day index
both have is taken from the project), indexes all three, then times the
same queries through `SessionMemory.search` over the two and `Memory.search` over the one,
interleaved round by round on the same machine. Prints medians, p95 and their ratio. The
issue's target: two workspaces within 1.3x of one of the same total size.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from perf import SEED, generate_workspace, make_queries

from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.session_memory import SessionMemory
from reme_mcp.projects.home import MemoryHome
from reme_mcp.projects.placement import Placement


def union(target: Path, *sources: Path) -> None:
    """The sources' files in one workspace: a name taken twice gets the later one a suffix,
    except a day index (`daily/<date>.md`), whose notes are then listed by the first."""
    for source in sources:
        for path in sorted(source.rglob("*")):
            if not path.is_file():
                continue
            rel = path.relative_to(source)
            dest = target / rel
            if dest.exists():
                if rel.parts[0] == "daily" and len(rel.parts) == 2:
                    continue
                dest = dest.with_name(f"{dest.stem}-2{dest.suffix}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="Chunks in each of the two workspaces.")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3, help="Rounds of all queries, alternating the two sides.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reme-bench-projects-") as tmp:
        base = Path(tmp)
        os.environ["REME_INDEX_DIR"] = str(base / "index")
        project, personal, single = base / "project", base / "personal", base / "single"
        generate_workspace(project, args.chunks, seed=SEED)  # the vocabulary the queries draw on
        generate_workspace(personal, args.chunks, seed=SEED + 7)
        union(single, project, personal)
        settings = dataclasses.replace(load_settings(str(single)), semantic="off")
        opened: dict[Path, Memory] = {}

        def open_memory(workspace: Path) -> Memory:
            if workspace not in opened:
                opened[workspace] = Memory(dataclasses.replace(settings, workspace=workspace))
            return opened[workspace]

        chunks = {}
        for folder in (project, personal, single):
            chunks[folder.name] = open_memory(folder).reindex().chunks
        home = MemoryHome(base / "projects", personal)
        place = Placement(home, None, "bench-project", project, "bench", None)
        two = SessionMemory(open_memory, project, place)
        one = open_memory(single)
        queries = make_queries(n=args.queries)
        for q in queries[:20]:  # warm both sides' caches alike
            two.search(q)
            one.search(q)
        times: dict[str, list[float]] = {"two": [], "one": []}
        for _ in range(args.rounds):
            for q in queries:
                for side, search in (("two", two.search), ("one", one.search)):
                    start = time.perf_counter()
                    search(q)
                    times[side].append(time.perf_counter() - start)
    med = {side: statistics.median(v) * 1000 for side, v in times.items()}
    p95 = {side: _p95(v) for side, v in times.items()}
    print(f"chunks: project {chunks['project']:,}, personal {chunks['personal']:,}, one workspace {chunks['single']:,}")
    print("| search | median ms | p95 ms |")
    print("| --- | --- | --- |")
    print(f"| project + personal (two indexes) | {med['two']:.1f} | {p95['two']:.1f} |")
    print(f"| one workspace of both sizes | {med['one']:.1f} | {p95['one']:.1f} |")
    print(f"| ratio | {med['two'] / med['one']:.2f}x | {p95['two'] / p95['one']:.2f}x |")


if __name__ == "__main__":
    main()
