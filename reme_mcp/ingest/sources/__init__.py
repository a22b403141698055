"""The known sources, by the name a person types."""

from __future__ import annotations

from reme_mcp.ingest.sources.base import Source
from reme_mcp.ingest.sources.claude_code import ClaudeCode
from reme_mcp.ingest.sources.codex import Codex
from reme_mcp.ingest.sources.hermes import Hermes
from reme_mcp.ingest.sources.openclaw import OpenClaw
from reme_mcp.ingest.sources.opencode import OpenCode
from reme_mcp.ingest.sources.pi import Pi

__all__ = ["SOURCES", "Source", "get_source"]

SOURCES: dict[str, Source] = {
    source.name: source for source in (ClaudeCode(), Codex(), OpenCode(), OpenClaw(), Hermes(), Pi())
}


def get_source(name: str) -> Source:
    """The source called `name`; a one-line error names the known ones."""
    source = SOURCES.get(name.strip().lower())
    if source is None:
        raise KeyError(f"unknown source {name!r}: known sources are {', '.join(SOURCES)}")
    return source
