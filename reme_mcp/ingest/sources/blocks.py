"""Reading message content the way hosts write it: a string, or a list of typed blocks."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from reme_mcp.ingest.keep import kept_text
from reme_mcp.ingest.model import Tally, Turn

TEXT_TYPES = frozenset({"text", "input_text", "output_text"})
# Blocks a host writes that are not conversation: counted as dropped, never kept.
DROPPED_TYPES = {
    "tool_use": "tool calls",
    "toolCall": "tool calls",
    "tool_result": "tool results",
    "thinking": "thinking",
    "redacted_thinking": "thinking",
    "reasoning": "thinking",
    "image": "images",
    "input_image": "images",
    "image_url": "images",
    "document": "attachments",
    "file": "attachments",
}
# Host scaffolding injected into user text, not said by the person.
_SCAFFOLD_RE = re.compile(
    r"<(system-reminder|environment_context|user_instructions|local-command-stdout|local-command-stderr|"
    r"command-message|command-args|command-name)\b[^>]{0,200}>.*?</\1\s*>",
    re.DOTALL,
)


def content_text(content: Any, tally: Tally) -> str:
    """The text blocks of `content` joined; other block kinds are counted as dropped."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = str(block.get("type") or "")
        if kind in TEXT_TYPES and isinstance(block.get("text"), str):
            parts.append(block["text"])
        else:
            tally.skipped[DROPPED_TYPES.get(kind, f"unknown blocks ({kind or 'untyped'})")] += 1
    return "\n".join(parts)


def make_turn(native_id: str, role: str, raw_text: str, created_at: str, tally: Tally) -> Turn | None:
    """A kept turn, or None (counted) when nothing worth keeping is left."""
    text = kept_text(_SCAFFOLD_RE.sub("", raw_text) if "<" in raw_text else raw_text)
    if not text:
        tally.skipped["empty messages"] += 1
        return None
    if not native_id:
        native_id = (
            "h-" + hashlib.sha256(f"{role}\n{created_at}\n{raw_text}".encode("utf-8", "surrogatepass")).hexdigest()[:20]
        )
    return Turn(native_id=native_id, role=role, text=text, created_at=created_at)


def iso_time(value: Any) -> str:
    """An ISO 8601 time from what hosts store: ISO text, epoch seconds or milliseconds."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    seconds = value / 1000 if value > 10**11 else value
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return ""
