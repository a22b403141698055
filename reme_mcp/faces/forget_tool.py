"""The opt-in `forget` tool: the person's consent asked through MCP elicitation before every removal.

Registered only when the person turned it on (`serve --allow-forget`, REME_ALLOW_FORGET=1):
the default server lists exactly the five tools. A call makes the plan (ops/forget.py), shows
it to the person through the client (elicitation), and forgets only on their acceptance; a
client that cannot ask the person gets a refusal naming the command to run instead. Nothing
the model says counts as consent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import NoBackChannelError
from mcp.types import CallToolResult, ClientCapabilities, ElicitationCapability, ToolAnnotations
from pydantic import BaseModel, Field

from reme_mcp.faces.lazy_memory import LazyMemory
from reme_mcp.ops.forget import ForgetPlan, ForgetResult, Selection, command_line, forget_apply, forget_plan
from reme_mcp.ops.limits import MAX_DATE_CHARS, SEARCH_LIMIT

DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
# At most this many paths in one call: a person reads the whole list before agreeing.
MAX_PATHS = 50

Runner = Callable[..., Awaitable[Any]]


class Consent(BaseModel):
    """What the person is asked: one yes or no."""

    forget: bool = Field(description="Yes: forget exactly the files listed, for good.")


def register_forget(server: MCPServer, memory: LazyMemory, run: Runner, result: Callable[..., CallToolResult]) -> None:
    """Add the `forget` tool to `server`; `run` and `result` are the server's own (faces/server.py)."""

    @server.tool(
        name="forget",
        title="Forget (REMOVES memory files, after asking the person)",
        annotations=DESTRUCTIVE,
        description=(
            "DESTRUCTIVE: removes memory files for good, only after the person agrees in their client.\n\n"
            "Select by paths (files or folders), a search query, a date range (since/until) or ingested "
            "sessions (HOST:ID or a dialog's path). The person is shown exactly which files go and asked; "
            "declined means nothing is removed. Use only when the person asked to forget something."
        ),
    )
    async def forget(
        ctx: Context,
        paths: Annotated[
            list[str] | None, Field(description="Workspace-relative files or folders.", max_length=MAX_PATHS)
        ] = None,
        query: Annotated[str | None, Field(description="Forget the files search returns for this query.")] = None,
        limit: Annotated[int, SEARCH_LIMIT.field("With query: how many search results.")] = SEARCH_LIMIT.default,
        since: Annotated[str | None, Field(description="First day (YYYY-MM-DD).", max_length=MAX_DATE_CHARS)] = None,
        until: Annotated[str | None, Field(description="Last day (YYYY-MM-DD).", max_length=MAX_DATE_CHARS)] = None,
        sessions: Annotated[
            list[str] | None, Field(description="Ingested sessions: HOST:ID, or a dialog's path.", max_length=MAX_PATHS)
        ] = None,
    ) -> Annotated[CallToolResult, ForgetResult]:
        selection = Selection(
            paths=tuple(paths or ()), query=query, limit=limit, since=since, until=until, sessions=tuple(sessions or ())
        )
        plan: ForgetPlan = await run(forget_plan, memory.get(), selection)
        if not plan.paths:
            answer = ForgetResult(status="nothing", message=plan.render())
            return result(answer, answer.render())
        if not ctx.session.check_client_capability(ClientCapabilities(elicitation=ElicitationCapability())):
            raise ToolError(_refusal(plan))
        try:
            asked = await ctx.elicit(f"reme-mcp asks before forgetting.\n{plan.render()}", Consent)
        except NoBackChannelError:
            raise ToolError(_refusal(plan)) from None
        if asked.action == "accept" and asked.data.forget:
            answer = await run(forget_apply, memory.get(), plan)
        else:
            said = "declined" if asked.action != "cancel" else "cancelled"
            answer = ForgetResult(status="declined", message=f"The person {said}: nothing was removed.")
        return result(answer, answer.render())


def _refusal(plan: ForgetPlan) -> str:
    return (
        "This client cannot ask the person to confirm (no MCP elicitation), so nothing was removed; "
        f"to forget these {len(plan.paths)} file(s), the person runs: {command_line(plan)}"
    )
