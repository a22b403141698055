"""The settings a command runs with: its own `--workspace`, else the group's flags, else the
environment (config.load_settings). One place, so every command resolves the project alike."""

from __future__ import annotations

import click

from reme_mcp.config import Settings, load_settings


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
