"""Claude Code: ~/.claude/projects/<project-slug>/<session-uuid>.jsonl (or $CLAUDE_CONFIG_DIR/projects).

Each line is an event with `type`; `user` and `assistant` events carry a
`message` whose content is text or blocks (text, tool_use, tool_result,
thinking). An assistant reply is written one content block per line, each with
its own `uuid`, which is the native id kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reme_mcp.ingest.model import Tally, Turn
from reme_mcp.ingest.sources.base import JsonlSource, home
from reme_mcp.ingest.sources.blocks import content_text, make_turn

# Event types Claude Code writes that hold no conversation.
_OTHER_EVENTS = frozenset(
    {"summary", "system", "file-history-snapshot", "queue-operation", "progress", "attachment", "custom-title"}
    | {"agent-name", "pr-link", "tag", "last-prompt", "mode"}
)


class ClaudeCode(JsonlSource):
    name = "claude-code"
    host = "claude_code"
    parser_version = "claude-code/1 (Claude Code 1.x-2.x project logs)"
    description = "Claude Code"

    def default_location(self, env: Mapping[str, str]) -> Path:
        base = env.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else home(env) / ".claude") / "projects"

    def parse(self, event: dict[str, Any], state: dict[str, str], tally: Tally) -> Turn | None:
        kind = event.get("type")
        if kind not in ("user", "assistant"):
            tally.skipped["other events" if kind in _OTHER_EVENTS else f"unknown events ({kind})"] += 1
            return None
        if isinstance(event.get("sessionId"), str):
            state["session_id"] = event["sessionId"]
        if isinstance(event.get("cwd"), str):
            state["project"] = event["cwd"]
        if event.get("isMeta") or event.get("isSidechain") or event.get("isCompactSummary"):
            tally.skipped["meta, sidechain and summary messages"] += 1
            return None
        message = event.get("message")
        if not isinstance(message, dict):
            tally.skipped["events without a message"] += 1
            return None
        role = message.get("role") or kind
        if role not in ("user", "assistant"):
            tally.skipped[f"{role} messages"] += 1
            return None
        text = content_text(message.get("content"), tally)
        return make_turn(str(event.get("uuid") or ""), str(role), text, str(event.get("timestamp") or ""), tally)
