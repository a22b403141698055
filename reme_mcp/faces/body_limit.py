"""An HTTP body over the size limit answered as a JSON-RPC error, so the client can say why.

The MCP SDK refuses such a body with a plain-text 413 before parsing it, and MCP clients show a
non-JSON error only as "Server returned an error response": the cause is lost. A 413 with a
JSON-RPC error in its body is what a client surfaces (the streamable-HTTP client reads a JSON
error at any status); the limit is named, and what fits under it.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reme_mcp.config import MAX_NOTE_CHARS

INVALID_REQUEST = -32600


def too_large_body(limit: int) -> bytes:
    message = (
        f"the request body is over this server's limit of {limit:,} bytes ({limit // (1024 * 1024)} MB): "
        f"send less in one call (a note holds at most {MAX_NOTE_CHARS:,} characters)"
    )
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return json.dumps(error).encode("utf-8")


class BodyLimitAsJsonRpc:
    """Rewrites the SDK's plain-text 413 into a JSON-RPC error naming `limit`."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rewriting = False

        async def answer(message: Message) -> None:
            nonlocal rewriting
            if message["type"] == "http.response.start" and message.get("status") == 413:
                rewriting = True
                body = too_large_body(self.limit)
                headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": 413, "headers": headers})
                await send({"type": "http.response.body", "body": body})
            elif not rewriting:
                await send(message)

        await self.app(scope, receive, answer)
