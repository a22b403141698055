"""`reme-mcp forget` and `reme-mcp scrub`: the commands a person runs (a face: arguments in,
the plan shown, consent asked, the answer printed). The work is in ops/forget/forgetting.py and ops/forget/scrub.py."""

from __future__ import annotations

import dataclasses
import logging
import sys
from typing import TYPE_CHECKING

import click

from reme_mcp.config import Settings, resolve_trash_days
from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.faces.cli.options import bounded_option, command_settings, reading_settings, workspace_option
from reme_mcp.ops.limits import SEARCH_LIMIT
from reme_mcp.ops.wording import counted, person_path

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

WORKSPACE_HELP = "One ReMe workspace (default: $REME_WORKSPACE, else this folder's project's memory)."
# A workspace's memory, folder by folder (workspace-format.md): what --everything names.
MEMORY_FOLDERS = ("daily", "digest", "session", "resource")


def _memory(
    ctx: click.Context,
    workspace: str | None,
    keep_days: str | None = None,
    where: str | None = None,
    must_exist: bool = True,
) -> Memory:
    """The workspace `remember` writes to from here: the named one, else this folder's project's
    (else the personal one), as the other commands resolve it; `where` names a project (as
    `reme-mcp project list` shows it) or `personal` instead."""
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    settings: Settings = (reading_settings if must_exist else command_settings)(ctx, workspace)
    if keep_days is not None:
        settings = dataclasses.replace(settings, trash_days=resolve_trash_days(keep_days))
    memories = WorkspaceMemories(settings)
    if where is not None:
        if not settings.per_project:
            raise ReMeError("--in names a project's memory: leave out --workspace/REME_WORKSPACE to use it")
        return memories.of(memories.home.by_name(where))
    return memories.scoped().sources()[0][1]


def _consent(question: str, yes: bool) -> bool:
    """--yes, or the person's answer on a terminal; without either, a one-line refusal."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise click.ClickException("no terminal to ask for confirmation: nothing was changed; add --yes to go ahead")
    return click.confirm(question, default=False, err=True)


@click.command()
@workspace_option
@click.argument("paths", nargs=-1)
@click.option("--query", "-q", help="Forget the files `search` returns for this query.")
@bounded_option("--limit", "-n", limit=SEARCH_LIMIT, help="With --query: how many search results.")
@click.option("--since", help="Forget what is dated on or after this day (YYYY-MM-DD).")
@click.option("--until", help="Forget what is dated on or before this day (YYYY-MM-DD).")
@click.option(
    "--session",
    "sessions",
    multiple=True,
    help="An ingested session: HOST:ID (e.g. claude-code:abc) or a dialog's path.",
)
@click.option(
    "--in",
    "where",
    metavar="PROJECT",
    help="Forget in this project's memory (a name `reme-mcp project list` shows) or `personal`.",
)
@click.option("--everything", is_flag=True, help="Forget every memory file of the workspace (a whole project).")
@click.option("--dry-run", is_flag=True, help="List exactly what would go; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--keep-days", help="Days the forgotten files wait in the trash (default: $REME_TRASH_DAYS, else 30; 0: none)."
)
@click.option("--empty-trash", is_flag=True, help="Remove every forgotten file of this workspace from the trash now.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan or the result as JSON.")
@click.pass_context
def forget(
    ctx: click.Context,
    workspace: str | None,
    paths: tuple[str, ...],
    query: str | None,
    limit: int,
    since: str | None,
    until: str | None,
    sessions: tuple[str, ...],
    where: str | None,
    everything: bool,
    dry_run: bool,
    yes: bool,
    keep_days: str | None,
    empty_trash: bool,
    as_json: bool,
) -> None:
    """Forget files of memory for good: PATHS (files or folders), --query, --since/--until, --session.

    Shows exactly what goes, asks (or --yes), then moves the files to a private trash outside the
    workspace and removes every trace of them from the index, vectors, ledger and day indexes;
    an ingested session is never imported again. See docs/forget.md.
    """
    from reme_mcp.ops.forget.forgetting import Selection, forget_apply, forget_plan
    from reme_mcp.ops.forget.forgetting import empty_trash as empty_the_trash

    try:
        memory = _memory(ctx, workspace, keep_days, where, must_exist=not empty_trash)
        if everything:
            if paths or query or since or until or sessions:
                raise ReMeError("--everything goes alone: it already names every file of the workspace")
            paths = tuple(name for name in MEMORY_FOLDERS if (memory.ws.root / name).is_dir())
        if empty_trash:
            if paths or query or since or until or sessions:
                raise ReMeError("--empty-trash goes alone: empty the trash, then forget in a second command")
            click.echo(f"Emptied the trash: {counted(empty_the_trash(memory), 'forgetting')} removed for good.")
            return
        selection = Selection(paths=paths, query=query, limit=limit, since=since, until=until, sessions=sessions)
        plan = forget_plan(memory, selection)
        if dry_run or not plan.paths:
            click.echo(plan.model_dump_json(indent=2) if as_json else plan.render(person_path))
            if dry_run:
                click.echo("Dry run: nothing was changed.", err=True)
            return
        if not yes and sys.stdin.isatty():
            click.echo(plan.render(person_path), err=True)  # exactly what goes, before the question
        if not _consent(f"Forget {'this file' if len(plan.paths) == 1 else f'these {len(plan.paths):,} files'}?", yes):
            click.echo("Nothing was forgotten.", err=True)
            sys.exit(1)
        result = forget_apply(memory, plan)
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(os_error_line(exc, "forgetting")) from None
    click.echo(result.model_dump_json(indent=2) if as_json else result.render(person_path))


@click.command()
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help=WORKSPACE_HELP)
@click.option(
    "--dry-run", is_flag=True, help="Report the findings only; change nothing (also without --yes and a terminal)."
)
@click.option("--yes", "-y", is_flag=True, help="Redact without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def scrub(ctx: click.Context, workspace: str | None, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Scan the workspace with today's secret rules; redact what is found in files reme-mcp wrote.

    Every finding is reported by path, line and kind (never the value). Notes written by
    `remember` and ingested dialogs are redacted in place after confirmation (a terminal
    prompt, or --yes); your own files are only reported. Exit status 1 while findings remain.
    """
    from reme_mcp.ops.forget.scrub import scrub_apply, scrub_scan

    try:
        memory = _memory(ctx, workspace)
        report = scrub_scan(memory)
        if report.redactable and not dry_run:
            if yes or sys.stdin.isatty():
                if not yes:  # the findings first, then the question
                    click.echo(report.render(), err=True)
                files = len(report.hashes)
                if _consent(
                    f"Redact {counted(len(report.redactable), 'finding')} in {counted(files, 'file')} reme-mcp wrote?",
                    yes,
                ):
                    report = scrub_apply(memory, report)
            else:
                click.echo("no terminal to ask for confirmation: nothing was changed; add --yes to redact", err=True)
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(os_error_line(exc, "scrubbing")) from None
    click.echo(report.model_dump_json(indent=2) if as_json else report.render())
    left = [f for f in report.findings if not (f.redactable and f.path in report.redacted)]
    sys.exit(1 if left else 0)
