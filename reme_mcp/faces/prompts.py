"""The MCP prompts: workflows a person starts from the host (Claude Code lists them as slash commands).

A prompt only hands the model text and instructions (ops/consolidation/prompt.py). What it leads
to is written through `remember` (with `supersedes` for a consolidation), so nothing is deleted or
edited: the replaced notes stay, marked superseded, readable and forgettable by the person. The
five tools stay as they are.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from reme_mcp.errors import ReMeError


def register_prompts(server: MCPServer, session: Callable[[Context], Awaitable[Any]]) -> None:
    """The two prompts: `consolidate` (one cluster into one note) and `keep_session`."""

    @server.prompt(
        name="consolidate",
        title="Consolidate notes that repeat or replace each other",
        description="Hands the model one cluster of notes (an id from `reme-mcp tidy --dry-run`, or the first "
        "found) to write as one note with remember, superseding them. Nothing is deleted or edited.",
    )
    async def consolidate(
        cluster: Annotated[
            str, Field(description="A cluster id from `reme-mcp tidy --dry-run`; empty for the first one.")
        ] = "",
        ctx: Context = None,  # type: ignore[assignment]
    ) -> str:
        # Imported on first use: the server answers the handshake before the workspace code loads.
        from reme_mcp.ops.consolidation.prompt import consolidate_text

        try:
            sources = (await session(ctx)).sources("current")
            return await anyio.to_thread.run_sync(lambda: consolidate_text(sources, cluster))
        except ReMeError as exc:  # one line to the person, not "Internal server error"
            raise MCPError(INVALID_PARAMS, str(exc)) from None

    @server.prompt(
        name="keep_session",
        title="Keep this session's decisions",
        description="Asks the model to keep this session's decisions and changed facts with remember before the "
        "session ends (for hosts without a session-end hook).",
    )
    def keep_session() -> str:
        from reme_mcp.ops.consolidation.prompt import KEEP_SESSION

        return KEEP_SESSION
