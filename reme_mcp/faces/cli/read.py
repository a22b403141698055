"""`reme-mcp read`: a file of memory on the terminal, as the MCP `read` tool reads it (a face)."""

from __future__ import annotations

import click

from reme_mcp.errors import ReMeError
from reme_mcp.faces.cli.options import bounded_option, reading_settings
from reme_mcp.ops.limits import READ_MAX_CHARS


@click.command()
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="Use this one ReMe workspace.")
@click.argument("path")
@click.option("--start-line", type=click.IntRange(1), help="First line to show (1-based).")
@click.option("--end-line", type=click.IntRange(1), help="Last line to show.")
@bounded_option("--max-chars", limit=READ_MAX_CHARS, help="At most this many characters.")
@click.option("--project", help="The project the file is in, as search shows it ('personal': your own memory).")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@click.pass_context
def read(
    ctx: click.Context,
    workspace: str | None,
    path: str,
    start_line: int | None,
    end_line: int | None,
    max_chars: int,
    project: str | None,
    as_json: bool,
) -> None:
    """Show a file of memory: PATH as search shows it (path, path#L3-L9, or [file 1a2b3c4d5e6f])."""
    from reme_mcp.ops.for_people import read_for_people
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    try:
        view = WorkspaceMemories(reading_settings(ctx, workspace)).scoped()
        result = view.read(path, start_line, end_line, max_chars, project)
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        from reme_mcp.errors import os_error_line

        raise click.ClickException(os_error_line(exc, "reading")) from None
    click.echo(result.model_dump_json(indent=2) if as_json else read_for_people(result))
