"""`reme-mcp ingest`: list the sources, backfill one, or follow several."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import click

from reme_mcp import process
from reme_mcp.errors import ReMeError
from reme_mcp.faces.cli.options import checked_settings
from reme_mcp.ops import session_logs
from reme_mcp.ops.session_logs import SOURCES, Filters, Importer, Workspace, available, imported_summary

_SOURCE_HELP = f"One of: {', '.join(SOURCES)}."


def _workspace(ctx: click.Context, workspace: str | None) -> Workspace:
    return session_logs.workspace(checked_settings(ctx, workspace))


def _route(ctx: click.Context, workspace: str | None, dry_run: bool = False) -> Callable[[str], Path] | None:
    return session_logs.route(checked_settings(ctx, workspace), dry_run)


def _importer(ws: Workspace, name: str, path: str | None, **kwargs: Any) -> Importer:
    try:
        return session_logs.importer(ws, name, path, **kwargs)
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None


@click.group()
def ingest() -> None:
    """Import each host's own session logs into session/dialog/<host>/ (off unless you run it)."""


@ingest.command("sources")
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="The ReMe workspace folder.")
@click.pass_context
def sources_cmd(ctx: click.Context, workspace: str | None) -> None:
    """Each known source: found or not, where, what it holds, and what is already imported."""
    ws = _workspace(ctx, workspace)
    for name, source in SOURCES.items():
        importer = Importer(ws, source, dry_run=True)
        trouble = importer.problem()
        done_sessions, done_messages = imported_summary(ws, source)
        click.echo(f"{name}: {importer.location}")
        if trouble:
            click.echo(f"  not available: {trouble}")
        else:
            click.echo(f"  available: {available(source, importer.location).line()}")
        click.echo(
            f"  imported: {done_sessions} session(s), {done_messages} message(s); parser {source.parser_version}"
        )


def _check_date(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date: use YYYY-MM-DD") from None


@ingest.command()
@click.argument("source")
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="The ReMe workspace folder.")
@click.option("--path", help="Read this folder (or database) instead of the host's default location.")
@click.option("--since", callback=_check_date, help="Only messages from this day on (YYYY-MM-DD).")
@click.option("--project", type=click.Path(), help="Only sessions run in this folder or below it.")
@click.option("--dry-run", is_flag=True, help="Print what would be imported; write nothing, cursors included.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def backfill(
    ctx: click.Context,
    source: str,
    workspace: str | None,
    path: str | None,
    since: str | None,
    project: str | None,
    dry_run: bool,
    quiet: bool,
) -> None:
    """Import SOURCE's history once (resumable: a rerun imports only what is new)."""
    from tqdm import tqdm

    ws = _workspace(ctx, workspace)
    filters = Filters(since=since or "", project=str(Path(project).resolve()) if project else "")
    importer = _importer(ws, source, path, dry_run=dry_run, filters=filters, route=_route(ctx, workspace, dry_run))
    with tqdm(total=0, unit="log", disable=quiet or None, file=sys.stderr, desc=source) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            tally = importer.run_once(progress=progress, processes=os.cpu_count() or 1)
        except ReMeError as exc:
            raise click.ClickException(str(exc)) from None
    verb = "would import" if dry_run else "imported"
    click.echo(f"{source}: {verb} {tally.line()}")


@ingest.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="The ReMe workspace folder.")
@click.option("--path", help="With one SOURCE: read this folder (or database) instead of the default.")
@click.option(
    "--interval", default=0.5, show_default=True, type=click.FloatRange(0.05, 60), help="Seconds between passes."
)
@click.pass_context
def watch(
    ctx: click.Context, sources: tuple[str, ...], workspace: str | None, path: str | None, interval: float
) -> None:
    """Follow SOURCE... for new sessions and appended lines until stopped (Ctrl-C), resuming from the cursors."""
    if path and len(sources) > 1:
        raise click.UsageError("--path names one source's location: give exactly one SOURCE with it")
    ws = _workspace(ctx, workspace)
    route = _route(ctx, workspace)
    importers = [_importer(ws, name, path, route=route) for name in sources]
    for importer in importers:
        trouble = importer.problem()
        if trouble:
            click.echo(f"reme-mcp ingest: {trouble} (waiting for it to appear)", err=True)
    stop = threading.Event()
    process.stop_on_signals(stop)

    def report(name: str) -> Any:
        def on_pass(tally: Any) -> None:
            if tally.messages:
                click.echo(f"{name}: imported {tally.line()}", err=True)

        return on_pass

    threads = [
        threading.Thread(target=imp.watch, args=(stop, interval, report(imp.source.name)), daemon=True)
        for imp in importers
    ]
    for thread in threads:
        thread.start()
    click.echo(f"reme-mcp ingest: following {', '.join(sources)} into {ws.root} (pid {os.getpid()})", err=True)
    while not stop.wait(0.2):
        pass
    for thread in threads:
        thread.join(timeout=5)
