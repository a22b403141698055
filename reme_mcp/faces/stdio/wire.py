"""Client lines the SDK would leave unanswered, answered with a JSON-RPC error instead.

The SDK drops a line that is not JSON, a JSON-RPC batch (MCP removed batching) and a
request whose strings hold a lone UTF-16 surrogate escape (what a JavaScript client's
`JSON.stringify` of a split emoji produces): the client would wait for its own timeout.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
INVALID_REQUEST = -32600
PARSE_ERROR = -32700


def refusal(line: bytes) -> bytes | None:
    """The error reply for a line the SDK cannot answer, or None to pass the line on."""
    if not line.strip():
        return None
    try:
        message = json.loads(line.decode("utf-8", "replace"))  # the SDK reads bad UTF-8 the same way
    except ValueError:
        return _error(None, PARSE_ERROR, "the line is not JSON: send one JSON-RPC message per line")
    if isinstance(message, list):
        return _error(None, INVALID_REQUEST, "JSON-RPC batches are not supported: send one request per line")
    if _SURROGATE_ESCAPE.search(line):
        try:
            json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return _error(
                _request_id(message),
                PARSE_ERROR,
                "the request holds a lone UTF-16 surrogate escape (a split emoji?): send valid Unicode",
            )
    return None


def _request_id(message: Any) -> Any:
    if isinstance(message, dict):
        ident = message.get("id")
        if isinstance(ident, (int, str)) and not isinstance(ident, bool):
            return ident if isinstance(ident, int) else ident.encode("utf-8", "replace").decode("utf-8")
    return None


def _error(ident: Any, code: int, text: str) -> bytes:
    reply = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}}
    return json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"
