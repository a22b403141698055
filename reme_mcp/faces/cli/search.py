"""`reme-mcp search`: memory searched as the MCP `search` tool does, for a person."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from reme_mcp.faces.cli.options import bounded_option, checked_reading, log_to_stderr, one_line, workspace_option
from reme_mcp.ops.limits import SCOPES, SEARCH_LIMIT, SEARCH_MAX_CHARS, check_query

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory


# How long a one-off `search` waits, at most, for search by meaning to embed what is new: about
# 10,000 chunks on 2 cores (docs/semantic.md). A server embeds in the background instead.
EMBED_WAIT = 60.0


@click.command()
@workspace_option
@click.argument("query")
@bounded_option("--limit", "-n", limit=SEARCH_LIMIT, help="How many results.")
@click.option("--path-prefix", help="Only files under this folder, e.g. digest/.")
@click.option("--start-date", help="Only notes dated on or after this day (YYYY-MM-DD).")
@click.option("--end-date", help="Only notes dated on or before this day (YYYY-MM-DD).")
@bounded_option("--max-chars", limit=SEARCH_MAX_CHARS, help="Budget for all snippets together.")
@click.option(
    "--scope",
    type=click.Choice(SCOPES),
    default="current",
    show_default=True,
    help="current: this project and the personal memory; project or personal alone; all: every project.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@click.option(
    "--wait",
    "wait",
    default=EMBED_WAIT,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="With search by meaning on: seconds to wait for what is not embedded yet (0: search at once).",
)
@click.pass_context
def search(
    ctx: click.Context,
    workspace: str | None,
    query: str,
    limit: int,
    path_prefix: str | None,
    start_date: str | None,
    end_date: str | None,
    max_chars: int,
    scope: str,
    as_json: bool,
    wait: float,
) -> None:
    """Search memory, as the MCP `search` tool does (from this folder's project)."""
    from reme_mcp.ops.for_people import search_for_people
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    with one_line("searching"):
        check_query(query)  # before any index is opened or embedded for it
        view = WorkspaceMemories(checked_reading(ctx, workspace)).scoped()
        for _, memory in view.sources(scope):
            _embed_first(memory, wait)
        result = view.search(query, limit, start_date, end_date, path_prefix, max_chars, scope)
    click.echo(result.model_dump_json(indent=2) if as_json else search_for_people(result))


def _embed_first(memory: Memory, wait: float) -> None:
    """A one-off search finds by meaning what a server has not embedded yet: it embeds it first,
    for at most `wait` seconds, with a progress bar on stderr; what is left is said in one line."""
    from tqdm import tqdm

    log_to_stderr()
    with tqdm(total=0, unit="chunk", file=sys.stderr, desc="embedding", disable=None, delay=0.5) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        covered = memory.embed_waiting(wait, progress)
    if covered is not None and covered[0] < covered[1]:
        embedded, total = covered
        click.echo(
            f"reme-mcp: search by meaning covers {embedded:,} of {total:,} chunks so far; the rest is "
            "embedded by a running server or the next search (`reme-mcp doctor` says how far)",
            err=True,
        )
