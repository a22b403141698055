"""`reme-mcp serve`: MCP over stdio (what a client starts) or streamable HTTP at /mcp."""

from __future__ import annotations

import dataclasses
import os
import sys

import click

from reme_mcp._version import __version__
from reme_mcp.config import DEFAULT_HTTP_PORT, parse_duration
from reme_mcp.errors import ReMeError
from reme_mcp.faces.cli.options import checked_settings, log_to_stderr, one_line, workspace_option


@click.command()
@workspace_option
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
    log_to_stderr()
    settings = checked_settings(ctx, workspace)
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

    with one_line("serving"):
        token = load_token(token_file)
        served = (
            f"each project's memory under {settings.projects_root} and {settings.personal}"
            if settings.per_project
            else str(settings.workspace)
        )
        line = f"reme-mcp {__version__}: serving {served} at http://{host}:{port}/mcp"
        serve_http(server, host, port, token, list(allow_host), lambda: print(line, file=sys.stderr, flush=True))
