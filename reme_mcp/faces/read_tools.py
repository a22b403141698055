"""The four read-only tools: `search`, `read`, `traverse` and `daily_list`, each a thin function
over the calling session's memory operation."""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from reme_mcp.faces.tool_calls import READ_ONLY, Date, Project, ReadScope, SessionOf, run_operation, tool, tool_result
from reme_mcp.ops.limits import DAILY_LIMIT, READ_MAX_CHARS, SEARCH_LIMIT, SEARCH_MAX_CHARS, TRAVERSE_DEPTH, Direction
from reme_mcp.ops.results import DailyListResult, ReadResult, SearchResult, TraverseResult


def add_read_tools(server: MCPServer, session: SessionOf) -> None:
    """Register the four read-only tools on `server`; `session` gives a call's view of memory."""
    _add_search(server, session)
    _add_read(server, session)
    _add_traverse(server, session)
    _add_daily_list(server, session)


def _add_search(server: MCPServer, session: SessionOf) -> None:
    @tool(server, title="Search memory", annotations=READ_ONLY)
    async def search(
        query: Annotated[
            str, Field(description="What to look for, in any language; a few distinctive words work best.")
        ],
        limit: Annotated[int, SEARCH_LIMIT.field("How many results (1-50).")] = SEARCH_LIMIT.default,
        start_date: Annotated[Date | None, Field(description="Only notes dated on or after this day.")] = None,
        end_date: Annotated[Date | None, Field(description="Only notes dated on or before this day.")] = None,
        path_prefix: Annotated[
            str | None, Field(description="Only files under this folder, e.g. digest/ or session/dialog/.")
        ] = None,
        max_chars: Annotated[
            int, SEARCH_MAX_CHARS.field("Budget for all snippets together.")
        ] = SEARCH_MAX_CHARS.default,
        scope: ReadScope = "current",
        ctx: Context = None,  # type: ignore[assignment]
    ) -> Annotated[CallToolResult, SearchResult]:
        """Find evidence in long-term memory (notes, digests, past dialogs). Read-only.

        Returns the best-matching chunks with path, line range, date and a snippet, from this project's
        memory and the personal memory as one ranking; each hit names its `project`.
        Follow up with `read` on a result's path (and project) for the full text."""
        result = await run_operation(
            (await session(ctx)).search, query, limit, start_date, end_date, path_prefix, max_chars, scope
        )
        return tool_result(result, result.render())


def _add_read(server: MCPServer, session: SessionOf) -> None:
    @tool(server, title="Read a memory file", annotations=READ_ONLY)
    async def read(
        path: Annotated[str, Field(description="Workspace-relative path, e.g. daily/2026-11-28/go-backend.md.")],
        start_line: Annotated[int | None, Field(ge=1, description="First line to read (1-based).")] = None,
        end_line: Annotated[int | None, Field(ge=1, description="Last line to read (inclusive).")] = None,
        max_chars: Annotated[int, READ_MAX_CHARS.field("Most characters to return.")] = READ_MAX_CHARS.default,
        project: Project = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> Annotated[CallToolResult, ReadResult]:
        """Open a memory file, or some of its lines, with its front matter. Read-only.

        Session dialogs (JSONL) read as one message per line, with the file's line numbers.
        Pass the `project` a search result named; without it, this project's memory, then the personal one."""
        result = await run_operation((await session(ctx)).read, path, start_line, end_line, max_chars, project)
        return tool_result(result, result.render())


def _add_traverse(server: MCPServer, session: SessionOf) -> None:
    @tool(server, title="Walk memory links and folders", annotations=READ_ONLY)
    async def traverse(
        path: Annotated[str, Field(description="A file or a folder; empty for the workspace root.")] = "",
        depth: Annotated[int, TRAVERSE_DEPTH.field("How far to go (1-3).")] = TRAVERSE_DEPTH.default,
        direction: Annotated[
            Direction,
            Field(description="For a file: links it makes (forward), links to it (backward), or both."),
        ] = "forward",
        project: Project = None,
        scope: ReadScope = "current",
        ctx: Context = None,  # type: ignore[assignment]
    ) -> Annotated[CallToolResult, TraverseResult]:
        """Follow wikilinks from or to a file, or list what a folder holds. Read-only.

        A folder is listed in this project's memory and the personal one; each node names its `project`."""
        result = await run_operation(
            (await session(ctx)).traverse, path=path, depth=depth, direction=direction, project=project, scope=scope
        )
        return tool_result(result, result.render())


def _add_daily_list(server: MCPServer, session: SessionOf) -> None:
    @tool(server, title="List notes by day", annotations=READ_ONLY)
    async def daily_list(
        date: Annotated[str | None, Field(description="One day (YYYY-MM-DD); empty string for today.")] = None,
        start_date: Annotated[Date | None, Field(description="First day of a range.")] = None,
        end_date: Annotated[Date | None, Field(description="Last day of a range.")] = None,
        limit: Annotated[int, DAILY_LIMIT.field("Most days to return, newest first.")] = DAILY_LIMIT.default,
        scope: ReadScope = "current",
        ctx: Context = None,  # type: ignore[assignment]
    ) -> Annotated[CallToolResult, DailyListResult]:
        """What happened on which day: the daily notes of a day, a range, or the most recent days. Read-only.

        Covers this project's memory and the personal one; each note names its `project`."""
        result = await run_operation((await session(ctx)).daily_list, date, start_date, end_date, limit, scope)
        return tool_result(result, result.render())
