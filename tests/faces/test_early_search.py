"""The front's early answer to a first `search` is byte for byte the SDK's, and is sent once.

Each process test spawns the real stdio server on its own copy of a workspace with notes,
writes the whole conversation at once, and compares every line it writes, up to a closing
ping, with what the SDK alone writes for the same lines on another copy (`converse`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from reme_mcp.config import load_settings
from reme_mcp.faces.deferred_memories import DeferredMemories
from reme_mcp.faces.stdio import early_search, handshake, recorder
from reme_mcp.faces.stdio.sdk import converse
from tests.conftest import make_reme_workspace, write

QUERIES = [
    {"query": "Go backend"},
    {"query": "发布 冻结 release", "limit": 3, "max_chars": 300},
    {"query": "freeze", "start_date": "2026-11-01", "end_date": "2026-12-31", "path_prefix": "daily/"},
    {"query": "nothing matches zzqx"},
]
ODD = [
    {"query": "Go", "limit": 0},
    {"query": "Go", "colour": "blue"},
    {"query": "Go", "limit": "5"},
    {"query": "Go", "start_date": "2026-13-45"},
    {"query": "Go", "path_prefix": "../outside"},
    {"query": "Go", "path_prefix": "null"},
    {"limit": 5},
]


def _workspace(root: Path) -> Path:
    workspace = make_reme_workspace(root)
    write(workspace, "notes/plain.md", "No front matter here; the Go backend ships on Friday.\n")
    write(workspace, "daily/2026-11-29/score.md", "---\nname: 冻结\n---\n发布冻结从周五开始 release freeze.\n")
    return workspace


def _conversation(version: str, arguments: dict[str, Any]) -> list[bytes]:
    call = {"name": "search", "arguments": arguments}
    if version in MODERN_PROTOCOL_VERSIONS:
        meta = {"_meta": recorder.envelope(version, "test")}
        messages: list[dict[str, Any]] = [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta},
            {"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {**call, **meta}},
            {"jsonrpc": "2.0", "id": "end", "method": "ping", "params": meta},
        ]
    else:
        initialize = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
        messages = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": call},
            {"jsonrpc": "2.0", "id": "end", "method": "ping"},
        ]
    return [json.dumps(m, ensure_ascii=False).encode() + b"\n" for m in messages]


def _by_id(lines: list[bytes]) -> dict[Any, bytes]:
    """The answers by request id; an id answered twice fails (the SDK's copy of an early answer must be dropped)."""
    answers: dict[Any, bytes] = {}
    for line in lines:
        request_id = json.loads(line)["id"]
        assert request_id not in answers, f"request {request_id!r} was answered twice"
        answers[request_id] = line
    return answers


def _served(workspace: Path, lines: list[bytes]) -> tuple[dict[Any, bytes], bytes]:
    """Every line the real process writes until it ends (stdin closed once all is answered), and its stderr."""
    argv = [sys.executable, "-m", "reme_mcp", "--workspace", str(workspace)]
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    server.stdin.write(b"".join(lines))
    server.stdin.flush()
    wanted = {json.loads(line)["id"] for line in lines if b'"id"' in line}
    written: list[bytes] = []
    while not wanted <= {json.loads(line)["id"] for line in written}:
        line = server.stdout.readline()
        assert line, "the server closed stdout"
        written.append(line)
    server.stdin.close()
    written.extend(iter(server.stdout.readline, b""))  # a duplicate would come now at the latest
    assert server.wait(timeout=30) == 0
    return _by_id(written), server.stderr.read()


def _expected(tmp_path: Path, lines: list[bytes]) -> list[bytes]:
    alone = _workspace(tmp_path / "alone")
    return list(_by_id(converse(load_settings(str(alone), "UTC"), lines)).values())


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS])
def test_the_first_search_is_answered_as_the_sdk_answers_it_once(version: str, tmp_path: Path) -> None:
    for i, arguments in enumerate(QUERIES):
        lines = _conversation(version, arguments)
        expected = _by_id(_expected(tmp_path / str(i), lines))
        assert b'"isError":false' in expected["s"], expected["s"]
        written, stderr = _served(_workspace(tmp_path / str(i) / "front"), lines)
        assert written == expected  # the search's answer byte for byte, and every id answered once
        assert b"differs" not in stderr, stderr


