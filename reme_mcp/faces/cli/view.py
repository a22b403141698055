"""`reme-mcp view`: the memory page on a loopback port, opened in the person's browser."""

from __future__ import annotations

import socket
import sys
import webbrowser

import click

from reme_mcp import process
from reme_mcp._version import __version__
from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.faces.cli.options import command_settings

BIND_HOST = "127.0.0.1"
DEFAULT_VIEW_PORT = 7332


def bound_socket(port: int) -> socket.socket:
    """A listening socket on loopback; port 0 takes a free one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((BIND_HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ReMeError(
            f"{os_error_line(exc, f'listening on {BIND_HOST}:{port}')}; try another --port (0: any)"
        ) from exc
    sock.set_inheritable(True)
    return sock


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
        settings = command_settings(ctx, workspace)
        # One page per workspace: this folder's project first, the personal memory, every other project.
        view = WorkspaceMemories(settings).scoped()
        ordered = [*view.sources("current"), *view.sources("all")]
        shown = {(label or "default"): memory for label, memory in ordered}
        sock = bound_socket(port)
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    port = sock.getsockname()[1]
    keys = PageKeys(port)
    app = build_page_app(shown, keys, port)
    url = f"http://{BIND_HOST}:{port}/?{TOKEN_PARAM}={keys.token}"
    click.echo(f"reme-mcp {__version__}: the memory page of {settings.workspace} is at", err=True)
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
