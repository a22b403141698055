"""`reme-mcp project`: which project this folder is, the projects there are, and adopting old memory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.faces.cli.options import command_settings

if TYPE_CHECKING:
    from reme_mcp.ops.workspace_memories import WorkspaceMemories


def _memories(ctx: click.Context) -> WorkspaceMemories:
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    try:
        settings = command_settings(ctx)
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    return WorkspaceMemories(settings)


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def project(ctx: click.Context, as_json: bool) -> None:
    """Which project a server started here serves, where that came from, and where its memory lives.

    The project is the git work tree around the folder (any clone, worktree or subfolder of it
    is the same project), named by --project or $REME_PROJECT_DIR when set.
    """
    if ctx.invoked_subcommand is not None:
        return
    memories = _memories(ctx)
    report = memories.scoped().project_report()
    click.echo(report.model_dump_json(indent=2) if as_json else report.render())


@project.command("list")
@click.pass_context
def list_projects(ctx: click.Context) -> None:
    """Every project that has memory, with its folder, and the personal workspace."""
    memories = _memories(ctx)
    home = memories.home
    known = home.known()
    for item in known:
        click.echo(f"{item.name}\t{item.root or '(folder unknown)'}\t{item.path}")
    click.echo(f"personal\t-\t{home.personal}")
    if not known:
        click.echo("(no project has memory yet: the first remember in a project makes its workspace)", err=True)


@project.command()
@click.option(
    "--from",
    "sources",
    multiple=True,
    type=click.Path(file_okay=False, exists=True),
    help="An old workspace to sort (repeatable; default: those `reme-mcp project` lists as unsorted).",
)
@click.option("--dry-run", is_flag=True, help="Say where each file would go; move nothing.")
@click.pass_context
def adopt(ctx: click.Context, sources: tuple[str, ...], dry_run: bool) -> None:
    """Move memory kept before projects into each project's workspace, the rest into the personal one.

    A dialog goes where its recorded working folder says; a note where its session's dialog went.
    Nothing is deleted or overwritten: a name already taken gets a new one.
    """
    from reme_mcp.ops import adopt as adopting

    memories = _memories(ctx)
    if not memories.settings.per_project:
        raise click.ClickException("adopt sorts memory into projects: run it without --workspace/REME_WORKSPACE")
    chosen = [Path(s) for s in sources] or [Path(p) for p in memories.scoped().project_report().unsorted]
    if not chosen:
        click.echo("nothing to adopt: no workspace from before projects holds memory here (name one with --from)")
    for source in chosen:
        try:
            planned = adopting.plan(source.resolve(), memories.home)
            if not dry_run:
                adopting.apply(planned, memories.home)
        except ReMeError as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:
            raise click.ClickException(os_error_line(exc, "adopting")) from None
        click.echo(planned.render(done=not dry_run))
    if dry_run:
        print("reme-mcp: a dry run: nothing was moved", file=sys.stderr)