@pytest.mark.parametrize("version", ["2025-06-18", *MODERN_PROTOCOL_VERSIONS])
def test_the_early_answer_is_the_front_s_own(version: str, tmp_path: Path) -> None:
    """In-process: the front itself produces the SDK's bytes (so the test above is not passed by the SDK alone)."""
    for i, arguments in enumerate(QUERIES):
        lines = _conversation(version, arguments)
        expected = _by_id(_expected(tmp_path / str(i), lines))
        answers = handshake.load()
        assert answers is not None
        early = early_search.load(
            answers, DeferredMemories(load_settings(str(_workspace(tmp_path / str(i) / "f")), "UTC"))
        )
        assert early is not None
        replies = []
        for line in lines[:-1]:
            reply = answers.reply(line)
            replies.append(reply or early.reply(line, answered=reply is not None))
        assert replies[-1] == expected["s"]
        # Answered in full and never passed on: the SDK writes no copy, so there is none to drop.
        assert answers.settle(expected["s"]) == (False, None)


@pytest.mark.parametrize("arguments", ODD, ids=[json.dumps(a) for a in ODD])
def test_odd_arguments_get_the_sdk_s_answer_once(arguments: dict[str, Any], tmp_path: Path) -> None:
    """An error, a coercion, an ignored key: the front stays out of it and the SDK answers, once."""
    lines = _conversation("2025-06-18", arguments)
    expected = _by_id(_expected(tmp_path, lines))
    written, _ = _served(_workspace(tmp_path / "front"), lines)
    assert written == expected
    answers = handshake.load()
    assert answers is not None
    early = early_search.load(answers, DeferredMemories(load_settings(str(_workspace(tmp_path / "f")), "UTC")))
    assert early is not None
    for line in lines[:-1]:
        reply = answers.reply(line)
        last = reply or early.reply(line, answered=reply is not None)
    assert last is None  # left to the SDK


def test_a_search_after_another_call_is_left_to_the_sdk(tmp_path: Path) -> None:
    lines = _conversation("2025-06-18", {"query": "Go"})
    read = {"jsonrpc": "2.0", "id": "r", "method": "tools/call", "params": {"name": "read", "arguments": {"path": "x"}}}
    lines.insert(3, json.dumps(read).encode() + b"\n")
    expected = _by_id(_expected(tmp_path, lines))
    written, _ = _served(_workspace(tmp_path / "front"), lines)
    assert written == expected


@pytest.mark.parametrize(
    "capabilities",
    [{"roots": {"listChanged": True}}, {"sampling": {}, "elicitation": {"form": {}}}],
    ids=["roots", "sampling-elicitation"],
)
def test_a_modern_envelope_with_capabilities_is_answered_as_the_sdk_answers_it(
    capabilities: dict[str, Any], tmp_path: Path
) -> None:
    version = MODERN_PROTOCOL_VERSIONS[-1]
    meta = {**recorder.envelope(version, "test"), "io.modelcontextprotocol/clientCapabilities": capabilities}
    call = {"name": "search", "arguments": {"query": "Go backend"}, "_meta": meta}
    lines = [json.dumps({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": call}).encode() + b"\n"]
    expected = _by_id(_expected(tmp_path, lines))
    answers = handshake.load()
    assert answers is not None
    early = early_search.load(answers, DeferredMemories(load_settings(str(_workspace(tmp_path / "f")), "UTC")))
    assert early is not None
    assert answers.reply(lines[0]) is None
    assert early.reply(lines[0], answered=False) == expected["s"]
