"""The command line: the MCP server (stdio or HTTP) and a few commands for people.

As thin as the MCP face: every command is a memory operation plus printing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reme_mcp import __version__, process
from reme_mcp.config import (
    DEFAULT_HTTP_PORT,
    SEMANTIC_CHOICES,
    Settings,
    check_model_name,
    parse_duration,
)
from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.faces.command_settings import command_settings
from reme_mcp.ops.limits import SCOPES, SEARCH_LIMIT, SEARCH_MAX_CHARS

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

# How long a one-off `search` waits, at most, for search by meaning to embed what is new: about
# 10,000 chunks on 2 cores (docs/semantic.md). A server embeds in the background instead.
EMBED_WAIT = 60.0

WORKSPACE_HELP = (
    "Serve this one ReMe workspace, with no project logic (default: $REME_WORKSPACE, else one workspace "
    "per project plus a personal one; see reme-mcp project)."
)


@contextlib.contextmanager
def _one_line(doing: str) -> Iterator[None]:
    """Every command's errors as one line: a ReMeError as it is, an OS error named with what to do."""
    try:
        yield
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(os_error_line(exc, doing)) from None


def _settings(ctx: click.Context, workspace: str | None) -> Settings:
    with _one_line("reading the configuration"):
        return command_settings(ctx, workspace)


def _workspace_option(fn: Any) -> Any:
    return click.option("--workspace", "-w", "workspace", type=click.Path(file_okay=False), help=WORKSPACE_HELP)(fn)


def _logging() -> None:
    # stdout belongs to the protocol in stdio mode: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")


# Commands imported only when named: serving needs none of them.
_LAZY_COMMANDS = {
    "ingest": ("reme_mcp.ingest.cli", "ingest"),
    "sync": ("reme_mcp.faces.sync_command", "sync"),
    "project": ("reme_mcp.faces.project_command", "project"),
    "model": ("reme_mcp.faces.model_command", "model"),
    "view": ("reme_mcp.faces.view.command", "view"),
    "forget": ("reme_mcp.faces.forget_command", "forget"),
    "scrub": ("reme_mcp.faces.forget_command", "scrub"),
    "tidy": ("reme_mcp.faces.tidy_command", "tidy"),
}


