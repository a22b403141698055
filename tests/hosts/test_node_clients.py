"""reme-mcp against the TypeScript MCP SDK from npm, over stdio and streamable HTTP.

The npm packages (pinned in tests/node/package.json) are installed once into a cache
outside the repository, keyed by the hash of package.json, and reused by later runs.
Everything here runs offline: the client only talks to servers started on this machine.
The hosts (Claude Code, Codex, ...) have end-to-end tests of their own, tests/test_host_*.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.cache import cache_root
from tests.processes import stop

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "node"
TOOLS = {"search", "read", "traverse", "daily_list", "remember"}
PASSPHRASE = "蓝鲸-731"


@pytest.fixture(scope="session")
def node_env() -> Path:
    """A directory holding the pinned npm packages and client.mjs, installed at most once."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the real-client tests (not found on PATH)")
    manifest = (NODE_DIR / "package.json").read_bytes()
    target = cache_root() / f"node-{hashlib.sha256(manifest).hexdigest()[:16]}"
    if not (target / ".installed").is_file():
        staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        (staging / "package.json").write_bytes(manifest)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=staging,
            check=True,
            timeout=900,
        )
        (staging / ".installed").write_text("ok\n", encoding="utf-8")
        try:
            staging.rename(target)
        except OSError:  # another run finished first; use its copy
            shutil.rmtree(staging, ignore_errors=True)
    # ESM resolves packages next to the importing file, so the client lives in the cache.
    shutil.copyfile(NODE_DIR / "client.mjs", target / "client.mjs")
    return target


def _run(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{argv[:3]} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _client_report(node_env: Path, *args: str) -> dict[str, Any]:
    out = _run(["node", str(node_env / "client.mjs"), *args], cwd=node_env)
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return report


def _assert_full_round_trip(report: dict[str, Any]) -> None:
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert set(tools) == TOOLS
    assert all(tool["hasOutputSchema"] for tool in tools.values())
    assert tools["remember"]["readOnly"] is False
    assert all(tools[name]["readOnly"] is True for name in TOOLS - {"remember"})
    calls = report["calls"]
    assert set(calls) == TOOLS
    for name, call in calls.items():
        assert call["isError"] is False, f"{name}: {call['text']}"
    path = calls["remember"]["structured"]["path"]
    assert path.startswith("daily/") and calls["remember"]["structured"]["created"] is True
    hits = calls["search"]["structured"]["results"]
    assert hits and hits[0]["path"] == path
    assert PASSPHRASE in hits[0]["snippet"] and "<reme-context" in hits[0]["snippet"]
    assert PASSPHRASE in calls["read"]["text"]
    assert path in json.dumps(calls["daily_list"]["structured"])
    assert path in json.dumps(calls["traverse"]["structured"])


def test_typescript_sdk_over_stdio(node_env: Path, tmp_path: Path) -> None:
    report = _client_report(node_env, "stdio", sys.executable, "-m", "reme_mcp", "--workspace", str(tmp_path))
    _assert_full_round_trip(report)
    assert report["server"]["name"] == "reme-mcp"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    workspace = tmp_path / "workspace"
    argv = [sys.executable, "-m", "reme_mcp", "serve", "--transport", "http", "--port", str(port)]
    server = subprocess.Popen(
        [*argv, "--workspace", str(workspace)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, f"server exited: {server.stderr.read() if server.stderr else ''}"
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                assert time.monotonic() < deadline, "reme-mcp HTTP server did not start listening in 30 s"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(server)


def test_typescript_sdk_over_streamable_http(node_env: Path, http_server: str) -> None:
    _assert_full_round_trip(_client_report(node_env, "http", http_server))
