"""What every command shares: the `--workspace` option, the settings a command runs with (its own
`--workspace`, else the group's flags, else the environment: config.load_settings), errors as one
line, and logs on stderr."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from reme_mcp.config import Settings, load_settings
from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.ops.limits import Limit

F = TypeVar("F", bound=Callable[..., Any])

WORKSPACE_HELP = (
    "Use this one ReMe workspace, with no project logic (default: $REME_WORKSPACE, else one workspace "
    "per project plus a personal one; see reme-mcp project)."
)


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


@contextlib.contextmanager
def one_line(doing: str) -> Iterator[None]:
    """Every command's errors as one line: a ReMeError as it is, an OS error named with what to do."""
    try:
        yield
    except ReMeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(os_error_line(exc, doing)) from None


def checked_settings(ctx: click.Context, workspace: str | None) -> Settings:
    """The command's settings, a bad flag or variable said in one line."""
    with one_line("reading the configuration"):
        return command_settings(ctx, workspace)


def checked_reading(ctx: click.Context, workspace: str | None) -> Settings:
    """`reading_settings`, a missing workspace or a bad flag said in one line."""
    with one_line("reading the configuration"):
        return reading_settings(ctx, workspace)


def workspace_option(fn: Any) -> Any:
    return click.option("--workspace", "-w", "workspace", type=click.Path(file_okay=False), help=WORKSPACE_HELP)(fn)


def log_to_stderr() -> None:
    # stdout belongs to the protocol in stdio mode: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")


def bounded_option(*names: str, limit: Limit, help: str) -> Callable[[F], F]:
    """An integer option held to an operation's limit (ops/limits.py), its default shown."""
    return click.option(
        *names, default=limit.default, show_default=True, type=click.IntRange(limit.low, limit.high), help=help
    )
