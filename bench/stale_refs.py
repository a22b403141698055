"""Search with its hits checked against the project's git checkout, beside the same search unchecked.

    python bench/stale_refs.py [--chunks 10000] [--files 2000] [--cited 400] [--queries 300] [--rounds 3]

Builds a real git repository of `--files` files, then renames a tenth of them (`git mv`) and
removes another tenth (`git rm`) in real commits; and a project workspace of `--chunks` chunks
(bench/perf.py's generator) plus `--cited` notes that each name two or three of the repository's
original paths beside words the queries use. The same queries then go through
`SessionMemory.search` serving that repository (checked) and serving no repository (unchecked),
interleaved query by query on the same indexes. Prints medians, p95 and their ratio, the first
search after a commit (the listing and history read again), and how the cited paths were judged:
renamed and removed ones flagged, present ones not.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from perf import SEED, generate_workspace, make_queries

from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.results import SearchHit
from reme_mcp.ops.session_memory import SessionMemory
from reme_mcp.projects.home import MemoryHome
from reme_mcp.projects.identity import Project
from reme_mcp.projects.placement import Placement

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def build_repository(repo: Path, files: int, rng: random.Random) -> dict[str, str]:
    """The repository's original paths and what became of each: present, renamed or removed."""
    repo.mkdir()
    git(repo, "init", "-q")
    paths = [f"src/mod{i % 97}/part{i // 97}/file{i}.py" for i in range(files)]
    for path in paths:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(f"# {path}\nVALUE = {rng.random()}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    shuffled = rng.sample(paths, len(paths))
    tenth = len(paths) // 10
    fate = dict.fromkeys(paths, "present")
    for path in shuffled[:tenth]:
        new = path.replace("src/", "lib/", 1)
        (repo / new).parent.mkdir(parents=True, exist_ok=True)
        git(repo, "mv", path, new)
        fate[path] = "renamed"
    git(repo, "commit", "-qm", "src to lib")
    git(repo, "rm", "-q", *shuffled[tenth : 2 * tenth])
    for path in shuffled[tenth : 2 * tenth]:
        fate[path] = "removed"
    git(repo, "commit", "-qm", "drop dead code")
    return fate


def add_cited_notes(workspace: Path, fate: dict[str, str], queries: list[str], n: int, rng: random.Random) -> None:
    paths = sorted(fate)
    for k in range(n):
        cited = rng.sample(paths, rng.randint(2, 3))
        named = f"`{cited[0]}:{rng.randint(1, 90)}`, " + " and ".join(cited[1:])
        day = f"2026-{1 + k % 12:02d}-{1 + k % 28:02d}"
        folder = workspace / "daily" / day
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"cited-{k}.md").write_text(
            f"---\nname: cited-{k}\ndescription: where the code is\n---\n{rng.choice(queries)}: the code is in {named}.\n"
        )


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--cited", type=int, default=400, help="Notes that name the repository's paths.")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="reme-bench-stale-") as tmp:
        base = Path(tmp)
        os.environ["REME_INDEX_DIR"] = str(base / "index")
        repo, workspace = base / "repo", base / "project"
        fate = build_repository(repo, args.files, rng)
        queries = make_queries(n=args.queries)
        generate_workspace(workspace, args.chunks, seed=SEED)
        add_cited_notes(workspace, fate, queries, args.cited, rng)
        settings = dataclasses.replace(load_settings(str(workspace)), semantic="off")
        opened: dict[Path, Memory] = {}

        def open_memory(folder: Path) -> Memory:
            if folder not in opened:
                opened[folder] = Memory(dataclasses.replace(settings, workspace=folder))
            return opened[folder]

        chunks = open_memory(workspace).reindex().chunks
        home = MemoryHome(base / "projects", base / "personal")  # no personal memory: the project's alone
        project = Project(repo, "repo", (f"path:{repo}",), in_repository=True)
        sides = {
            "checked": SessionMemory(open_memory, workspace, Placement(home, project, "p", workspace, "b", None)),
            "unchecked": SessionMemory(open_memory, workspace, Placement(home, None, "p", workspace, "b", None)),
        }
        for q in queries[:20]:
            for side in sides.values():
                side.search(q)
        times: dict[str, list[float]] = {name: [] for name in sides}
        cpus: dict[str, list[float]] = {name: [] for name in sides}  # this thread's CPU: less of the machine's load
        judged = {"flagged": 0, "missed": 0, "present flagged": 0, "present": 0, "other flags": 0}
        for _ in range(args.rounds):
            for i, q in enumerate(queries):
                # Each side goes first on every other query: the second of a pair finds warm caches.
                for name, side in sorted(sides.items(), reverse=bool(i % 2)):
                    start, cpu = time.perf_counter(), time.thread_time()
                    side.search(q)
                    times[name].append(time.perf_counter() - start)
                    cpus[name].append(time.thread_time() - cpu)
        for q in queries:  # judged apart from the timed searches, which it would slow
            _judge(sides["checked"].search(q).results, fate, judged)
        first = []
        for i in range(5):  # a commit moves HEAD: the next search lists the tree and asks history again
            (repo / f"touch{i}.txt").write_text("x\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-qm", f"touch {i}")
            start = time.perf_counter()
            sides["checked"].search(queries[i])
            first.append((time.perf_counter() - start) * 1000)
    med = {name: statistics.median(v) * 1000 for name, v in times.items()}
    p95 = {name: _p95(v) for name, v in times.items()}
    cpu95 = {name: _p95(v) for name, v in cpus.items()}
    print(
        f"chunks {chunks:,} ({args.cited} notes naming paths); repository {args.files:,} files, 10% renamed, 10% removed"
    )
    print("| search | median ms | p95 ms | p95 CPU ms |")
    print("| --- | --- | --- | --- |")
    for name in sides:
        print(f"| {name} | {med[name]:.2f} | {p95[name]:.2f} | {cpu95[name]:.2f} |")
    ratio = {
        key: values["checked"] / values["unchecked"] for key, values in (("med", med), ("p95", p95), ("cpu", cpu95))
    }
    print(f"| ratio checked / unchecked | {ratio['med']:.3f}x | {ratio['p95']:.3f}x | {ratio['cpu']:.3f}x |")
    print(f"| first search after a commit (median of 5; max) | {statistics.median(first):.1f} | {max(first):.1f} | |")
    print()
    print("cited paths in hits (one round): " + ", ".join(f"{k} {v}" for k, v in judged.items()))


_CITED = re.compile(r"src/mod\d+/part\d+/file\d+\.py")


def _judge(hits: list[SearchHit], fate: dict[str, str], judged: dict[str, int]) -> None:
    for hit in hits:
        flagged = {ref.path for ref in hit.stale_refs}
        judged["other flags"] += len(flagged - set(fate))
        for path in set(_CITED.findall(hit.snippet)):
            what = fate.get(path)
            if what is None:
                continue
            if what == "present":
                judged["present"] += 1
                judged["present flagged"] += path in flagged
            else:
                judged["flagged" if path in flagged else "missed"] += 1


if __name__ == "__main__":
    main()
