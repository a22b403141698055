"""reme-mcp beside the MCP memory servers people already use, through the peer harness in ../shared/peers/.

The harness (its README says how) writes 2,000 notes in English, Chinese and mixed
text through each server's own write tool over stdio, then runs 300 queries cut
verbatim from one target note. This script runs it with this checkout's reme-mcp:

    python bench/peers.py --seed 1                    # reme-mcp and every peer installed (about 40 min)
    python bench/peers.py --seed 1 --servers reme-mcp,server-memory
    python bench/peers.py --seed 1 --in-process       # reme-mcp's recall only, in seconds

``--in-process`` draws the same corpus and queries from the harness, writes the notes
as `remember` lays them out (daily notes and their day index), and searches them
through ``Memory.search``, the operation the ``search`` tool calls: the quick loop for
judging a ranking change on several seeds. Its latencies leave out MCP and the process
boundary; the harness's own run is the one to quote beside the peers.

``REME_SEMANTIC=off|on`` sets the search by meaning of the server the harness starts (by
default it is on when the extra is installed).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HARNESS = ROOT.parent / "shared" / "peers"
DEFAULT_SERVERS = "reme-mcp,server-memory,mcp-memory-service,basic-memory"
DAY = "2026-11-28"


def load_harness(harness: Path) -> ModuleType:
    """bench_mcp.py as a module, for its corpus and queries (it needs mcp, anyio and psutil)."""
    spec = importlib.util.spec_from_file_location("bench_mcp", harness / "bench_mcp.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"peers: cannot load {harness / 'bench_mcp.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_mcp"] = module  # its dataclasses look themselves up there
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise SystemExit(f"peers: the harness needs {exc.name} in this interpreter: pip install {exc.name}") from exc
    return module


def write_notes(root: Path, notes: list[Any]) -> None:
    """The notes written as the harness writes them: one `remember` each, on one day."""
    from dataclasses import replace

    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory

    writer = Memory(replace(load_settings(workspace=str(root)), semantic="off"))
    for note in notes:
        writer.remember(f"# {note.title}\n\n{note.text}", name=note.title, date=DAY)
    writer.finish()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def in_process(harness: Path, seed: int, n_notes: int, n_queries: int, k: int, misses: int) -> int:
    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory

    bench = load_harness(harness)
    notes = bench.make_corpus(n_notes, seed)
    queries = bench.make_queries(notes, n_queries - n_queries // 2, n_queries // 2, seed)
    with tempfile.TemporaryDirectory(prefix="reme-peers-") as tmp:
        root = Path(tmp) / "ws"
        write_notes(root, notes)
        memory = Memory(load_settings(workspace=str(root)))
        memory.index.rebuild()
        memory.search("warm up")
        if memory.index.semantic is not None:  # the stage on: searched once every note is embedded
            memory.index.semantic.wait(3600)
        found: dict[str, list[int]] = {"en": [], "zh": []}
        times: dict[str, list[float]] = {"en": [], "zh": []}
        chars: list[int] = []
        missed: list[str] = []
        for query in queries:
            started = time.perf_counter()
            result = memory.search(query.text, limit=k)
            times[query.lang].append((time.perf_counter() - started) * 1000)
            paths = [hit.path for hit in result.results]
            hit = any(query.target in path for path in paths)
            found[query.lang].append(hit)
            chars += [len(h.snippet) for h in result.results]
            if not hit:
                missed.append(f"  {query.lang} {query.text!r} -> {query.target}; got {[p[17:23] for p in paths]}")
    print(f"peer harness seed {seed}, in process: {len(notes)} notes, {len(queries)} queries, reme-mcp at {ROOT}")
    print(f"{'lang':<5}{'n':>5}{f'recall@{k}':>11}{'p50 ms':>9}{'p95 ms':>9}")
    for lang in ("en", "zh"):
        n = len(found[lang])
        recall = sum(found[lang]) / n if n else 0.0
        print(f"{lang:<5}{n:>5}{recall:>11.3f}{statistics.median(times[lang]):>9.2f}{pct(times[lang], 95):>9.2f}")
    print(f"snippet characters per hit: {statistics.mean(chars):.0f} (mean)")
    if misses:
        print(f"first {min(misses, len(missed))} of {len(missed)} misses:")
        print("\n".join(missed[:misses]))
    return 0


def through_harness(harness: Path, peers_dir: Path, args: argparse.Namespace) -> int:
    client = peers_dir / "clientv" / "bin" / "python"
    if not client.exists():
        print(
            f"peers: the peer servers are not installed under {peers_dir} (no {client}): install them with "
            f"`PEERS_DIR={peers_dir} bash {harness / 'setup_peers.sh'}` (about 3 minutes, PyPI and npm only), "
            "or run reme-mcp alone with --in-process",
            file=sys.stderr,
        )
        return 2
    reme = Path(sys.executable).with_name("reme-mcp")
    if not reme.exists():
        print(f"peers: no reme-mcp next to {sys.executable}: `pip install -e .` this checkout first", file=sys.stderr)
        return 2
    mode = os.environ.get("REME_SEMANTIC")
    if mode:
        # The harness starts each server with an environment of its own (HOME and the server's
        # variables), so the stage's mode reaches reme-mcp as its flag.
        launcher = peers_dir / f"reme-mcp-semantic-{mode}"
        launcher.write_text(f'#!/bin/sh\nexec {shlex.quote(str(reme))} --semantic {shlex.quote(mode)} "$@"\n')
        launcher.chmod(0o755)
        reme = launcher
    env = {**os.environ, "PEERS_DIR": str(peers_dir), "REME_MCP_CMD": str(reme)}
    script = str(harness / "bench_mcp.py")
    print(f"peers: harness {script}, servers installed under {peers_dir}, reme-mcp {reme}")
    subprocess.run([str(client), script, "--list"], env=env, check=False)
    out = peers_dir / f"results-seed{args.seed}.json"
    md = peers_dir / f"RESULTS-seed{args.seed}.md"
    command = [str(client), script, "--servers", args.servers, "--seed", str(args.seed), "--out", str(out)]
    command += ["--md", str(md), "--notes", str(args.notes), "--queries", str(args.queries)]
    command += ["--quick"] if args.quick else []
    print("peers: " + " ".join(command), flush=True)
    done = subprocess.run(command, env=env, check=False)
    if md.exists():
        print(md.read_text(encoding="utf-8"))
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=1, help="the corpus and queries drawn (default: %(default)s)")
    parser.add_argument("--servers", default=DEFAULT_SERVERS, help="harness adapters to run (default: %(default)s)")
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300, help="half English, half Chinese")
    parser.add_argument("--quick", action="store_true", help="the harness's smoke test: 60 notes, 20 queries")
    parser.add_argument("--in-process", action="store_true", help="reme-mcp's recall only, through Memory.search")
    parser.add_argument("--misses", type=int, default=0, help="with --in-process: print this many missed queries")
    parser.add_argument("--harness", type=Path, default=DEFAULT_HARNESS, help="default: %(default)s")
    parser.add_argument(
        "--peers-dir",
        type=Path,
        default=Path(os.environ.get("PEERS_DIR") or Path(tempfile.gettempdir()) / "peers"),
        help="where setup_peers.sh installed the servers (default: $PEERS_DIR or %(default)s)",
    )
    args = parser.parse_args(argv)
    if not (args.harness / "bench_mcp.py").is_file():
        print(
            f"peers: no peer harness at {args.harness}: pass --harness with the folder of bench_mcp.py", file=sys.stderr
        )
        return 2
    if args.in_process:
        return in_process(args.harness, args.seed, args.notes, args.queries, 5, args.misses)
    return through_harness(args.harness, args.peers_dir, args)


if __name__ == "__main__":
    sys.exit(main())
