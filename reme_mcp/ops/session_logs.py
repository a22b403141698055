"""Hosts' session logs into a workspace, as the `ingest` command asks: the sources there are, an
importer for one, what of it is already in, and with one workspace per project, where each
session is filed (the project its working folder belongs to)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reme_mcp.config import Settings
from reme_mcp.errors import ReMeError
from reme_mcp.ingest.model import Filters
from reme_mcp.ingest.runner import Importer, available, imported_summary
from reme_mcp.ingest.sources import SOURCES, get_source
from reme_mcp.ops.workspace_memories import WorkspaceMemories
from reme_mcp.storage.workspace import Workspace

__all__ = [
    "SOURCES",
    "Filters",
    "Importer",
    "Workspace",
    "available",
    "imported_summary",
    "importer",
    "route",
    "workspace",
]


def workspace(settings: Settings) -> Workspace:
    return Workspace(settings.workspace)


def route(settings: Settings, dry_run: bool = False) -> Callable[[str], Path] | None:
    """Per project: a session's working folder -> the workspace its dialog is filed in; None with one workspace."""
    return WorkspaceMemories(settings).route(dry_run)


def importer(ws: Workspace, name: str, path: str | None, **kwargs: Any) -> Importer:
    """An importer of the source `name`; an unknown name is a ReMeError naming the sources."""
    try:
        source = get_source(name)
    except KeyError as exc:
        raise ReMeError(str(exc.args[0])) from None
    return Importer(ws, source, Path(path).expanduser() if path else None, **kwargs)
