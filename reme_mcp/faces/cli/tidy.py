"""`reme-mcp tidy --dry-run`: the clusters worth consolidating, listed for a person (a face: nothing written)."""

from __future__ import annotations

import click

from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.faces.cli.options import command_settings


@click.command()
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="The ReMe workspace folder.")
@click.option("--dry-run", is_flag=True, help="List the clusters and change nothing (the only mode).")
@click.pass_context
def tidy(ctx: click.Context, workspace: str | None, dry_run: bool) -> None:
    """List notes worth consolidating: copies, chains of versions, dialogs restated, small notes on one topic.

    Covers this folder's project's memory and the personal one (or the one --workspace names).
    Nothing is written: a consolidation is written by your host's model with the MCP prompt
    `consolidate` (Claude Code: /mcp__reme__consolidate ID), as one note that supersedes the
    cluster's notes; they stay readable and forgettable. See docs/consolidation.md.
    """
    from reme_mcp.ops.consolidation.tidy import render_clusters, workspace_clusters
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    if not dry_run:
        raise click.UsageError(
            "tidy changes nothing itself: run `reme-mcp tidy --dry-run` to list the clusters, then the "
            "`consolidate` prompt in your host writes one"
        )
    try:
        settings = command_settings(ctx, workspace)
        sources = WorkspaceMemories(settings).scoped().sources("current")
        shown = [
            render_clusters(workspace_clusters(memory.ws), str(memory.ws.root))
            for _, memory in sources
            if memory.ws.root.is_dir()
        ]
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(os_error_line(exc, "tidy")) from None
    click.echo("\n\n".join(shown) if shown else "No memory here yet: nothing to consolidate.")
