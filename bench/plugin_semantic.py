"""What search by meaning costs the plugin's first start: the extra's build beside the plain
one (cold: a new uv cache; warm: the cache given), and the first session's first answer.

Each run copies the plugin (as a marketplace ships it) onto a new data folder and runs the
real launcher with the real uv against the package index:

- builds: `bin/reme-mcp --build-only` with REME_SEMANTIC=off (the plain environment), then
  with on (the extra's), timed each;
- first answer: a first start with nothing built, spawn to the answer of a `remember` call
  sent right after the handshake, with REME_SEMANTIC unset (the plugin's default) and off;
  for the default, then the wait until the extra's build in the background is done, and
  the next session's spawn to a `search` answer.

    python bench/plugin_semantic.py --uv-cache ~/.cache/reme-mcp-tests/uv-cache --runs 3
    python bench/plugin_semantic.py --uv-cache ~/.cache/reme-mcp-tests/uv-cache --runs 5 --warm-only
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from launcher import copy_plugin  # the plugin as a marketplace ships it

HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def environ(cache: Path, semantic: str | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "REME_SEMANTIC"}
    if semantic is not None:
        env["REME_SEMANTIC"] = semantic
    return {**env, "UV_CACHE_DIR": str(cache)}


def build_seconds(plugin: Path, data: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(data), "--build-only"]
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=1200)
    return time.perf_counter() - started


def first_answer(plugin: Path, data: Path, env: dict[str, str], tool: str, arguments: dict[str, Any]) -> float:
    """Spawn to the answer of one tool call sent right after the handshake."""
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(data), "--workspace", str(data / "w")]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    for message in [*HANDSHAKE, call]:
        proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    for line in iter(proc.stdout.readline, b""):
        answer = json.loads(line)
        if answer.get("id") == 3:
            seconds = time.perf_counter() - started
            assert "result" in answer and not answer["result"].get("isError"), answer
            break
    else:
        raise RuntimeError("the launcher ended without answering the tool call")
    proc.stdin.close()
    proc.wait(timeout=300)
    return seconds


def wait_for_extra(data: Path, timeout: float = 1200) -> float:
    started = time.perf_counter()
    while not list(data.glob("venvs/*-semantic/.reme-plugin-ready")):
        if time.perf_counter() - started > timeout:
            raise RuntimeError("the extra's build in the background did not finish")
        time.sleep(0.2)
    return time.perf_counter() - started


def summary(values: list[float]) -> str:
    shown = ", ".join(f"{value:.1f}" for value in values)
    return f"median {statistics.median(values):.1f} s ({shown})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uv-cache", type=Path, required=True, help="the warm uv cache")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm-only", action="store_true", help="no run on a new uv cache")
    args = parser.parse_args()
    if shutil.which("uv") is None:
        sys.exit("uv is not on PATH")
    rows: dict[str, list[float]] = {}
    note = {"content": "The resolver is pinned to version 7."}
    with tempfile.TemporaryDirectory(prefix="reme-plugin-semantic-") as folder:
        base = Path(folder)
        plugin = copy_plugin(base / "plugin")
        for run in range(args.runs):
            caches = [("cold", base / f"cache-{run}"), ("warm", args.uv_cache)]
            for cache_name, cache in caches[1:] if args.warm_only else caches:
                data = base / f"builds-{cache_name}-{run}"
                rows.setdefault(f"build, plain, {cache_name}", []).append(
                    build_seconds(plugin, data, environ(cache, "off"))
                )
                rows.setdefault(f"build, extra after plain, {cache_name}", []).append(
                    build_seconds(plugin, data, environ(cache, "on"))
                )
                for semantic in ("off", None):
                    fresh = base / f"cache-first-{run}-{semantic}" if cache_name == "cold" else cache
                    data = base / f"first-{cache_name}-{run}-{semantic}"
                    label = f"first answer, REME_SEMANTIC={semantic or 'unset'}, {cache_name}"
                    env = environ(fresh, semantic)
                    rows.setdefault(label, []).append(first_answer(plugin, data, env, "remember", note))
                    if semantic is None:
                        rows.setdefault(f"extra ready after the first session ended, {cache_name}", []).append(
                            wait_for_extra(data)
                        )
                        rows.setdefault(f"next session's first answer (the extra's), {cache_name}", []).append(
                            first_answer(plugin, data, env, "search", {"query": "resolver"})
                        )
                    shutil.rmtree(data)
                shutil.rmtree(base / f"builds-{cache_name}-{run}")
            for stale in base.glob("cache-*"):
                shutil.rmtree(stale)
    for label, values in rows.items():
        print(f"{label}: {summary(values)}")


if __name__ == "__main__":
    main()
