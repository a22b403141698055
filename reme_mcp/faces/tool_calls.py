"""What every tool of the MCP face shares: an operation run off the event loop with its errors as
one line, its result as the text a model reads beside the structured content, the annotations a
tool declares, and the argument types the tools have in common."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ParamSpec, TypeVar

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.ops.limits import MAX_DATE_CHARS, Scope

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Date = Annotated[str, Field(description="A day as YYYY-MM-DD.", max_length=MAX_DATE_CHARS)]
ReadScope = Annotated[
    Scope,
    Field(
        description="current: this project and the personal memory (default); project or personal alone; "
        "all: every project, each hit naming its project."
    ),
]
Project = Annotated[
    str | None,
    Field(description="The `project` a search result named ('personal' for the personal memory).", max_length=60),
]
P = ParamSpec("P")
R = TypeVar("R")
# A call's view of memory: its project's and the personal one (ops/session_memory.py).
SessionOf = Callable[[Context], Awaitable[Any]]


def tool_result(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=model.model_dump(mode="json")
    )


async def run_operation(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Memory operations block on files: run them off the event loop; ReMeError becomes a tool error."""
    try:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
    except ReMeError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:  # the disk, not the caller: one line naming the cause and the fix
        raise ToolError(os_error_line(exc, getattr(fn, "__name__", "the call"))) from None


def tool(server: MCPServer, **options: Any) -> Callable[[Any], Any]:
    """`server.tool`, with the docstring dedented: models otherwise see the source's indentation."""

    def register(fn: Any) -> Any:
        return server.tool(description=inspect.cleandoc(fn.__doc__ or ""), **options)(fn)

    return register
