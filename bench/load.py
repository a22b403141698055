"""Load run over loopback HTTP: concurrent MCP clients against a real `reme-mcp serve --transport http`.

    python bench/load.py [--clients 16] [--calls 200] [--rounds 4] [--notes 300] [--json PATH]

Each round, every client makes `--calls` mixed calls (search, read, daily_list,
remember) over its own MCP session. Reports errors, p50/p95 latency per tool,
and the server's RSS after each round (it must level off, not grow with the
number of calls). Not part of the unit tests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import psutil  # type: ignore[import-untyped]
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = "load-" + os.urandom(16).hex()
WORDS = [
    "go",
    "rust",
    "python",
    "backend",
    "release",
    "freeze",
    "deploy",
    "review",
    "design",
    "budget",
    "travel",
    "coffee",
    "tea",
    "meeting",
]
MIX = [("search", 50), ("read", 20), ("daily_list", 15), ("remember", 15)]


def seed(ws: Path, notes: int) -> list[str]:
    rng = random.Random(1)
    paths = []
    for i in range(notes):
        day = f"2026-11-{1 + i % 28:02d}"
        rel = f"daily/{day}/note-{i}.md"
        text = " ".join(rng.choice(WORDS) for _ in range(60))
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"---\nname: note-{i}\ndescription: Note {i}\n---\n{text}\n", encoding="utf-8")
        paths.append(rel)
    return paths


def start_server(ws: Path) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "REME_MCP_TOKEN": TOKEN}
    cmd = [sys.executable, "-m", "reme_mcp", "serve", "-w", str(ws), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def arguments(tool: str, rng: random.Random, paths: list[str], tag: str) -> dict[str, Any]:
    if tool == "search":
        return {"query": " ".join(rng.sample(WORDS, 2)), "limit": 5}
    if tool == "read":
        return {"path": rng.choice(paths)}
    if tool == "daily_list":
        return {"date": f"2026-11-{rng.randint(1, 28):02d}"} if rng.random() < 0.5 else {"limit": 7}
    return {"content": f"Load fact {tag}: {' '.join(rng.sample(WORDS, 5))}.", "request_id": f"load-{tag}"}


async def client_run(
    url: str,
    calls: int,
    seed_no: int,
    round_no: int,
    paths: list[str],
    latencies: dict[str, list[float]],
    errors: list[str],
) -> None:
    rng = random.Random(seed_no * 1000 + round_no)
    tools = [t for t, _ in MIX]
    weights = [w for _, w in MIX]
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        for i in range(calls):
            tool = rng.choices(tools, weights)[0]
            args = arguments(tool, rng, paths, f"{seed_no}-{round_no}-{i}")
            began = time.perf_counter()
            try:
                result = await client.call_tool(tool, args)
                if result.is_error:
                    errors.append(f"{tool}: {result.content[0].text if result.content else '?'}")  # type: ignore[union-attr]
            except Exception as exc:  # a transport error counts as an error, not a crash of the run
                errors.append(f"{tool}: {exc!r}")
            latencies[tool].append(time.perf_counter() - began)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--calls", type=int, default=200, help="calls per client per round")
    parser.add_argument("--rounds", type=int, default=4, help="rounds (RSS is sampled after each)")
    parser.add_argument("--notes", type=int, default=300, help="notes in the seeded workspace")
    parser.add_argument("--json", dest="json_path", help="also write the results as JSON here")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="reme-load-") as tmp:
        os.environ.setdefault("REME_INDEX_DIR", str(Path(tmp) / "index-home"))  # the server inherits it
        ws = Path(tmp) / "ws"
        paths = seed(ws, opts.notes)
        proc, port = start_server(ws)
        url = f"http://127.0.0.1:{port}/mcp"
        server = psutil.Process(proc.pid)
        latencies: dict[str, list[float]] = defaultdict(list)
        errors: list[str] = []
        rss: list[float] = [server.memory_info().rss / 2**20]
        began = time.perf_counter()
        try:
            for round_no in range(opts.rounds):

                async def one_round(round_no: int = round_no) -> None:
                    async with anyio.create_task_group() as tg:
                        for c in range(opts.clients):
                            tg.start_soon(client_run, url, opts.calls, c, round_no, paths, latencies, errors)

                anyio.run(one_round)
                rss.append(server.memory_info().rss / 2**20)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        elapsed = time.perf_counter() - began

    total = sum(len(v) for v in latencies.values())
    rows = [
        {
            "tool": tool,
            "calls": len(latencies[tool]),
            "p50_ms": round(percentile(latencies[tool], 0.50) * 1000, 1),
            "p95_ms": round(percentile(latencies[tool], 0.95) * 1000, 1),
            "mean_ms": round(statistics.fmean(latencies[tool]) * 1000, 1) if latencies[tool] else 0.0,
        }
        for tool, _ in MIX
    ]
    print(f"reme-mcp load: {opts.clients} clients x {opts.calls} calls x {opts.rounds} rounds over loopback HTTP")
    print(f"{total} calls in {elapsed:.1f} s ({total / elapsed:.0f} calls/s), errors: {len(errors)}")
    print(f"{'tool':<12}{'calls':>8}{'p50 ms':>10}{'p95 ms':>10}{'mean ms':>10}")
    for row in rows:
        print(f"{row['tool']:<12}{row['calls']:>8}{row['p50_ms']:>10}{row['p95_ms']:>10}{row['mean_ms']:>10}")
    print("server RSS MB after each round: " + ", ".join(f"{r:.0f}" for r in rss))
    for err in errors[:5]:
        print(f"error: {err}")
    if opts.json_path:
        report = {
            "clients": opts.clients,
            "calls_per_client": opts.calls,
            "rounds": opts.rounds,
            "total_calls": total,
            "seconds": round(elapsed, 2),
            "errors": len(errors),
            "error_samples": errors[:20],
            "tools": rows,
            "rss_mb": [round(r, 1) for r in rss],
        }
        Path(opts.json_path).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