class _Commands(click.Group):
    """The commands, with the lazy ones imported only when they are named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _LAZY_COMMANDS and cmd_name not in self.commands:
            module, name = _LAZY_COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), name)
            assert isinstance(command, click.Command)
            self.add_command(command)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help=WORKSPACE_HELP)
@click.option("--timezone", help="IANA time zone for 'today' (default: $REME_TIMEZONE, else the local zone).")
@click.option(
    "--ingest",
    "ingest_sources",
    multiple=True,
    help="With no command: follow this host's session logs into memory while serving (see serve --ingest).",
)
@click.option(
    "--semantic",
    type=click.Choice(SEMANTIC_CHOICES),
    help="Search by meaning (needs reme-mcp[semantic]): auto (default, on when installed), on, off; $REME_SEMANTIC.",
)
@click.option(
    "--semantic-model",
    help="The model that searches by meaning: use-e5-small (bundled, default: the two below read together), "
    "use-multilingual-v3, multilingual-e5-small (bundled) or one fetched by `reme-mcp model fetch`; "
    "$REME_SEMANTIC_MODEL.",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False),
    help="The project this server serves, as a folder inside it (default: $REME_PROJECT_DIR, else the "
    "client's roots, the host's project folder, the current folder).",
)
@click.option(
    "--projects-root",
    type=click.Path(file_okay=False),
    help="Where each project's workspace lives (default: $REME_PROJECTS_ROOT, else ~/.reme/projects).",
)
@click.option(
    "--personal",
    type=click.Path(file_okay=False),
    help="The personal workspace every project reads (default: $REME_PERSONAL, else ~/.reme/personal).",
)
@click.option(
    "--no-prompts",
    "no_prompts",
    is_flag=True,
    help="Offer no MCP prompts (consolidate, keep_session): for hosts that turn them into tools (docs/consolidation.md).",
)
@click.version_option(__version__, prog_name="reme-mcp")
@click.pass_context
def cli(
    ctx: click.Context,
    workspace: str | None,
    timezone: str | None,
    ingest_sources: tuple[str, ...],
    semantic: str | None,
    semantic_model: str | None,
    project: str | None,
    projects_root: str | None,
    personal: str | None,
    no_prompts: bool,
) -> None:
    """reme-mcp: long-term memory for MCP clients, kept as plain files in ReMe workspaces.

    With no command, serves MCP over stdio (what an MCP client starts).
    """
    # Where `ingest` files each session when every project has its own workspace (ingest/cli.py).
    ctx.ensure_object(dict)["route"] = _ingest_route
    if ctx.invoked_subcommand is None:
        # --no-prompts only changes serving: a snippet's flags followed by another command keep working.
        ctx.invoke(serve, ingest_sources=ingest_sources, no_prompts=no_prompts)
    elif ingest_sources:
        raise click.UsageError(
            "--ingest goes with serving: reme-mcp --ingest SOURCE, or reme-mcp serve --ingest SOURCE"
        )


@cli.command()
@_workspace_option
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind (loopback by default).")
@click.option("--port", default=DEFAULT_HTTP_PORT, show_default=True, type=click.IntRange(1, 65535), help="HTTP port.")
@click.option("--token-file", type=click.Path(dir_okay=False), help="HTTP: file holding the bearer token.")
@click.option("--allow-host", multiple=True, help="HTTP: another Host name clients use (DNS-rebinding allowlist).")
@click.option(
    "--ingest",
    "ingest_sources",
    multiple=True,
    envvar="REME_INGEST",
    help="Follow this host's session logs into memory in the background (e.g. claude-code; $REME_INGEST, comma-separated).",
)
@click.option(
    "--sync-every",
    "sync_every",
    help="Sync the workspace through its git remote this often while serving, e.g. 5m ($REME_SYNC_EVERY; see reme-mcp sync).",
)
@click.option(
    "--allow-forget",
    is_flag=True,
    help="Offer the destructive `forget` tool, which asks you before every removal ($REME_ALLOW_FORGET=1; docs/forget.md).",
)
@click.option(
    "--no-prompts",
    "no_prompts",
    is_flag=True,
    help="Offer no MCP prompts (consolidate, keep_session): for hosts that turn them into tools (docs/consolidation.md).",
)
@click.pass_context
def serve(
    ctx: click.Context,
    workspace: str | None = None,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_HTTP_PORT,
    token_file: str | None = None,
    allow_host: tuple[str, ...] = (),
    ingest_sources: tuple[str, ...] = (),
    sync_every: str | None = None,
    allow_forget: bool = False,
    no_prompts: bool = False,
) -> None:
    """Serve MCP over stdio (default) or streamable HTTP at /mcp."""
    _logging()
    settings = _settings(ctx, workspace)
    if no_prompts:
        settings = dataclasses.replace(settings, prompts=False)
    if allow_forget:
        settings = dataclasses.replace(settings, allow_forget=True)
    if sync_every is not None:
        try:
            settings = dataclasses.replace(settings, team_sync_every=parse_duration(sync_every))
        except ReMeError as exc:
            raise click.BadParameter(str(exc), param_hint="--sync-every") from None
    # Read here too: a bare `reme-mcp` reaches serve through ctx.invoke, which skips envvars.
    chosen = ingest_sources or (os.environ.get("REME_INGEST", ""),)
    names = tuple(name.strip() for value in chosen for name in value.split(",") if name.strip())
    settings = dataclasses.replace(settings, ingest=names)
    if transport == "stdio":
        from reme_mcp.faces.stdio.front import serve as serve_stdio

        serve_stdio(settings)
        return
    from reme_mcp.faces.http import load_token, serve_http
    from reme_mcp.faces.server import build_server

    server = build_server(settings)

    with _one_line("serving"):
        token = load_token(token_file)
        served = (
            f"each project's memory under {settings.projects_root} and {settings.personal}"
            if settings.per_project
            else str(settings.workspace)
        )
        print(f"reme-mcp {__version__}: serving {served} at http://{host}:{port}/mcp", file=sys.stderr)
        serve_http(server, host, port, token, list(allow_host))


def _ingest_route(settings: Settings, dry_run: bool) -> Any:
    from reme_mcp.ops.memories import Memories

    return Memories(settings).route(dry_run)


@cli.command()
@_workspace_option
@click.argument("query")
@click.option(
    "--limit",
    "-n",
    default=SEARCH_LIMIT.default,
    show_default=True,
    type=click.IntRange(SEARCH_LIMIT.low, SEARCH_LIMIT.high),
    help="How many results.",
)
@click.option("--path-prefix", help="Only files under this folder, e.g. digest/.")
@click.option("--start-date", help="Only notes dated on or after this day (YYYY-MM-DD).")
@click.option("--end-date", help="Only notes dated on or before this day (YYYY-MM-DD).")
@click.option(
    "--max-chars",
    default=SEARCH_MAX_CHARS.default,
    show_default=True,
    type=click.IntRange(SEARCH_MAX_CHARS.low, SEARCH_MAX_CHARS.high),
    help="Budget for all snippets together.",
)
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
    from reme_mcp.ops.memories import Memories

    with _one_line("searching"):
        view = Memories(_settings(ctx, workspace)).scoped()
        for _, memory in view.sources(scope):
            _embed_first(memory, wait)
        result = view.search(
            query,
            limit=limit,
            start_date=start_date,
            end_date=end_date,
            path_prefix=path_prefix,
            max_chars=max_chars,
            scope=scope,
        )
    click.echo(result.model_dump_json(indent=2) if as_json else result.render())


def _embed_first(memory: Memory, wait: float) -> None:
    """A one-off search finds by meaning what a server has not embedded yet: it embeds it first,
    for at most `wait` seconds, with a progress bar on stderr; what is left is said in one line."""
    from tqdm import tqdm

    _logging()
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


@cli.command()
@_workspace_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def reindex(ctx: click.Context, workspace: str | None, quiet: bool) -> None:
    """Rebuild the index from the files (never needed for correctness; the index heals itself).

    Per project: this folder's project's workspace and the personal one, where they exist."""
    from tqdm import tqdm

    from reme_mcp.ops.memories import Memories

    _logging()
    sources = Memories(_settings(ctx, workspace)).scoped().sources()
    for _, memory in sources:
        if len(sources) > 1 and not memory.ws.root.is_dir():
            continue
        with tqdm(total=0, unit="file", disable=quiet, file=sys.stderr, desc="indexing") as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            with _one_line("rebuilding the index"):
                result = memory.reindex(progress)
        click.echo(result.render())


@cli.command()
@_workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(ctx: click.Context, workspace: str | None, as_json: bool) -> None:
    """Report the project and workspace, its files by kind, the index's state and the configuration."""
    from reme_mcp.ops.memories import Memories

    with _one_line("checking the workspace"):
        report = Memories(_settings(ctx, workspace)).scoped().doctor()
    click.echo(report.model_dump_json(indent=2, exclude_none=True) if as_json else report.render())


