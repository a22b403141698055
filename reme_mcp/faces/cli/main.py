"""The `reme-mcp` command group: the options every command shares, and each command imported
only when it is named (serving needs none of the others)."""

from __future__ import annotations

import importlib

import click

from reme_mcp import process
from reme_mcp._version import __version__
from reme_mcp.config import SEMANTIC_CHOICES
from reme_mcp.faces.cli.options import WORKSPACE_HELP

# Each command, by the module under reme_mcp.faces.cli that holds it and its name there.
_COMMANDS = {
    "serve": ("serve", "serve"),
    "search": ("search", "search"),
    "reindex": ("health", "reindex"),
    "doctor": ("health", "doctor"),
    "config": ("client_config", "config_cmd"),
    "skill": ("skill", "skill"),
    "ingest": ("ingest", "ingest"),
    "sync": ("sync", "sync"),
    "project": ("project", "project"),
    "model": ("model", "model"),
    "view": ("view", "view"),
    "forget": ("forget", "forget"),
    "scrub": ("forget", "scrub"),
    "read": ("read", "read"),
    "tidy": ("tidy", "tidy"),
}


class _Commands(click.Group):
    """The commands, each imported only when it is named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _COMMANDS and cmd_name not in self.commands:
            module, name = _COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"reme_mcp.faces.cli.{module}"), name)
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
    if ctx.invoked_subcommand is None:
        serve = cli.get_command(ctx, "serve")
        assert serve is not None
        # --no-prompts only changes serving: a snippet's flags followed by another command keep working.
        ctx.invoke(serve, ingest_sources=ingest_sources, no_prompts=no_prompts)
    elif ingest_sources:
        raise click.UsageError(
            "--ingest goes with serving: reme-mcp --ingest SOURCE, or reme-mcp serve --ingest SOURCE"
        )


def main() -> None:
    process.one_thread_libraries()
    process.ignore_lease_breaks()
    cli(prog_name="reme-mcp")
