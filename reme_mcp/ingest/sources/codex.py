"""Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl (or $CODEX_HOME/sessions).

Lines are `{timestamp, type, payload}`: `session_meta` (id, cwd), `response_item`
(messages with a role, function calls and their outputs, reasoning), `event_msg`
(UI events that repeat the messages) and `turn_context`. Only `response_item`
messages of the user and the assistant are kept; they carry no id, so the native
id is a hash of the time, role and text.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reme_mcp.ingest.model import Tally, Turn
from reme_mcp.ingest.sources.base import JsonlSource, home
from reme_mcp.ingest.sources.blocks import content_text, make_turn

_OTHER_EVENTS = frozenset({"event_msg", "turn_context", "compacted"})
_TOOL_ITEMS = frozenset(
    {"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "local_shell_call"}
    | {"web_search_call", "tool_search_call", "image_generation_call"}
)
# User-role messages Codex writes itself: instructions and the environment, not the person.
_INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")


class Codex(JsonlSource):
    name = "codex"
    host = "codex"
    parser_version = "codex/1 (rollout JSONL, Codex 0.2x-0.17x)"
    description = "Codex CLI"

    def default_location(self, env: Mapping[str, str]) -> Path:
        base = env.get("CODEX_HOME")
        return (Path(base) if base else home(env) / ".codex") / "sessions"

    def parse(self, event: dict[str, Any], state: dict[str, str], tally: Tally) -> Turn | None:
        kind = event.get("type")
        payload = event.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        if kind == "session_meta":
            inner = payload.get("meta")
            meta: dict[str, Any] = inner if isinstance(inner, dict) else payload
            if isinstance(meta.get("id"), str):
                state["session_id"] = meta["id"]
            if isinstance(meta.get("cwd"), str):
                state["project"] = meta["cwd"]
            return None
        if kind != "response_item":
            tally.skipped["other events" if kind in _OTHER_EVENTS else f"unknown events ({kind})"] += 1
            return None
        item = payload.get("type")
        if item in _TOOL_ITEMS:
            tally.skipped["tool calls and results"] += 1
            return None
        if item == "reasoning":
            tally.skipped["thinking"] += 1
            return None
        if item != "message":
            tally.skipped[f"unknown items ({item})"] += 1
            return None
        role = payload.get("role")
        if role not in ("user", "assistant"):
            tally.skipped[f"{role} messages"] += 1
            return None
        text = content_text(payload.get("content"), tally)
        if role == "user" and text.lstrip().startswith(_INJECTED_PREFIXES):
            tally.skipped["host-injected instructions"] += 1
            return None
        return make_turn(str(payload.get("id") or ""), role, text, str(event.get("timestamp") or ""), tally)
