"""End to end: real `reme-mcp` processes over stdio and streamable HTTP, driven by the SDK client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import DAY, make_reme_workspace

pytestmark = pytest.mark.anyio
PASSPHRASE = "请记住，这个项目的测试口令是蓝鲸-731。"


def stdio_client(workspace: Path, *extra: str) -> Client:
    env = {**os.environ, "REME_TIMEZONE": "Asia/Shanghai"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "--workspace", str(workspace), *extra], env=env
    )
    return Client(params, read_timeout_seconds=60)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    workspace = make_reme_workspace(tmp_path / "ws")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "serve", "--transport", "http", "--port", str(port), "-w", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp", workspace
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def test_remember_in_one_process_recall_in_the_next(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    async with stdio_client(workspace) as client:
        stored = await client.call_tool("remember", {"content": PASSPHRASE, "request_id": "e2e-1"})
        assert not stored.is_error, text_of(stored)
        assert not stored.is_error, text_of(stored)
        path = stored.structured_content["path"]  # type: ignore[index]
    async with stdio_client(workspace) as client:
        found = await client.call_tool("search", {"query": "这个项目的测试口令是什么？"})
        assert not found.is_error
        top = [hit["path"] for hit in found.structured_content["results"][:3]]  # type: ignore[index]
        assert path in top
        read = await client.call_tool("read", {"path": path})
        assert "蓝鲸-731" in read.structured_content["content"]  # type: ignore[index]
        again = await client.call_tool("remember", {"content": PASSPHRASE, "request_id": "e2e-1"})
        assert again.structured_content["created"] is False  # type: ignore[index]
        listed = await client.call_tool("daily_list", {})
        assert path in text_of(listed)
    assert len(list((workspace / "daily").glob("*/*.md"))) == 1


async def test_stdio_stdout_is_only_protocol_and_tools_are_listed(tmp_path: Path) -> None:
    workspace = make_reme_workspace(tmp_path / "ws")
    async with stdio_client(workspace) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert names == ["daily_list", "read", "remember", "search", "traverse"]
        result = await client.call_tool("traverse", {"path": f"daily/{DAY}/go-backend.md", "direction": "backward"})
        assert "digest/personal/languages.md" in text_of(result)
    # A raw session: every line the server prints on stdout must be JSON-RPC.
    init = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"Go"}}}\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "--workspace", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(init.encode())
    proc.stdin.flush()
    lines = [proc.stdout.readline().decode() for _ in range(2)]  # the two answers; stdin stays open
    proc.stdin.close()
    proc.wait(timeout=30)
    lines += [line.decode() for line in proc.stdout.readlines()]
    lines = [line for line in lines if line.strip()]
    assert any('"id":2' in line and "go-backend" in line for line in lines), lines
    assert all(line.startswith('{"jsonrpc":"2.0"') for line in lines), lines


async def test_files_changed_by_another_program_show_up_without_restart(tmp_path: Path) -> None:
    workspace = make_reme_workspace(tmp_path / "ws")
    async with stdio_client(workspace) as client:
        before = await client.call_tool("search", {"query": "platypus"})
        assert before.structured_content["results"] == []  # type: ignore[index]
        note = workspace / "digest/wiki/pets.md"
        note.write_text("---\nname: pets\n---\nThe office pet is a platypus.\n", encoding="utf-8")
        after = await client.call_tool("search", {"query": "platypus"})
        assert [h["path"] for h in after.structured_content["results"]] == ["digest/wiki/pets.md"]  # type: ignore[index]
        note.unlink()
        gone = await client.call_tool("search", {"query": "platypus"})
        assert gone.structured_content["results"] == []  # type: ignore[index]
        missing = await client.call_tool("read", {"path": "digest/wiki/pets.md"})
        assert missing.is_error and "does not exist" in text_of(missing)


async def test_http_server_works_the_same(http_server: tuple[str, Path]) -> None:
    url, workspace = http_server
    async with Client(url) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert names == ["daily_list", "read", "remember", "search", "traverse"]
        stored = await client.call_tool("remember", {"content": PASSPHRASE})
        assert not stored.is_error, text_of(stored)
        path = stored.structured_content["path"]  # type: ignore[index]
        found = await client.call_tool("search", {"query": "测试口令"})
        assert path in [h["path"] for h in found.structured_content["results"]]  # type: ignore[index]
        read = await client.call_tool("read", {"path": path})
        assert "蓝鲸-731" in text_of(read)
        bad = await client.call_tool("read", {"path": "/etc/passwd"})
        assert bad.is_error and "\n" not in text_of(bad)
    assert (workspace / path).is_file()


def test_http_refuses_a_foreign_host_header(http_server: tuple[str, Path]) -> None:
    url, _ = http_server
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream", "Host": "evil.example"}
    response = httpx.post(url, json=body, headers=headers, timeout=10)
    assert response.status_code in (400, 403, 421)
