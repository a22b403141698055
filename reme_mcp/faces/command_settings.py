"""The settings a command runs with: its own `--workspace`, else the group's flags, else the
environment (config.load_settings). One place, so every command resolves the project alike."""

from __future__ import annotations

import click

from reme_mcp.config import Settings, load_settings
from reme_mcp.errors import ReMeError


def command_settings(ctx: click.Context, workspace: str | None = None) -> Settings:
    """Raises ReMeError (one line) for a bad flag or variable."""
    root = ctx.find_root().params
    return load_settings(
        workspace or root.get("workspace"),
        root.get("timezone"),
        root.get("semantic"),
        root.get("semantic_model"),
        root.get("projects_root"),
        root.get("personal"),
        root.get("project"),
    )


def reading_settings(ctx: click.Context, workspace: str | None = None) -> Settings:
    """The settings of a command that only reads: a named workspace that does not exist is a
    mistyped path, said in one line, not an empty memory (nothing is created looking for it).
    A project's workspace is made by its first `remember`; until then its memory is empty."""
    settings = command_settings(ctx, workspace)
    if not settings.per_project and not settings.workspace.is_dir():
        raise ReMeError(
            f"no workspace at {settings.workspace}: check the path given with --workspace or $REME_WORKSPACE "
            "(a server creates it with the first remember)"
        )
    return settings
