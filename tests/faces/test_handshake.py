"""The early handshake answers equal the SDK's own, and a real stdio process behaves as the SDK alone.

Each check compares bytes: what the recorded file holds, what the process writes, and
what the SDK writes on a connection of its own, for every protocol version it speaks.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from reme_mcp.config import load_settings
from reme_mcp.faces.stdio import handshake, recorder
from reme_mcp.faces.stdio.sdk import converse


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return dict(json.loads(handshake.ANSWERS_FILE.read_text(encoding="utf-8")))


def test_the_recorded_answers_are_what_this_sdk_answers_now(recorded: dict[str, Any]) -> None:
    assert handshake.load() is not None, "run `python -m reme_mcp.faces.stdio.handshake` to record them again"
    # Another client name and capabilities: the answers must not depend on who asks.
    assert recorder.record(client="another-client") == recorded["answers"]
    keys = set(recorded["answers"])
    assert {f"initialize@{v}" for v in HANDSHAKE_PROTOCOL_VERSIONS} <= keys
    assert {f"tools/list@{v}" for v in (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)} <= keys
    assert {f"server/discover@{v}" for v in (*MODERN_PROTOCOL_VERSIONS, "legacy")} <= keys
    versions = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
    assert {f"{handshake.SEARCH_FRAME}@{v}" for v in versions} <= keys


def test_the_answers_without_prompts_are_what_the_sdk_answers_with_no_prompts(recorded: dict[str, Any]) -> None:
    without = recorded[handshake.ANSWERS_WITHOUT_PROMPTS_KEY]
    assert recorder.record(client="another-client", prompts=False) == without
    assert set(without) == set(recorded[handshake.ANSWERS_KEY])
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        assert '"prompts"' in recorded[handshake.ANSWERS_KEY][f"initialize@{version}"]
        assert '"prompts"' not in without[f"initialize@{version}"]


def test_the_sdk_version_is_read_right() -> None:
    from importlib import metadata

    assert handshake.sdk_version() == metadata.version("mcp")


def test_answers_recorded_from_another_sdk_are_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = json.loads(handshake.ANSWERS_FILE.read_text(encoding="utf-8"))
    stale["mcp"] = "0.0.1"
    monkeypatch.setattr(handshake, "ANSWERS_FILE", tmp_path / "handshake.json")
    handshake.ANSWERS_FILE.write_text(json.dumps(stale), encoding="utf-8")
    assert handshake.load() is None


def _start(workspace: Path, *flags: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "reme_mcp", "--workspace", str(workspace), *flags]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _read_until(stdout: IO[bytes], last_id: bytes) -> list[bytes]:
    lines = []
    while True:
        line = stdout.readline()
        assert line, "the server closed stdout"
        lines.append(line)
        if line.startswith(b'{"jsonrpc":"2.0","id":' + last_id + b","):
            return lines


def _with_ids(messages: list[dict[str, Any]], ids: list[Any]) -> list[bytes]:
    lines, numbered = [], iter(ids)
    for message in messages:
        if "id" in message:
            message = {**message, "id": next(numbered)}
        lines.append(json.dumps(message).encode() + b"\n")
    return lines


# The search conversations are checked in test_early_search.py, which allows for the SDK
# answering the closing ping before a search (it runs tools in threads).
HANDSHAKE_KEYS = [key for key in recorder.conversations() if not key.startswith(handshake.SEARCH_FRAME)]


@pytest.mark.parametrize("key", HANDSHAKE_KEYS)
def test_the_process_writes_exactly_what_the_sdk_alone_writes(key: str, tmp_path: Path) -> None:
    messages = recorder.conversations()[key]
    lines = _with_ids(messages, ["zero", 7][-sum("id" in m for m in messages) :])
    # A closing ping proves no answer came twice: everything before its answer is compared.
    closing = {"jsonrpc": "2.0", "id": "end", "method": "ping"}
    if "_meta" in (messages[-1].get("params") or {}):
        closing["params"] = {"_meta": messages[-1]["params"]["_meta"]}
    lines.append(json.dumps(closing).encode() + b"\n")
    expected = converse(load_settings(str(tmp_path / "alone"), "UTC"), lines)
    server = _start(tmp_path / "front")
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(b"".join(lines))
    server.stdin.flush()
    written = _read_until(server.stdout, b'"end"')
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    assert written == expected


@pytest.mark.parametrize("key", [k for k in HANDSHAKE_KEYS if k.startswith(("initialize@", "prompts/list@"))][:4])
def test_a_process_with_no_prompts_writes_what_the_sdk_alone_writes(key: str, tmp_path: Path) -> None:
    messages = recorder.conversations()[key]
    lines = _with_ids(messages, ["zero", 7][-sum("id" in m for m in messages) :])
    lines.append(json.dumps({"jsonrpc": "2.0", "id": "end", "method": "ping"}).encode() + b"\n")
    alone = dataclasses.replace(load_settings(str(tmp_path / "alone"), "UTC"), prompts=False)
    expected = converse(alone, lines)
    server = _start(tmp_path / "front", "--no-prompts")
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(b"".join(lines))
    server.stdin.flush()
    written = _read_until(server.stdout, b'"end"')
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    assert written == expected and b'"prompts"' not in b"".join(written)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_stdio_server_within_a_second(signum: int, tmp_path: Path) -> None:
    server = _start(tmp_path / "memory")
    assert server.stdin is not None and server.stdout is not None
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "x"}}},
    ):
        server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    _read_until(server.stdout, b"2")  # the SDK is serving, with the index open
    sent = time.monotonic()
    os.kill(server.pid, signum)
    server.wait(timeout=5)
    assert time.monotonic() - sent < 1.0
    assert server.stderr is not None and server.stderr.read() == b""
