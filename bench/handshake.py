"""How long from spawning the stdio server to the answer of `tools/list`, beside the bare SDK floor.

Hosts give a server about a second (Codex starts its first turn after ~1 s, Hermes after
`mcp_discovery_timeout` = 1.5 s) and then run the whole session without the tools that
were late. This spawns each server as a host does, writes `initialize`,
`notifications/initialized` and `tools/list` at once, and times until the `tools/list`
answer arrives. The floor is the same exchange with a bare `MCPServer` holding five
trivial tools (SDK import plus serving, nothing of reme-mcp). `--busy` repeats every
measurement while another process keeps one core spinning.

Targets: reme-mcp <= 0.35 s median idle on 2 cores, < 1.0 s with one core busy.

    python bench/handshake.py              # idle, then one core busy
    python bench/handshake.py --runs 5 --no-busy
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = """
from mcp.server import MCPServer

server = MCPServer("floor")
for name in ("search", "read", "traverse", "daily_list", "remember"):
    def tool(text: str = "") -> str:
        return text
    tool.__name__ = name
    server.tool(name=name)(tool)
server.run("stdio")
"""

INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
WIRE = b"".join(
    json.dumps(message).encode() + b"\n"
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
)


def spawn_to_tools(argv: list[str]) -> float:
    """Seconds from spawn to the tools/list answer (which must list five tools)."""
    started = time.perf_counter()
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(WIRE)
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv[0]} closed stdout before answering tools/list")
            answer = json.loads(line)
            if answer.get("id") == 2:
                elapsed = time.perf_counter() - started
                assert len(answer["result"]["tools"]) == 5, answer
                break
        proc.stdin.close()
        proc.wait(timeout=30)
    return elapsed


def _spin() -> None:
    while True:
        pass


def measure(servers: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    # Interleaved, so a neighbour's burst on a shared machine hits every column alike.
    times: dict[str, list[float]] = {name: [] for name in servers}
    for argv in servers.values():
        spawn_to_tools(argv)  # warms the file cache; not counted
    for _ in range(runs):
        for name, argv in servers.items():
            times[name].append(spawn_to_tools(argv))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11, help="spawns per server and mode (default 11)")
    parser.add_argument("--no-busy", action="store_true", help="skip the one-core-busy mode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        floor = Path(folder) / "floor.py"
        floor.write_text(FLOOR, encoding="utf-8")
        servers = {
            "reme-mcp": [sys.executable, "-m", "reme_mcp", "--workspace", str(Path(folder) / "memory")],
            "bare SDK (floor)": [sys.executable, str(floor)],
        }
        modes = [("idle", False)] + ([] if args.no_busy else [("one core busy", True)])
        print(
            f"spawn to tools/list answer, {args.runs} runs each, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
        )
        print(f"{'mode':15} {'server':18} {'median s':>9} {'min s':>7} {'max s':>7}")
        for mode, busy in modes:
            spinner = multiprocessing.Process(target=_spin, daemon=True) if busy else None
            if spinner is not None:
                spinner.start()
            try:
                results = measure(servers, args.runs)
            finally:
                if spinner is not None:
                    spinner.terminate()
                    spinner.join()
            for name, values in results.items():
                print(f"{mode:15} {name:18} {statistics.median(values):9.3f} {min(values):7.3f} {max(values):7.3f}")


if __name__ == "__main__":
    main()
