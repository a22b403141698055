"""reme-mcp against real clients from npm: the TypeScript MCP SDK, Claude Code and Codex.

The npm packages (pinned in tests/node/package.json) are installed once into a cache
outside the repository, keyed by the hash of package.json, and reused by later runs.
Everything here runs offline: the clients only talk to servers started on this machine,
and every client gets its own temporary HOME so a developer's configuration is untouched.
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

from tests.hosts.cache import uv_bin

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[1]
NODE_DIR = ROOT / "tests" / "node"
# What a plugin install copies: the manifests, the skill, and the code uv builds the server from.
PLUGIN_FILES = (
    "plugin.json",
    "mcp.json",
    ".claude-plugin",
    ".codex-plugin",
    ".agents",
    "skills",
    "pyproject.toml",
    "README.md",
    "reme_mcp",
)
TOOLS = {"search", "read", "traverse", "daily_list", "remember"}
PASSPHRASE = "蓝鲸-731"


def _cache_root() -> Path:
    configured = os.environ.get("REME_MCP_TEST_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reme-mcp-tests"


@pytest.fixture(scope="session")
def node_env() -> Path:
    """A directory holding the pinned npm packages and client.mjs, installed at most once."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the real-client tests (not found on PATH)")
    manifest = (NODE_DIR / "package.json").read_bytes()
    target = _cache_root() / f"node-{hashlib.sha256(manifest).hexdigest()[:16]}"
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


def _bin(node_env: Path, name: str) -> str:
    return str(node_env / "node_modules" / ".bin" / name)


def _isolated_env(home: Path, *, path_prefix: Path | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE", "CODEX", "REME_"))}
    for config_dir in (".claude", ".codex"):  # Codex refuses a CODEX_HOME that does not exist
        (home / config_dir).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CODEX_HOME=str(home / ".codex"),
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    return env


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
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_typescript_sdk_over_streamable_http(node_env: Path, http_server: str) -> None:
    _assert_full_round_trip(_client_report(node_env, "http", http_server))


@pytest.fixture
def plugin_copy(tmp_path: Path) -> Path:
    """The plugin as it ships, without a developer's virtualenvs or caches."""
    target = tmp_path / "reme-mcp-plugin"
    target.mkdir()
    for name in PLUGIN_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def test_claude_plugin_validate(node_env: Path, plugin_copy: Path, tmp_path: Path) -> None:
    env = _isolated_env(tmp_path / "home")
    claude = _bin(node_env, "claude")
    manifests = ROOT / ".claude-plugin"
    for target in (manifests / "plugin.json", manifests / "marketplace.json", plugin_copy):
        out = _run([claude, "plugin", "validate", str(target)], env=env)
        assert "Validation passed" in out, out
    out = _run([claude, "plugin", "validate", str(ROOT / ".claude-plugin" / "plugin.json")], env=env)
    assert "reme-mcp:reme-memory" in out and "mcpServers: reme" in out


def test_claude_mcp_add_then_list_reports_connected(node_env: Path, tmp_path: Path) -> None:
    home, workdir = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    workdir.mkdir()
    env = _isolated_env(home)
    claude = _bin(node_env, "claude")
    workspace = tmp_path / "memory"
    add = [claude, "mcp", "add", "--scope", "user", "reme", "--", sys.executable, "-m", "reme_mcp"]
    _run([*add, "--workspace", str(workspace)], env=env, cwd=workdir)
    out = _run([claude, "mcp", "list"], env=env, cwd=workdir)
    line = next(line for line in out.splitlines() if line.startswith("reme:"))
    assert "Connected" in line, out


def _with_uv(env: dict[str, str]) -> dict[str, str]:
    """The real uv/uvx from PyPI first on PATH: the plugins launch `uvx --from <plugin root>`."""
    return {**env, "PATH": f"{uv_bin()}{os.pathsep}{env.get('PATH', '')}"}


def test_claude_marketplace_install_starts_one_connected_server(
    node_env: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _with_uv(_isolated_env(home))
    claude = _bin(node_env, "claude")
    _run([claude, "plugin", "marketplace", "add", str(plugin_copy)], env=env, cwd=tmp_path)
    _run([claude, "plugin", "install", "reme-mcp@reme-mcp"], env=env, cwd=tmp_path)
    # The first start builds the plugin's own code with uv (no package index entry needed).
    out = _run([claude, "mcp", "list"], env=env, cwd=tmp_path)
    servers = [line for line in out.splitlines() if "reme" in line and ":" in line]
    assert len(servers) == 1, out  # the plugin's server, once: no second copy from a root .mcp.json
    assert servers[0].startswith("plugin:reme-mcp:reme") and "Connected" in servers[0], out
    # A local marketplace's plugin runs from its folder: the code it ships, not the package index's.
    assert f"uvx --from {plugin_copy} reme-mcp" in servers[0], out


def test_codex_plugin_and_mcp_add(node_env: Path, plugin_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _isolated_env(home)
    codex = _bin(node_env, "codex")
    _run([codex, "plugin", "marketplace", "add", str(plugin_copy)], env=env, cwd=tmp_path)
    _run([codex, "plugin", "add", "reme-mcp@reme-mcp"], env=env, cwd=tmp_path)
    listed = {server["name"]: server for server in json.loads(_run([codex, "mcp", "list", "--json"], env=env))}
    transport = listed["reme"]["transport"]
    assert transport["command"] == "uvx"
    assert transport["args"][0] == "--from" and transport["args"][2] == "reme-mcp"
    plugin_root = Path(transport["args"][1])
    assert plugin_root.is_relative_to(home / ".codex" / "plugins"), plugin_root
    assert (plugin_root / "pyproject.toml").is_file() and (plugin_root / "reme_mcp" / "server.py").is_file()
    workspace = transport["args"][transport["args"].index("--workspace") + 1]
    assert workspace.startswith(str(home / ".codex" / "plugins" / "data")) and workspace.endswith("/workspace")

    _run([codex, "plugin", "remove", "reme-mcp@reme-mcp"], env=env, cwd=tmp_path)
    memory = tmp_path / "memory"
    _run([codex, "mcp", "add", "reme", "--", sys.executable, "-m", "reme_mcp", "--workspace", str(memory)], env=env)
    listed = {server["name"]: server for server in json.loads(_run([codex, "mcp", "list", "--json"], env=env))}
    assert listed["reme"]["transport"]["args"] == ["-m", "reme_mcp", "--workspace", str(memory)]
