"""Pi: ~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl (or $PI_CODING_AGENT_DIR/sessions).

The first line is the header `{type: session, version, id, cwd}` (version 3 in
pi-coding-agent 0.7x); then entries with `id` and `parentId`: `message`
(`{role: user|assistant|toolResult|bashExecution|custom..., content}`),
`model_change`, `thinking_level_change`, `compaction` and others. OpenClaw's
transcript events have the same shape, so `pi_event` serves both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reme_mcp.ingest.model import Tally, Turn
from reme_mcp.ingest.sources.base import JsonlSource, home
from reme_mcp.ingest.sources.blocks import content_text, iso_time, make_turn

KNOWN_VERSIONS = frozenset({1, 2, 3})
_OTHER_EVENTS = frozenset(
    {"model_change", "thinking_level_change", "compaction", "branch_summary", "custom", "custom_message"}
    | {"label", "session_info", "leaf", "navigation"}
)


def pi_event(event: dict[str, Any], state: dict[str, str], tally: Tally) -> Turn | None:
    kind = event.get("type")
    if kind == "session":
        if isinstance(event.get("id"), str):
            state["session_id"] = event["id"]
        if isinstance(event.get("cwd"), str):
            state["project"] = event["cwd"]
        version = event.get("version", 1)
        if isinstance(version, int) and version not in KNOWN_VERSIONS:
            state["unknown_version"] = str(version)
        return None
    if kind != "message":
        tally.skipped["other events" if kind in _OTHER_EVENTS else f"unknown events ({kind})"] += 1
        return None
    message = event.get("message")
    if not isinstance(message, dict):
        tally.skipped["events without a message"] += 1
        return None
    role = message.get("role")
    if role not in ("user", "assistant"):
        tally.skipped["tool results" if role == "toolResult" else f"{role} messages"] += 1
        return None
    text = content_text(message.get("content"), tally)
    when = iso_time(event.get("timestamp") or message.get("timestamp"))
    return make_turn(str(event.get("id") or ""), role, text, when, tally)


class Pi(JsonlSource):
    name = "pi"
    host = "pi"
    parser_version = "pi/3 (session format versions 1-3)"
    description = "the Pi coding agent"

    def default_location(self, env: Mapping[str, str]) -> Path:
        base = env.get("PI_CODING_AGENT_DIR")
        return (Path(base) if base else home(env) / ".pi" / "agent") / "sessions"

    def parse(self, event: dict[str, Any], state: dict[str, str], tally: Tally) -> Turn | None:
        return pi_event(event, state, tally)
