"""How long from spawning the stdio server to the answer of its first `search`, on a populated store.

The peer harness (../shared/peers/bench_mcp.py, `cold_starts`) measures "first result" so:
copy the store afresh, spawn the server, `initialize`, `tools/list`, then one search, each
sent once the previous answer is in (as its SDK client does). This does the same with raw
JSON-RPC lines: reme-mcp on a copy of a workspace (by default the harness's 2,000-note store,
indexed once beforehand under a bench HOME, as the harness's runs leave it), and, when it is
installed, server-memory (node) on a store populated once with the same notes through its
own `create_entities`, copied afresh the same way.

    python bench/first_result.py                   # 5 runs each, medians and the ratio
    python bench/first_result.py --runs 9 --store /path/to/workspace
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HARNESS_STORE = Path("/tmp/peers/runs/reme-mcp/store")
SM_JS = Path("/tmp/peers/npm-memory/node_modules/@modelcontextprotocol/server-memory/dist/index.js")
QUERY = "Kaezordax CI pipeline"
INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


class Stdio:
    """One spawned server spoken to line by line."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
        )

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)

    def call(self, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        return self.answer(request_id)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def open_session(argv: list[str], env: dict[str, str], cwd: Path) -> Stdio:
    server = Stdio(argv, env, cwd)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
    server.answer(1)
    server.send(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    )
    server.answer(2)
    return server


def first_result(argv: list[str], env: dict[str, str], cwd: Path, tool: str, arguments: dict[str, Any]) -> float:
    """Seconds from spawn to the first search's answer, which must be a result, not an error."""
    started = time.perf_counter()
    server = open_session(argv, env, cwd)
    answer = server.call(3, tool, arguments)
    elapsed = time.perf_counter() - started
    server.close()
    result = answer.get("result") or {}
    if "error" in answer or result.get("isError"):
        raise RuntimeError(f"{argv[0]}: the search failed: {answer}")
    if not result.get("content"):
        raise RuntimeError(f"{argv[0]}: the search found nothing: {answer}")
    return elapsed


def fresh(target: Path, snapshot: Path) -> None:
    """The store copied afresh to the same path, as the harness does before every run."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(snapshot, target, symlinks=True)


def reme_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REME_INDEX_DIR", "XDG_CACHE_HOME")}
    return {**env, "HOME": str(home)}


def sm_snapshot(workspace: Path, folder: Path) -> Path:
    """A server-memory store holding the workspace's notes, written by server-memory itself."""
    entities = []
    for note in sorted(workspace.glob("daily/*/*.md")):
        lines = note.read_text(encoding="utf-8").split("\n---\n", 1)[-1].splitlines()
        observations = [line.strip() for line in lines if line.strip() and not line.startswith("<!--")]
        if observations and note.stem != note.parent.name:
            entities.append({"name": note.stem, "entityType": "note", "observations": observations})
    snapshot = folder / "sm-snapshot"
    snapshot.mkdir()
    env = {**os.environ, "MEMORY_FILE_PATH": str(snapshot / "memory.jsonl")}
    server = open_session(["node", str(SM_JS)], env, snapshot)
    server.call(3, "create_entities", {"entities": entities})
    server.close()
    print(f"server-memory store: {len(entities)} entities from {workspace}")
    return snapshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="spawns per server (default 5)")
    parser.add_argument("--store", type=Path, default=HARNESS_STORE, help="the workspace to copy (not modified)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        home, workspace = folder / "home", folder / "store"
        home.mkdir()
        reme = [sys.executable, "-m", "reme_mcp", "--workspace", str(workspace)]
        servers: dict[str, tuple[list[str], dict[str, str], Path, Path, str, dict[str, Any]]] = {}
        fresh(workspace, args.store)
        # Indexed once at this path, as the harness's runs leave the index in the server's HOME.
        first_result(reme, reme_env(home), folder, "search", {"query": QUERY, "limit": 5})
        servers["reme-mcp"] = (reme, reme_env(home), workspace, args.store, "search", {"query": QUERY, "limit": 5})
        if SM_JS.is_file() and shutil.which("node"):
            snapshot, sm_store = sm_snapshot(args.store, folder), folder / "sm-store"
            env = {**os.environ, "MEMORY_FILE_PATH": str(sm_store / "memory.jsonl")}
            servers["server-memory"] = (["node", str(SM_JS)], env, sm_store, snapshot, "search_nodes", {"query": QUERY})
        times: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(args.runs):  # interleaved, so a neighbour's burst hits every column alike
            for name, (argv, env, store, snapshot, tool, arguments) in servers.items():
                fresh(store, snapshot)
                times[name].append(first_result(argv, env, folder, tool, arguments))
        print(
            f"spawn to first search answer, {args.runs} runs each, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
        )
        print(f"{'server':15} {'median s':>9} {'min s':>7} {'max s':>7}")
        for name, values in times.items():
            print(f"{name:15} {statistics.median(values):9.3f} {min(values):7.3f} {max(values):7.3f}")
        if "server-memory" in times:
            ratio = statistics.median(times["reme-mcp"]) / statistics.median(times["server-memory"])
            print(f"reme-mcp / server-memory: {ratio:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
