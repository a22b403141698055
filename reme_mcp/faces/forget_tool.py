"""The opt-in `forget` tool: the person's consent asked through MCP elicitation before every removal.

Registered only when the person turned it on (`serve --allow-forget`, REME_ALLOW_FORGET=1):
the default server lists exactly the five tools. A call makes the plan (ops/forget/forgetting.py), shows
it to the person through the client (elicitation), and forgets exactly that plan only on their
acceptance; a client that cannot ask the person gets a refusal naming the command to run
instead. Nothing the model says counts as consent.

The plan and the question are the SDK's resolvers, so one tool works on both generations of
the protocol: before 2026-07-28 the server asks mid-call; from it, the call returns the
question and the client calls again with the answer. An answer counts only for the exact
question asked: a plan that changed between the rounds is asked about again.

Annotations here are evaluated when the functions are defined (no `from __future__ import
annotations`): the SDK reads the resolvers from them, and they name this function's locals.
"""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import CallToolResult, ClientCapabilities, ToolAnnotations
from pydantic import BaseModel, Field

from reme_mcp.ops.forget.forgetting import ForgetPlan, ForgetResult, Selection, command_line, forget_apply, forget_plan
from reme_mcp.ops.limits import MAX_DATE_CHARS, SEARCH_LIMIT

if TYPE_CHECKING:  # the Memory's modules load with the first call, not when the server is built
    from reme_mcp.ops.memory import Memory
    from reme_mcp.ops.session_memory import SessionMemory

DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
# At most this many paths or sessions in one call: a person reads the whole list before agreeing.
MAX_PATHS = 50
DESCRIPTION = """DESTRUCTIVE: removes memory files for good, only after the person agrees in their client.

Select by paths (files or folders), a search query, a date range (since/until) or ingested sessions
(HOST:ID or a dialog's path). The person is shown exactly which files go and asked; declined means
nothing is removed. Use only when the person asked to forget something."""

Runner = Callable[..., Awaitable[Any]]
SessionOf = Callable[[Context], Awaitable["SessionMemory"]]
Paths = Annotated[list[str] | None, Field(description="Workspace-relative files or folders.", max_length=MAX_PATHS)]
Query = Annotated[str | None, Field(description="Forget the files search returns for this query.")]
Limit = Annotated[int, SEARCH_LIMIT.field("With query: how many search results.")]
Since = Annotated[str | None, Field(description="First day (YYYY-MM-DD).", max_length=MAX_DATE_CHARS)]
Until = Annotated[str | None, Field(description="Last day (YYYY-MM-DD).", max_length=MAX_DATE_CHARS)]
Sessions = Annotated[
    list[str] | None, Field(description="Ingested sessions: HOST:ID, or a dialog's path.", max_length=MAX_PATHS)
]


class Consent(BaseModel):
    """What the person is asked: one yes or no."""

    forget: bool = Field(description="Yes: forget exactly the files listed, for good.")


def register_forget(
    server: MCPServer, session_of: SessionOf, run: Runner, result: Callable[..., CallToolResult]
) -> None:
    """Add the `forget` tool to `server`; `session_of` gives a call's view of memory, `run` and
    `result` are the server's own (faces/server.py). It forgets in the workspace `remember` writes
    to for that session (this project's, or the one named workspace)."""

    async def plan_for(
        ctx: Context,
        paths: list[str] | None,
        query: str | None,
        limit: int,
        since: str | None,
        until: str | None,
        sessions: list[str] | None,
    ) -> ForgetPlan:
        selection = Selection(
            paths=tuple(paths or ()), query=query, limit=limit, since=since, until=until, sessions=tuple(sessions or ())
        )
        memory: Memory = (await session_of(ctx)).sources()[0][1]
        plan: ForgetPlan = await run(forget_plan, memory, selection)
        return plan

    async def consent(ctx: Context, plan: Annotated[ForgetPlan, Resolve(plan_for)]) -> Elicit[Consent] | Consent:
        if not plan.paths:
            return Consent(forget=False)  # nothing to ask about
        if not _can_ask(ctx.client_capabilities):
            raise ToolError(_refusal(plan))
        return Elicit(f"reme-mcp asks before forgetting.\n{plan.render()}", Consent)

    @server.tool(
        name="forget",
        title="Forget (REMOVES memory files, after asking the person)",
        annotations=DESTRUCTIVE,
        description=DESCRIPTION,
    )
    async def forget(
        ctx: Context,
        plan: Annotated[ForgetPlan, Resolve(plan_for)],
        answer: Annotated[ElicitationResult[Consent], Resolve(consent)],
        paths: Paths = None,
        query: Query = None,
        limit: Limit = SEARCH_LIMIT.default,
        since: Since = None,
        until: Until = None,
        sessions: Sessions = None,
    ) -> Annotated[CallToolResult, ForgetResult]:
        if not plan.paths:
            done = ForgetResult(status="nothing", message=plan.render())
        elif isinstance(answer, AcceptedElicitation) and answer.data.forget:
            done = await run(forget_apply, (await session_of(ctx)).open(Path(plan.workspace)), plan)
        else:
            said = "cancelled" if answer.action == "cancel" else "declined"
            done = ForgetResult(status="declined", message=f"The person {said}: nothing was removed.")
        return result(done, done.render())


def _can_ask(capabilities: ClientCapabilities | None) -> bool:
    """Whether the client declared form elicitation (an empty `elicitation` object means form)."""
    asking = capabilities.elicitation if capabilities is not None else None
    return asking is not None and (asking.form is not None or asking.url is None)


def _refusal(plan: ForgetPlan) -> str:
    return (
        "This client cannot ask the person to confirm (no MCP elicitation), so nothing was removed; "
        f"to forget these {len(plan.paths)} file(s), the person runs: {command_line(plan)}"
    )
