"""The one tool that writes: `remember`, its side effect declared in its annotations and its
description, over the calling session's memory operation."""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from reme_mcp.faces.tool_calls import WRITES, Date, SessionOf, run_operation, tool, tool_result
from reme_mcp.ops.intake import NoteRequest
from reme_mcp.ops.limits import MAX_SUPERSEDES, MAX_TAGS, WriteScope
from reme_mcp.ops.results import RememberResult


def add_remember_tool(server: MCPServer, session: SessionOf) -> None:
    """Register `remember` on `server`; `session` gives a call's view of memory."""

    @tool(server, title="Remember (writes a note to memory)", annotations=WRITES)
    async def remember(
        content: Annotated[str, Field(description="The durable fact, decision or preference, in Markdown.")],
        name: Annotated[
            str | None, Field(description="Short file-name-safe name, e.g. go-backend; derived when absent.")
        ] = None,
        description: Annotated[str | None, Field(description="One line saying what the note is about.")] = None,
        date: Annotated[Date | None, Field(description="The note's day (YYYY-MM-DD); default today.")] = None,
        tags: Annotated[list[str] | None, Field(description="Optional tags.", max_length=MAX_TAGS)] = None,
        request_id: Annotated[
            str | None, Field(description="Idempotency key: a retry with the same id stores nothing twice.")
        ] = None,
        supersedes: Annotated[
            list[str] | None,
            Field(
                description="Paths of notes this one replaces (a changed value, a correction, a retraction); "
                "they are kept, and marked superseded in later results.",
                max_length=MAX_SUPERSEDES,
            ),
        ] = None,
        scope: Annotated[
            WriteScope,
            Field(
                description="project (default): a fact of this project (its stack, commands, decisions, people); "
                "personal: true in every project (the person's preferences, identity, habits, tools)."
            ),
        ] = "project",
        ctx: Context = None,  # type: ignore[assignment]
    ) -> Annotated[CallToolResult, RememberResult]:
        """WRITES to long-term memory: stores a new daily note (daily/<date>/<name>.md) and refreshes that day's index.

        Goes to this project's memory, or with scope personal to the memory every project reads.
        Never overwrites or deletes anything; the same content or request_id is stored only once, and recalled
        text stored back is recognised as already kept. Pass supersedes when a fact changed.
        Refuses secrets. The note is searchable as soon as this returns."""
        request = NoteRequest(content, name, description, date, tags, request_id, supersedes)
        result = await run_operation((await session(ctx)).remember, request, scope)
        return tool_result(result, result.render())
