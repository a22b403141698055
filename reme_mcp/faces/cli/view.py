"""`reme-mcp view`: the memory page on a loopback port, opened in the person's browser."""

from __future__ import annotations

import sys
import webbrowser

import click

from reme_mcp import process
from reme_mcp._version import __version__
from reme_mcp.errors import ReMeError
from reme_mcp.faces.cli.options import reading_settings
from reme_mcp.faces.listening import listening_socket

BIND_HOST = "127.0.0.1"
DEFAULT_VIEW_PORT = 7332


@click.command()
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="The ReMe workspace folder.")
@click.option(
    "--port",
    default=DEFAULT_VIEW_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Loopback port for the page (0: any free port).",
)
@click.option("--no-open", is_flag=True, help="Print the link only; do not open a browser.")
@click.pass_context
def view(ctx: click.Context, workspace: str | None, port: int, no_open: bool) -> None:
    """Open the memory page in your browser: timeline, search, notes, health (read-only).

    Serves on 127.0.0.1 only. The link holds a one-time token that the first visit trades for a
    cookie; anyone else on this machine without it gets 403. Ctrl-C stops it.
    """
    import uvicorn

    from reme_mcp.faces.http import guarded_protocol
    from reme_mcp.faces.view.app import build_page_app
    from reme_mcp.faces.view.auth import TOKEN_PARAM, PageKeys
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

    try:
        settings = reading_settings(ctx, workspace)
        # One page per workspace: this folder's project first, the personal memory, every other project.
        view = WorkspaceMemories(settings).scoped()
        ordered = [*view.sources("current"), *view.sources("all")]
        shown = {(label or "default"): memory for label, memory in ordered}
        sock = listening_socket(BIND_HOST, port, "memory page")
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    port = sock.getsockname()[1]
    keys = PageKeys(port)
    app = build_page_app(shown, keys, port)
    url = f"http://{BIND_HOST}:{port}/?{TOKEN_PARAM}={keys.token}"
    # The page opens on the first memory: this folder's project's when started in one.
    first = next(iter(shown.values())).ws.root
    others = f" (and {len(shown) - 1} other {'memory' if len(shown) == 2 else 'memories'})" if len(shown) > 1 else ""
    click.echo(f"reme-mcp {__version__}: the memory page of {first}{others} is at", err=True)
    click.echo(url)
    sys.stdout.flush()
    if not no_open and not webbrowser.open(url):
        click.echo("no browser could be opened: open the link above yourself", err=True)
    config = uvicorn.Config(app, log_level="warning", http=guarded_protocol(), lifespan="off")
    with process.sigterm_as_exit():
        try:
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            for memory in shown.values():
                memory.finish()
