"""`reme-mcp sync`: the command a person runs (a face: arguments in, the report printed)."""

from __future__ import annotations

import logging
import sys

import click

from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError


@click.command()
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="The ReMe workspace folder.")
@click.option("--init", "init", metavar="REMOTE", help="Make the workspace a git work tree syncing with REMOTE.")
@click.option("--dry-run", is_flag=True, help="Show what a sync would commit, bring in and push; change nothing.")
@click.pass_context
def sync(ctx: click.Context, workspace: str | None, init: str | None, dry_run: bool) -> None:
    """Sync the workspace with its git remote: commit, fetch, merge, push, and catch the index up.

    Uses your git and its credentials; stores no secret. See docs/team-sync.md.
    """
    from reme_mcp.ops.memory import Memory

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    root = ctx.find_root()
    try:
        settings = load_settings(workspace or root.params.get("workspace"), root.params.get("timezone"))
        report = Memory(settings).team_sync(dry_run=dry_run, init=init)
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(report.render())
