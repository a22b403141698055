"""The workspace's health, for a person: `reme-mcp doctor` reports, `reme-mcp reindex` rebuilds."""

from __future__ import annotations

import sys

import click

from reme_mcp.faces.cli.options import checked_reading, checked_settings, log_to_stderr, one_line, workspace_option


@click.command()
@workspace_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def reindex(ctx: click.Context, workspace: str | None, quiet: bool) -> None:
    """Rebuild the index from the files (never needed for correctness; the index heals itself).

    Per project: this folder's project's workspace and the personal one, where they exist."""
    from tqdm import tqdm

    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    log_to_stderr()
    sources = WorkspaceMemories(checked_reading(ctx, workspace)).scoped().sources()
    for _, memory in sources:
        if len(sources) > 1 and not memory.ws.root.is_dir():
            continue
        with tqdm(total=0, unit="file", disable=quiet, file=sys.stderr, desc="indexing") as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            with one_line("rebuilding the index"):
                result = memory.reindex(progress)
        click.echo(result.render())


@click.command()
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(ctx: click.Context, workspace: str | None, as_json: bool) -> None:
    """Report the project and workspace, its files by kind, the index's state and the configuration."""
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    with one_line("checking the workspace"):
        report = (
            WorkspaceMemories(checked_settings(ctx, workspace)).scoped().doctor()
        )  # says when there is no workspace
    click.echo(report.model_dump_json(indent=2, exclude_none=True) if as_json else report.render())
