"""`reme-mcp config CLIENT`: the snippet that plugs reme-mcp into a client."""

from __future__ import annotations

import os
from pathlib import Path

import click

from reme_mcp.config import SEMANTIC_CHOICES, check_model_name
from reme_mcp.faces.cli.options import checked_settings, one_line, workspace_option


@click.command("config")
@workspace_option
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
    settings = checked_settings(ctx, workspace)
    if model_choice is not None:
        with one_line("reading the configuration"):
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
