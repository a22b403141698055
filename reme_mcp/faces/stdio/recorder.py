"""Records the SDK's own handshake answers into handshake.json: `python -m reme_mcp.faces.stdio.recorder`.

Run after upgrading the `mcp` SDK or changing a tool: the stdio front sends these answers
only when the file was recorded from the installed SDK for this reme-mcp version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reme_mcp._version import __version__
from reme_mcp.faces.stdio.early_search import cut_frame
from reme_mcp.faces.stdio.handshake import (
    ANSWERS_FILE,
    ANSWERS_KEY,
    ANSWERS_WITHOUT_PROMPTS_KEY,
    LISTS,
    PROTOCOL_VERSION_KEY,
    RECORDED_ID,
    RECORDED_PREFIX,
    SEARCH_CALL,
    SEARCH_FRAME,
    sdk_version,
)
from reme_mcp.faces.stdio.sdk import converse


def _request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": RECORDED_ID, "method": method}
    if params is not None:
        request["params"] = params
    return request


def envelope(version: str, client: str = "reme-mcp-recorder") -> dict[str, Any]:
    return {
        PROTOCOL_VERSION_KEY: version,
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def conversations(client: str = "reme-mcp-recorder") -> dict[str, list[dict[str, Any]]]:
    """Per recorded key, a connection's messages whose last request is the one recorded."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    info = {"name": client, "version": "1"}
    talks: dict[str, list[dict[str, Any]]] = {"server/discover@legacy": [_request("server/discover", {})]}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        initialize = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
        talks[f"initialize@{version}"] = [_request("initialize", initialize)]
        opened = {**_request("initialize", initialize), "id": 0}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        for listing in LISTS:
            talks[f"{listing}@{version}"] = [opened, initialized, _request(listing)]
        talks[f"{SEARCH_FRAME}@{version}"] = [opened, initialized, _request("tools/call", SEARCH_CALL)]
    for version in MODERN_PROTOCOL_VERSIONS:
        meta = {"_meta": envelope(version, client)}
        talks[f"server/discover@{version}"] = [_request("server/discover", meta)]
        for listing in LISTS:
            talks[f"{listing}@{version}"] = [_request(listing, meta)]
        talks[f"{SEARCH_FRAME}@{version}"] = [_request("tools/call", {**SEARCH_CALL, **meta})]
    return talks


def record(client: str = "reme-mcp-recorder", prompts: bool = True) -> dict[str, str]:
    """Each key's answer body exactly as the SDK writes it, one fresh connection per key."""
    import dataclasses
    import tempfile

    from reme_mcp.config import load_settings

    bodies: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as workspace:
        settings = dataclasses.replace(load_settings(workspace, "UTC"), prompts=prompts)
        # A workspace that does not exist: its search answers at once, without an index.
        absent = dataclasses.replace(load_settings(str(Path(workspace) / "absent"), "UTC"), prompts=prompts)
        for key, messages in conversations(client).items():
            searching = key.startswith(SEARCH_FRAME)
            lines = converse(absent if searching else settings, [json.dumps(m).encode() + b"\n" for m in messages])
            answer = next(line.decode() for line in lines if line.startswith(RECORDED_PREFIX.encode()))
            bodies[key] = answer.rstrip("\n")[len(RECORDED_PREFIX) :]
            if searching:
                bodies[key] = _search_frame(absent, bodies[key])
    return bodies


def _search_frame(settings: Any, body: str) -> str:
    """The recorded search answer with the parts that vary per search cut out."""
    from reme_mcp.ops.memory import Memory

    result = Memory(settings).search(**SEARCH_CALL["arguments"])
    return cut_frame(body, result.render(), result.model_dump(mode="json"))


def write() -> None:
    recorded = {
        "reme_mcp": __version__,
        "mcp": sdk_version(),
        ANSWERS_KEY: record(),
        ANSWERS_WITHOUT_PROMPTS_KEY: record(prompts=False),
    }
    ANSWERS_FILE.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write()
