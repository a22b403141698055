"""The SDK's own answers to the handshake, recorded ahead of time so they can be sent at once.

Importing the `mcp` SDK takes most of a second (it builds the pydantic models of every
protocol version), and hosts give a server little more than that: Codex starts its
first turn after about 1 s, Hermes after 1.5 s, without the tools that were late. So
`handshake.json` holds the exact lines the SDK writes for `initialize`, `tools/list`,
`prompts/list` and `server/discover`, per protocol version, recorded from the SDK by `record()`
(`python -m reme_mcp.faces.stdio.recorder` rewrites the file). The stdio front sends them while the
SDK loads; the SDK still receives every message, and its own answer to a request that
was answered early is compared with the early one and then dropped.

This module is imported before the SDK, so it imports nothing heavy at the top.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from reme_mcp._version import __version__

ANSWERS_FILE = Path(__file__).with_name("handshake.json")
# The answers of a server with its prompts, and of one started with --no-prompts.
ANSWERS_KEY = "answers"
ANSWERS_WITHOUT_PROMPTS_KEY = "answers_without_prompts"

# The `_meta` key that marks a 2026-07-28 (per-request envelope) message.
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
ENVELOPE_KEYS = (
    PROTOCOL_VERSION_KEY,
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
)

# The SDK writes every answer as {"jsonrpc":"2.0","id":<id>,<body>; the body is what is recorded.
RECORDED_ID = 1
RECORDED_PREFIX = f'{{"jsonrpc":"2.0","id":{RECORDED_ID},'
# The search whose answer, text and structured result cut out, the front fills in (early_search.py).
SEARCH_FRAME = "tools/call:search"
SEARCH_CALL: dict[str, Any] = {"name": "search", "arguments": {"query": "recorded frame"}}


# The lists a host asks for right after the handshake: the tools, and the prompts it shows as commands.
LISTS = ("tools/list", "prompts/list")
_CAPABILITIES = frozenset({"roots", "sampling", "elicitation"})


def envelope_version(meta: Any, *, plain: bool = False) -> str | None:
    """The protocol version of a 2026-07-28 request's `_meta` envelope, or None when it is not one.

    `plain` asks for more: just the envelope, with values the SDK accepts exactly as sent
    (what an answer built ahead of the SDK may rely on).
    """
    if not isinstance(meta, dict) or not all(isinstance(meta.get(key), str | dict) for key in ENVELOPE_KEYS):
        return None
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        return None
    if plain and not _plain(meta):
        return None
    return version


def _plain(meta: dict[str, Any]) -> bool:
    info, capabilities = meta["io.modelcontextprotocol/clientInfo"], meta["io.modelcontextprotocol/clientCapabilities"]
    if set(meta) != set(ENVELOPE_KEYS) or not isinstance(info, dict) or not isinstance(capabilities, dict):
        return False
    if not {"name", "version"} <= set(info) <= {"name", "version", "title"}:
        return False
    if not all(isinstance(v, str) for v in info.values()):
        return False
    return all(
        key in _CAPABILITIES and isinstance(value, dict) and all(isinstance(v, bool | dict) for v in value.values())
        for key, value in capabilities.items()
    )


def sdk_version() -> str | None:
    """The installed `mcp` SDK's version, read from its dist-info folder's name.

    Not through importlib.metadata, whose import alone (the email package) costs
    more than the rest of the early answer; and not by importing `mcp`.
    """
    spec = find_spec("mcp")
    if spec is None or spec.origin is None:
        return None
    site = Path(spec.origin).parent.parent
    found = [entry.name for entry in site.glob("mcp-*.dist-info")]
    return found[0][len("mcp-") : -len(".dist-info")] if len(found) == 1 else None


@dataclass
class EarlyAnswers:
    """Answers one connection's handshake requests from the recorded bodies, where one fits exactly."""

    bodies: dict[str, str]
    # The era is fixed by the opening request, as the SDK fixes it: "legacy" or "modern".
    era: str | None = None
    negotiated: str | None = None
    sent: dict[str, bytes] = field(default_factory=dict)

    def reply(self, line: bytes) -> bytes | None:
        """The line to send for this request now, or None to leave it to the SDK."""
        try:
            message = json.loads(line)
        except ValueError:
            return None
        key = self._key(message) if isinstance(message, dict) else None
        if key is None or key not in self.bodies:
            return None
        request_id = json.dumps(message["id"], ensure_ascii=False)
        if message["method"] == "initialize":
            self.negotiated = message["params"]["protocolVersion"]
        answer = f'{{"jsonrpc":"2.0","id":{request_id},{self.bodies[key]}\n'.encode()
        self.sent[request_id] = answer
        return answer

    def _key(self, message: dict[str, Any]) -> str | None:
        method, params, request_id = message.get("method"), message.get("params"), message.get("id")
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or "id" not in message:
            return None
        if params is not None and not isinstance(params, dict):
            return None
        meta = (params or {}).get("_meta")
        modern = isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta
        era = "modern" if modern else "legacy"
        self.era = self.era or era
        if era != self.era or isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        if modern:
            envelope = envelope_version(meta)
            if envelope is None:
                return None
            version = envelope
        else:
            version = "legacy"
        if method == "initialize" and not modern and self.negotiated is None:
            return f"initialize@{(params or {}).get('protocolVersion')}"
        if method == "server/discover":
            return f"server/discover@{version}"
        if method in LISTS and set(params or {}) <= {"_meta"}:
            return f"{method}@{version if modern else self.negotiated}"
        return None

    def settle(self, line: bytes) -> tuple[bool, str | None]:
        """For a line the SDK wrote: (drop it?, the request id whose early answer it contradicts)."""
        if not self.sent:
            return False, None
        try:
            message = json.loads(line)
        except ValueError:
            return False, None
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return False, None
        request_id = json.dumps(message["id"], ensure_ascii=False)
        early = self.sent.pop(request_id, None)
        if early is None:
            return False, None
        return True, (None if early.rstrip(b"\n") == line.rstrip(b"\n") else request_id)


def load(prompts: bool = True) -> EarlyAnswers | None:
    """The recorded answers, when they were recorded from this SDK for this reme-mcp; else None.

    `prompts` False: the answers of a server started with --no-prompts."""
    try:
        recorded = json.loads(ANSWERS_FILE.read_text(encoding="utf-8"))
        if recorded["reme_mcp"] != __version__ or recorded["mcp"] != sdk_version():
            return None
        return EarlyAnswers(dict(recorded[ANSWERS_KEY if prompts else ANSWERS_WITHOUT_PROMPTS_KEY]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
