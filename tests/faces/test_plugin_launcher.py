"""bin/reme-mcp, the launcher every plugin manifest starts: its first start answers the handshake at
once while it builds the plugin's environment with the real uv, and serves tool calls once built;
later starts run the environment with no uv and no package index.

Each test runs the launcher from a copy of the plugin as a host would, on its own data folder,
and speaks MCP to it over stdio."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from reme_mcp.faces.stdio.recorder import envelope
from tests.hosts.acceptance import copy_plugin, no_environment_built, one_core_busy
from tests.hosts.cache import cache_root, uv_bin
from tests.hosts.script import REME_TOOLS

# Codex starts its first turn about a second after it spawned an optional server.
HOST_GRACE_S = 1.0
UV_MISSING = (
    "reme-mcp: the plugin's first start builds the server with uv, which is not on PATH; "
    "install it (pip install uv) and restart"
)


def _initialize(version: str, request_id: int = 1) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
MODERN = ("2026-07-28",)


def _listen(version: str) -> dict[str, Any]:
    """A `subscriptions/listen` stream asking for more than reme has, as a client may."""
    kinds = {"toolsListChanged": True, "promptsListChanged": False, "resourceSubscriptions": ["memory://x"]}
    params = {"_meta": envelope(version, "t"), "notifications": kinds}
    return {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen", "params": params}


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


# What Claude Code sets for a plugin's servers; bin/reme-mcp serves the MCP prompts only then.
CLAUDE_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR")


def _env(*, with_uv: bool) -> dict[str, str]:
    path = os.environ["PATH"]
    if with_uv:
        path = f"{uv_bin()}{os.pathsep}{path}"
    else:
        # Whatever else the machine has stays; only folders holding a uv go.
        path = os.pathsep.join(part for part in path.split(os.pathsep) if not (Path(part) / "uv").exists())
    # Not started by Claude Code (no CLAUDE_* of the person running the tests): no prompts.
    kept = {key: value for key, value in os.environ.items() if key not in CLAUDE_VARIABLES}
    return {**kept, "PATH": path, "UV_CACHE_DIR": str(cache_root() / "uv-cache")}


class Connection:
    """One server process spoken to as a host does: a line per message, answers read as they come."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)

    def tell(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 300) -> dict[str, Any]:
        """The next message; every stdout line must be a JSON-RPC message."""
        message: dict[str, Any] = json.loads(self.lines.get(timeout=timeout))
        assert message.get("jsonrpc") == "2.0", message
        self.seen.append(message)
        return message

    def ask(self, message: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
        """The answer to this request."""
        self.tell(message)
        while True:
            answer = self.next(timeout)
            if answer.get("id") == message["id"] and "method" not in answer:
                return answer

    def handshake(self, version: str = "2025-06-18") -> tuple[float, list[str]]:
        """Seconds from spawn to the tools/list answer, and the tools it listed.

        A 2026-07-28 version talks as Claude Code does: `server/discover`, then a
        `subscriptions/listen` stream whose acknowledgement it waits for, then `tools/list`."""
        if version in MODERN:
            meta = {"_meta": envelope(version, "t")}
            assert "result" in self.ask({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": meta})
            self.tell(_listen(version))
            ack = self.next()
            assert ack["method"] == "notifications/subscriptions/acknowledged", ack
            listed = self.ask({**TOOLS_LIST, "params": meta})
        else:
            assert "result" in self.ask(_initialize(version))
            self.tell(INITIALIZED)
            listed = self.ask(TOOLS_LIST)
        return time.perf_counter() - self.started, sorted(tool["name"] for tool in listed["result"]["tools"])

    def close(self, timeout: float = 300) -> tuple[int, str, bytes]:
        """Closes stdin; the exit code, stderr, and whatever stdout still held."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.stderr is not None
        err = self.proc.stderr.read()
        code = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=timeout)
        rest = b"".join(self.lines.get() for _ in range(self.lines.qsize()))
        self.seen += [json.loads(line) for line in rest.splitlines()]
        return code, err.decode(errors="replace"), rest


def _ended(connection: Connection, timeout: float) -> int:
    """The exit code; a process still there after `timeout` fails the test with where each of its
    threads waits (their names and kernel wait channels) and its stderr."""
    try:
        return connection.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        threads = []
        for task in sorted(Path(f"/proc/{connection.proc.pid}/task").glob("*")):
            try:
                name = (task / "comm").read_text().strip()
                state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
                threads.append(f"{name} {state} {(task / 'wchan').read_text().strip()}")
            except OSError:
                continue
        connection.proc.kill()
        # What stderr holds now, without waiting for its end: a server it started may hold it open.
        err = b""
        if connection.proc.stderr is not None:
            os.set_blocking(connection.proc.stderr.fileno(), False)
            with contextlib.suppress(OSError):
                err = os.read(connection.proc.stderr.fileno(), 1 << 16)
        shown = err.decode(errors="replace")[-2000:]
        raise AssertionError(f"still running after {timeout} s; threads: {threads}; stderr: {shown}") from None


def _launch(plugin: Path, data: Path, env: dict[str, str]) -> Connection:
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(data), "--workspace", str(data / "workspace")]
    return Connection(argv, env, plugin)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_plugin(tmp_path_factory.mktemp("launcher") / "reme-mcp")


@pytest.fixture(scope="module")
def first_starts(plugin: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """Two sessions started together on a data folder where nothing was built, one core busy:
    each handshakes, then calls `remember`, then closes its stdin."""
    data = tmp_path_factory.mktemp("data")
    assert no_environment_built(data)
    records: list[dict[str, Any]] = []
    with one_core_busy():
        connections = [_launch(plugin, data, _env(with_uv=True)) for _ in range(2)]
        # One talks as Codex does (2025-06-18), the other as Claude Code does (2026-07-28).
        for connection, version in zip(connections, ("2025-06-18", *MODERN), strict=True):
            seconds, tools = connection.handshake(version)
            records.append({"handshake_s": seconds, "tools": tools, "version": version})
        for number, (connection, record) in enumerate(zip(connections, records, strict=True)):
            fact = {"content": f"Launcher fact {number}: the build finished before this was stored."}
            call = _call(3, "remember", fact)
            if record["version"] in MODERN:
                call["params"]["_meta"] = envelope(record["version"], "t")
            if record["version"] in MODERN:
                # This one closes its stdin right after the call, as a one-shot client does: the
                # launcher still waits for the build and delivers the answer before it exits.
                connection.tell(call)
                record["code"], record["stderr"], record["rest"] = connection.close()
                (record["remember"],) = [message for message in connection.seen if message.get("id") == 3]
            else:
                record["remember"] = connection.ask(call)
                record["code"], record["stderr"], record["rest"] = connection.close()
            record["remember_s"] = time.perf_counter() - connection.started
            record["seen"] = connection.seen
    for record in records:
        print(
            f"first start: tools/list after {record['handshake_s']:.3f} s, remember after {record['remember_s']:.1f} s"
        )
    return data, records


def test_a_first_start_answers_the_handshake_at_once_and_the_tool_call_once_built(
    first_starts: tuple[Path, list[dict[str, Any]]],
) -> None:
    data, records = first_starts
    for record in records:
        assert record["tools"] == sorted(REME_TOOLS), record
        assert record["handshake_s"] < HOST_GRACE_S, record
        result = record["remember"]["result"]
        assert not result["isError"] and result["content"][0]["text"].startswith("Stored "), result
        assert record["code"] == 0, record
        # Each request answered once, each listen stream acknowledged once: the server's answers to
        # what was answered early are dropped.
        answered = [message.get("id") for message in record["seen"] if "method" not in message]
        assert len(answered) == len(set(answered)), answered
        acks = [message for message in record["seen"] if message.get("method", "").endswith("acknowledged")]
        assert len(acks) == (1 if record["version"] in MODERN else 0), record["seen"]
        # What is left once stdin closes: the answer still owed, and at most the end of the listen stream.
        left = {json.loads(line).get("id") for line in record["rest"].splitlines()}
        assert left <= ({3, "listen:0"} if record["version"] in MODERN else set()), record
        # The real server's answers to the replayed handshake matched the early ones.
        assert "differs" not in record["stderr"], record["stderr"]
    assert len(list(data.glob("workspace/daily/*/launcher-fact-*.md"))) == 2


def test_two_first_starts_at_once_run_one_build_and_leave_one_environment(
    first_starts: tuple[Path, list[dict[str, Any]]],
) -> None:
    data, records = first_starts
    said = sorted(
        "builds" if "building its environment" in stderr else "waits" if "waiting for the build" in stderr else stderr
        for stderr in (record["stderr"] for record in records)
    )
    assert said == ["builds", "waits"], [record["stderr"] for record in records]
    venvs = data / "venvs"
    # Nothing half-built is left behind (the build's lock file stays, empty).
    assert [
        path.name for path in venvs.iterdir() if path.name.startswith(".build-") and not path.name.endswith(".lock")
    ] == []
    (environment,) = [path for path in venvs.iterdir() if not path.name.startswith(".")]
    assert (environment / ".reme-plugin-ready").is_file()


def test_a_later_start_needs_no_uv_and_builds_nothing(
    plugin: Path, first_starts: tuple[Path, list[dict[str, Any]]]
) -> None:
    env = _env(with_uv=False)
    assert shutil.which("uv", path=env["PATH"]) is None
    connection = _launch(plugin, first_starts[0], env)
    _, tools = connection.handshake()
    assert tools == sorted(REME_TOOLS)
    found = connection.ask(_call(3, "search", {"query": "launcher fact"}))
    assert "Launcher fact" in found["result"]["content"][0]["text"], found
    code, err, _ = connection.close()
    assert code == 0 and "building" not in err, err


def test_changed_code_is_rebuilt_even_when_the_host_ends_the_first_start(
    plugin: Path, first_starts: tuple[Path, list[dict[str, Any]]]
) -> None:
    built = first_starts[0]

    def environments() -> set[str]:
        return {path.name for path in (built / "venvs").iterdir() if not path.name.startswith(".")}

    before = environments()
    module = plugin / "reme_mcp" / "__init__.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")

    # Without uv a changed plugin cannot build: the handshake is still answered, a tool call gets
    # an error saying what to do, and stderr says it in one line.
    connection = _launch(plugin, built, _env(with_uv=False))
    _, tools = connection.handshake()
    assert tools == sorted(REME_TOOLS)
    refused = connection.ask(_call(3, "search", {"query": "launcher fact"}))
    assert refused["error"]["message"] == UV_MISSING, refused
    code, err, rest = connection.close()
    assert code == 1 and rest == b"", (code, rest)
    assert err.splitlines()[-1] == UV_MISSING, err

    # A host that gives up on a slow first start ends the launcher; the build goes on.
    connection = _launch(plugin, built, _env(with_uv=True))
    connection.handshake()
    connection.proc.send_signal(signal.SIGTERM)
    assert _ended(connection, timeout=30) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 240
    while not (new := environments() - before):
        assert time.monotonic() < deadline, "the build did not finish after the launcher was ended"
        time.sleep(0.5)
    (name,) = new
    while not (built / "venvs" / name / ".reme-plugin-ready").is_file():
        assert time.monotonic() < deadline, "the build did not finish after the launcher was ended"
        time.sleep(0.5)
    connection = _launch(plugin, built, _env(with_uv=False))
    _, tools = connection.handshake()
    assert tools == sorted(REME_TOOLS)
    code, err, _ = connection.close()
    assert code == 0 and "building" not in err, err


def test_a_failed_build_is_named_in_each_tool_call_error(plugin: Path, tmp_path: Path) -> None:
    """uv with no index it can reach and nothing cached: the handshake is answered, the tool call
    gets uv's reason and what to do, and stderr says it in one line."""
    unreachable = "http://127.0.0.1:9/simple"
    env = {**_env(with_uv=True), "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_DEFAULT_INDEX": unreachable}
    env["UV_INDEX_URL"] = unreachable
    connection = _launch(plugin, tmp_path / "data", env)
    _, tools = connection.handshake()
    assert tools == sorted(REME_TOOLS)
    refused = connection.ask(_call(3, "search", {"query": "anything"}))["error"]["message"]
    assert refused.startswith("reme-mcp: building the plugin's environment in "), refused
    assert "Connection refused" in refused and "start a new session" in refused, refused
    log = Path(refused.split("uv's messages are in ", 1)[1].split(";", 1)[0])
    assert "Connection refused" in log.read_text(encoding="utf-8")
    code, err, _ = connection.close()
    assert code == 1 and err.splitlines()[-1] == refused, err
    assert no_environment_built(tmp_path / "data")


VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2099-01-01", *MODERN]


@pytest.mark.parametrize(("version", "claude"), [*((v, False) for v in VERSIONS), (MODERN[-1], True)])
def test_the_first_start_negotiates_as_the_server_does(
    plugin: Path, tmp_path: Path, version: str, claude: bool
) -> None:
    """The early answers equal the real server's, for every version a client may ask for (one it
    does not know included): the installed server beside the launcher's front (no uv, so no build).
    The front serves no prompts (--no-prompts), not even under Claude Code: a host waiting for a
    build gets the five tools without waiting for anything else."""
    argv = [sys.executable, "-m", "reme_mcp", "--no-prompts", "--workspace", str(tmp_path / "w")]
    server = Connection(argv, os.environ, tmp_path)
    env = _env(with_uv=False) | ({"CLAUDE_PLUGIN_ROOT": str(plugin)} if claude else {})
    front = _launch(plugin, tmp_path / "data", env)
    for connection in (server, front):
        connection.handshake(version)
        if version not in MODERN:  # 2026-07-28 has no ping
            connection.ask({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        connection.seen = [message for message in connection.seen if message.get("id") != "listen:0"]
    assert server.seen == front.seen
    if version != "2099-01-01" and version not in MODERN:
        assert "prompts" not in front.seen[0]["result"]["capabilities"]
    if version not in MODERN:
        expected = "2025-11-25" if version == "2099-01-01" else version
        assert front.seen[0]["result"]["protocolVersion"] == expected
    for connection in (server, front):
        connection.close()


def test_an_unexpanded_placeholder_is_one_clear_line(plugin: Path, tmp_path: Path) -> None:
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", "${PLUGIN_DATA}", "--workspace", "${PLUGIN_DATA}/w"]
    wire = json.dumps(_initialize("2025-06-18")).encode() + b"\n"
    done = subprocess.run(argv, cwd=tmp_path, env=_env(with_uv=True), input=wire, capture_output=True, timeout=60)
    assert done.returncode == 2 and done.stdout == b"", done
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("reme-mcp: the host passed the plugin's data folder unexpanded (${PLUGIN_DATA})"), line
    assert list(tmp_path.iterdir()) == []
