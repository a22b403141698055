"""The streamable-HTTP face: the MCP app at /mcp, loopback by default, a bearer token otherwise."""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from reme_mcp import process
from reme_mcp.errors import ReMeError
from reme_mcp.faces.body_limit import BodyLimitAsJsonRpc
from reme_mcp.faces.listening import listening_socket

MAX_BODY_BYTES = 1024 * 1024
# A client gets this long to send a request's headers once connected or between requests.
HEADER_TIMEOUT_S = 10.0
# Open connections past this evict the one that has waited longest for headers (or are closed when
# every connection is busy), so idle sockets cannot use up the process's file descriptors.
MAX_CONNECTIONS = 256
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def load_token(token_file: str | None = None) -> str | None:
    """The bearer token: REME_MCP_TOKEN, else the first line of REME_MCP_TOKEN_FILE / --token-file."""
    token = os.environ.get("REME_MCP_TOKEN", "").strip()
    path = token_file or os.environ.get("REME_MCP_TOKEN_FILE")
    if not token and path:
        try:
            token = Path(path).expanduser().read_text(encoding="utf-8").strip().split("\n")[0].strip()
        except OSError as exc:
            raise ReMeError(f"token file {path} cannot be read ({exc.strerror}): give a readable file") from exc
    if token and len(token) < 16:
        raise ReMeError("the bearer token is shorter than 16 characters: use a long random one (openssl rand -hex 32)")
    return token or None


class BearerTokenMiddleware:
    """Every request must carry `Authorization: Bearer <token>`; compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token\n"})
                return
        await self.app(scope, receive, send)


def security_settings(host: str, port: int, extra_hosts: list[str]) -> TransportSecuritySettings:
    """Host and Origin checks against DNS rebinding; a non-loopback bind adds its own name."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    for name in [host, *extra_hosts]:
        if name and not is_loopback(name) and name not in ("0.0.0.0", "::"):
            hosts.append(f"{name}:*")
            origins.append(f"http://{name}:*")
            origins.append(f"https://{name}:*")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def build_app(server: Any, host: str, port: int, token: str | None, extra_hosts: list[str]) -> ASGIApp:
    if not is_loopback(host) and not token:
        raise ReMeError(
            f"refusing to listen on {host}: a non-loopback address needs a bearer token "
            "(set REME_MCP_TOKEN or --token-file), or use --host 127.0.0.1"
        )
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path="/mcp",
        max_request_body_size=MAX_BODY_BYTES,
        transport_security=security_settings(host, port, extra_hosts),
        host=host,
    )
    app = BodyLimitAsJsonRpc(app, MAX_BODY_BYTES)
    return BearerTokenMiddleware(app, token) if token else app


def serve_http(
    server: Any, host: str, port: int, token: str | None, extra_hosts: list[str], announce: Callable[[], None]
) -> None:
    """Serve; `announce` says so once the app is built (the token checked) and the port is bound."""
    import uvicorn

    try:
        app = build_app(server, host, port, token, extra_hosts)
        sock = listening_socket(host, port)
    except ReMeError:
        server.finish()
        raise
    announce()
    config = uvicorn.Config(app, log_level="warning", http=guarded_protocol())
    with process.sigterm_as_exit():
        try:
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            server.finish()


def guarded_protocol() -> type[Any]:
    """uvicorn's h11 protocol with a header deadline and a connection cap (it has neither for idle sockets)."""
    import asyncio

    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11(H11Protocol):
        deadline: asyncio.TimerHandle | None = None
        waiting_since: float | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > MAX_CONNECTIONS and not self._evict_one():
                transport.close()
                return
            self._await_headers()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._has_request():
                self._stop_waiting()
            elif self.deadline is None:
                self._await_headers()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self._has_request():
                self._await_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        def _has_request(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _await_headers(self) -> None:
            self._stop_waiting()
            self.waiting_since = self.loop.time()
            self.deadline = self.loop.call_later(HEADER_TIMEOUT_S, self._too_slow)

        def _stop_waiting(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
            self.deadline = None
            self.waiting_since = None

        def _too_slow(self) -> None:
            self.deadline = None
            if not self._has_request():
                self.transport.close()

        def _evict_one(self) -> bool:
            idle = [
                c
                for c in self.connections
                if isinstance(c, GuardedH11) and c is not self and c.waiting_since is not None
            ]
            if not idle:
                return False
            oldest = min(idle, key=lambda c: c.waiting_since or 0.0)
            oldest._stop_waiting()
            oldest.transport.close()
            return True

    return GuardedH11
