"""bin/reme-mcp, the launcher every plugin manifest starts: the first start builds the plugin's
environment with the real uv, later starts run it with no uv and no package index.

Each test runs the launcher from a copy of the plugin as a host would, on its own data folder,
and speaks MCP to it over stdio."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.hosts.acceptance import copy_plugin
from tests.hosts.cache import cache_root, uv_bin
from tests.hosts.script import REME_TOOLS

HANDSHAKE = b"".join(
    json.dumps(message).encode() + b"\n"
    for message in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
)


def _env(*, with_uv: bool) -> dict[str, str]:
    path = os.environ["PATH"]
    if with_uv:
        path = f"{uv_bin()}{os.pathsep}{path}"
    else:
        # Whatever else the machine has stays; only folders holding a uv go.
        path = os.pathsep.join(part for part in path.split(os.pathsep) if not (Path(part) / "uv").exists())
    return {**os.environ, "PATH": path, "UV_CACHE_DIR": str(cache_root() / "uv-cache")}


def _start(plugin: Path, data: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(data), "--workspace", str(data / "workspace")]
    return subprocess.Popen(
        argv, cwd=plugin, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _tools(proc: subprocess.Popen[bytes]) -> tuple[list[str], bytes]:
    """Sends the handshake, closes stdin, and returns the tools listed and all of stderr; every
    stdout line must be a JSON-RPC message (the build must not write there)."""
    out, err = proc.communicate(HANDSHAKE, timeout=300)
    messages = [json.loads(line) for line in out.splitlines()]
    assert all(message.get("jsonrpc") == "2.0" for message in messages), out[:2000]
    (listed,) = [message for message in messages if message.get("id") == 2]
    return sorted(tool["name"] for tool in listed["result"]["tools"]), err


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_plugin(tmp_path_factory.mktemp("launcher") / "reme-mcp")


@pytest.fixture(scope="module")
def built(plugin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder after two sessions started together on it, before anything was built."""
    data = tmp_path_factory.mktemp("data")
    procs = [_start(plugin, data, _env(with_uv=True)) for _ in range(2)]
    for proc in procs:
        tools, err = _tools(proc)
        assert tools == sorted(REME_TOOLS), err.decode(errors="replace")
        assert b"building its environment" in err, err
    return data


def test_two_first_starts_at_once_both_serve_and_leave_one_environment(built: Path) -> None:
    venvs = built / "venvs"
    assert [path.name for path in venvs.iterdir() if path.name.startswith(".build")] == []
    (environment,) = list(venvs.iterdir())
    assert (environment / ".reme-plugin-ready").is_file()


def test_a_later_start_needs_no_uv_and_builds_nothing(plugin: Path, built: Path) -> None:
    env = _env(with_uv=False)
    assert shutil.which("uv", path=env["PATH"]) is None
    tools, err = _tools(_start(plugin, built, env))
    assert tools == sorted(REME_TOOLS), err
    assert b"building" not in err, err


def test_changed_code_is_rebuilt_even_when_the_host_ends_the_first_start(plugin: Path, built: Path) -> None:
    def environments() -> set[str]:
        return {path.name for path in (built / "venvs").iterdir() if not path.name.startswith(".")}

    before = environments()
    module = plugin / "reme_mcp" / "__init__.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")

    # Without uv a changed plugin cannot start: one line on stderr, nothing on stdout.
    proc = _start(plugin, built, _env(with_uv=False))
    out, err = proc.communicate(HANDSHAKE, timeout=60)
    assert proc.returncode == 127 and out == b"", (out, err)
    assert err.decode().strip().splitlines() == [
        "reme-mcp: the plugin's first start builds the server with uv, which is not on PATH; "
        "install it (pip install uv) and restart"
    ]

    # A host that gives up on a slow first start ends the launcher; the build goes on.
    proc = _start(plugin, built, _env(with_uv=True))
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 240
    while not (new := environments() - before):
        assert time.monotonic() < deadline, "the build did not finish after the launcher was ended"
        time.sleep(0.5)
    (name,) = new
    while not (built / "venvs" / name / ".reme-plugin-ready").is_file():
        assert time.monotonic() < deadline, "the build did not finish after the launcher was ended"
        time.sleep(0.5)
    tools, err = _tools(_start(plugin, built, _env(with_uv=False)))
    assert tools == sorted(REME_TOOLS), err


def test_an_unexpanded_placeholder_is_one_clear_line(plugin: Path, tmp_path: Path) -> None:
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", "${PLUGIN_DATA}", "--workspace", "${PLUGIN_DATA}/w"]
    done = subprocess.run(argv, cwd=tmp_path, env=_env(with_uv=True), input=HANDSHAKE, capture_output=True, timeout=60)
    assert done.returncode == 2 and done.stdout == b"", done
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("reme-mcp: the host passed the plugin's data folder unexpanded (${PLUGIN_DATA})"), line
    assert list(tmp_path.iterdir()) == []