@cli.command("config")
@_workspace_option
@click.argument("client", required=False)
@click.option("--list", "list_all", is_flag=True, help="List the clients a snippet can be printed for.")
@click.option(
    "--launcher",
    type=click.Choice(["installed", "uvx"]),
    default="installed",
    show_default=True,
    help="installed: the absolute command of this installation; uvx: `uvx reme-mcp` (needs reme-mcp on PyPI).",
)
@click.option(
    "--ingest",
    "ingest_sources",
    multiple=True,
    help="The server also follows this host's session logs into memory (e.g. claude-code); repeatable.",
)
@click.option(
    "--semantic",
    "semantic_choice",
    type=click.Choice(SEMANTIC_CHOICES),
    help="The server searches by meaning: auto (on when reme-mcp[semantic] is installed), on or off.",
)
@click.option(
    "--semantic-model",
    "model_choice",
    help="The server searches by meaning with this model (fetched first with `reme-mcp model fetch`).",
)
@click.pass_context
def config_cmd(
    ctx: click.Context,
    workspace: str | None,
    client: str | None,
    list_all: bool,
    launcher: str,
    ingest_sources: tuple[str, ...],
    semantic_choice: str | None,
    model_choice: str | None,
) -> None:
    """Print the configuration snippet that adds reme-mcp to CLIENT (e.g. claude-code, codex, cursor)."""
    from reme_mcp.faces.client_config import UnknownClientError, list_clients, render_config

    if list_all or not client:
        for name, description in list_clients():
            click.echo(f"{name:16} {description}")
        return
    settings = _settings(ctx, workspace)
    if model_choice is not None:
        with _one_line("reading the configuration"):
            model_choice = check_model_name(model_choice.strip())
    # A zone the user chose (--timezone or $REME_TIMEZONE) goes into the snippet; the local zone is the default anyway.
    chosen = ctx.find_root().params.get("timezone") or os.environ.get("REME_TIMEZONE")
    zone = str(settings.timezone) if chosen else None
    try:
        click.echo(
            render_config(
                client,
                None if settings.per_project else Path(settings.workspace),
                launcher,
                zone,
                ingest_sources,
                semantic_choice,
                model_choice,
            ),
            nl=False,
        )
    except UnknownClientError as exc:
        raise click.ClickException(str(exc)) from None


@cli.group()
def skill() -> None:
    """The reme-memory skill that teaches a model when to recall and what to keep."""


@skill.command("install")
@click.argument("host", required=False)
@click.option("--dir", "directory", type=click.Path(file_okay=False), help="Install into this skills folder instead.")
def skill_install(host: str | None, directory: str | None) -> None:
    """Install the skill where HOST reads skills (claude-code, codex, agents, opencode, openclaw, hermes, pi, dsh, deerflow)."""
    from reme_mcp.faces.skill_pack import SKILL_DIRS, SkillError, install, skills_dir

    if host is None and directory is None:
        raise click.UsageError(f"name a host ({', '.join(SKILL_DIRS)}) or give --dir")
    try:
        target = install(Path(directory) if directory else skills_dir(host or ""))
    except (SkillError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"installed the reme-memory skill in {target}")


def main() -> None:
    process.one_thread_libraries()
    process.ignore_lease_breaks()
    cli(prog_name="reme-mcp")
