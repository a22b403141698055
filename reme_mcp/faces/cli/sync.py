"""`reme-mcp sync`: the command a person runs (a face: arguments in, the report printed)."""

from __future__ import annotations

import logging
import sys

import click

from reme_mcp.errors import ReMeError
from reme_mcp.faces.cli.options import command_settings


@click.command()
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="The ReMe workspace folder.")
@click.option("--init", "init", metavar="REMOTE", help="Make the workspace a git work tree syncing with REMOTE.")
@click.option("--dry-run", is_flag=True, help="Show what a sync would commit, bring in and push; change nothing.")
@click.option("--personal", is_flag=True, help="Sync the personal workspace instead of this folder's project's.")
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="PATH",
    help="Share this workspace file even though the secret rules flag it (remembered for later syncs).",
)
@click.pass_context
def sync(
    ctx: click.Context, workspace: str | None, init: str | None, dry_run: bool, personal: bool, allow: tuple[str, ...]
) -> None:
    """Sync a workspace with its git remote: commit, fetch, merge, push, and catch the index up.

    Per project: this folder's project's workspace (a project's memory goes to that project's
    remote only), or with --personal the personal one. Uses your git and its credentials; stores
    no secret. What would be committed or pushed is read with scrub's secret rules first: a
    finding stops the sync (see --allow). See docs/team-sync.md.
    """
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    try:
        settings = command_settings(ctx, workspace)
        report = (
            WorkspaceMemories(settings).scoped().team_sync(personal=personal, dry_run=dry_run, init=init, allow=allow)
        )
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(report.render())
