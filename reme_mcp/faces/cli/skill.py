"""`reme-mcp skill install`: the reme-memory skill copied into a host's skills folder."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
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
