"""The HTTP server's defences, against a real `reme-mcp serve --transport http` process (issue 5).

Proves: it binds loopback by default; a non-loopback --host refuses to start
without a bearer token (and with a too-short one); the token is checked on
every request (401 without it or with a wrong one, served with the right one,
from REME_MCP_TOKEN or --token-file); a bad Host or Origin is refused (DNS
rebinding); an oversized body is refused; idle sockets past the cap are evicted
oldest first and headers trickled in are cut off at the deadline.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import psutil  # type: ignore[import-untyped]
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.processes import stop

TOKEN = "t0k3n-" + "Fk9Xq2Lm7Zt4Rb8Wc3" * 2
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    day = ws / "daily" / "2026-11-28"
    day.mkdir(parents=True)
    (day / "go.md").write_text("---\nname: go\ndescription: Go\n---\nThe user likes zqhttp in Go.\n", encoding="utf-8")
    return ws


def env_with(token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_MCP_TOKEN")}
    if token:
        env["REME_MCP_TOKEN"] = token
    return env


@contextmanager
def server(ws: Path, *args: str, token: str | None = TOKEN) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "serve", "-w", str(ws), "--transport", "http", "--port", str(port), *args],
        env=env_with(token),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the HTTP server did not start")
        yield proc, port
    finally:
        stop(proc)


def post(port: int, headers: dict[str, str], body: bytes | None = None) -> httpx2.Response:
    data = body if body is not None else json.dumps(INIT).encode()
    return httpx2.post(f"http://127.0.0.1:{port}/mcp", headers={**HEADERS, **headers}, content=data, timeout=30)


def test_token_host_origin_and_body_limits(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with server(ws) as (proc, port):
        # Loopback by default: the only listening socket is on 127.0.0.1.
        listening = [c.laddr for c in psutil.Process(proc.pid).net_connections("inet") if c.status == "LISTEN"]
        assert listening and all(addr.ip == "127.0.0.1" for addr in listening), listening

        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert post(port, {}).status_code == 401
        assert post(port, {"Authorization": "Bearer wrong"}).status_code == 401
        assert post(port, {"Authorization": f"Bearer {TOKEN[:-1]}X"}).status_code == 401
        assert post(port, {"Authorization": f"Bearer  {TOKEN}"}).status_code == 401
        assert post(port, {"Authorization": f"Bearer {TOKEN}x"}).status_code == 401
        assert post(port, {"Authorization": TOKEN}).status_code == 401
        assert post(port, {"Authorization": f"Basic {TOKEN}"}).status_code == 401
        assert httpx2.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 401
        assert httpx2.get(f"http://127.0.0.1:{port}/mcp", timeout=10).status_code == 401
        assert httpx2.delete(f"http://127.0.0.1:{port}/mcp", timeout=10).status_code == 401
        ok = post(port, auth)
        assert ok.status_code == 200, ok.text

        # DNS rebinding: a foreign Host or Origin is refused even with the right token.
        assert post(port, {**auth, "Host": "evil.example.com"}).status_code in (400, 403, 421)
        assert post(port, {**auth, "Host": "evil.example.com:80"}).status_code in (400, 403, 421)
        assert post(port, {**auth, "Origin": "http://evil.example.com"}).status_code == 403
        assert post(port, {**auth, "Origin": "null"}).status_code == 403
        assert post(port, {**auth, "Origin": f"http://127.0.0.1:{port}"}).status_code == 200

        # An oversized body is refused, not read into memory.
        big = json.dumps({**INIT, "params": {**INIT["params"], "pad": "x" * (2 * 1024 * 1024)}}).encode()  # type: ignore[dict-item]
        assert post(port, auth, big).status_code == 413

        # The right token works end to end with the SDK client, and the server kept serving.
        async def session() -> None:
            http = create_mcp_http_client(headers=auth)
            async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
                result = await c.call_tool("search", {"query": "zqhttp"})
                assert not result.is_error
                assert result.structured_content["results"][0]["path"] == "daily/2026-11-28/go.md"

        anyio.run(session)
        assert proc.poll() is None


def test_token_file_and_non_loopback_bind(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    with server(ws, "--host", "0.0.0.0", "--token-file", str(token_file), token=None) as (_, port):
        assert post(port, {}).status_code == 401
        assert post(port, {"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def refused(ws: Path, *args: str, token: str | None = None) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reme_mcp",
            "serve",
            "-w",
            str(ws),
            "--transport",
            "http",
            "--port",
            str(free_port()),
            *args,
        ],
        env=env_with(token),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    return done.stderr


def test_non_loopback_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    for host in ("0.0.0.0", "::", "192.0.2.10", "example.com"):
        assert "bearer token" in refused(ws, "--host", host), host
    assert "shorter than 16" in refused(ws, "--host", "0.0.0.0", token="short")
    assert "cannot be read" in refused(ws, "--host", "0.0.0.0", "--token-file", str(tmp_path / "missing"))


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """True when the server closes the socket (EOF or reset) within the given seconds."""
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_idle_and_slow_connections_cannot_starve_clients(tmp_path: Path) -> None:
    """Idle sockets past the cap are evicted oldest first; headers trickled in are cut off at the deadline."""
    from reme_mcp.faces.http import HEADER_TIMEOUT_S, MAX_CONNECTIONS

    ws = workspace(tmp_path)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with server(ws) as (proc, port):
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(MAX_CONNECTIONS + 150)]
        try:
            # The server holds at most the cap (plus its listening socket and a few files), not one fd per socket.
            time.sleep(1.0)
            assert psutil.Process(proc.pid).num_fds() < MAX_CONNECTIONS + 64
            # The oldest idle sockets were closed to make room; the newest are still open.
            assert closed_by_peer(idle[0], 5.0)
            assert not closed_by_peer(idle[-1], 0.2)

            # A real client is served while hundreds of idle sockets are open.
            async def session() -> None:
                http = create_mcp_http_client(headers=auth)
                async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
                    result = await c.call_tool("search", {"query": "zqhttp"})
                    assert not result.is_error

            anyio.run(session)
            for s in idle:
                s.close()

            # Headers trickled a byte at a time are cut off at the deadline, not held open forever.
            slow = socket.create_connection(("127.0.0.1", port))
            slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            started = time.monotonic()
            closed = False
            while time.monotonic() - started < HEADER_TIMEOUT_S + 10 and not closed:
                try:
                    slow.sendall(b"X")
                except OSError:
                    closed = True
                    break
                closed = closed_by_peer(slow, 1.0)
            assert closed
            assert time.monotonic() - started >= HEADER_TIMEOUT_S - 1
            slow.close()
            assert proc.poll() is None
        finally:
            for s in idle:
                s.close()
