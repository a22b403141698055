"""The Memory of each workspace a process serves, opened once and flushed once at exit.

A server of one project opens two (the project's and the personal one); `scope: "all"` opens
the others as it reads them. Servers of different projects share no Memory and no lock: each
workspace has its own index, ledger and write lock.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from reme_mcp.config import Settings
from reme_mcp.ops.session_memory import SessionMemory
from reme_mcp.projects.checkout import Checkouts
from reme_mcp.projects.home import MemoryHome
from reme_mcp.projects.placement import Placement, candidates, host_fix, place

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

# Placements kept per client answer (roots, client name): a long-running HTTP server meets few.
MAX_PLACEMENTS = 256


class WorkspaceMemories:
    """Every workspace this process has open: path -> its `Memory`, made on first use, thread-safely,
    and the `SessionMemory` of each session over them."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._open: dict[Path, Memory] = {}
        self._lock = threading.Lock()
        self._placements: dict[tuple[tuple[str, ...] | None, str | None], Placement] = {}
        self.checkouts = Checkouts()  # each served project's git checkout, its listing kept between calls

    @property
    def home(self) -> MemoryHome:
        return MemoryHome(self.settings.projects_root, self.settings.personal)

    def placement(self, roots: list[str] | None = None, client: str | None = None) -> Placement | None:
        """Where a session whose client gave these roots reads and writes; None with one named workspace."""
        if not self.settings.per_project:
            return None
        key = (tuple(roots) if roots is not None else None, client)
        with self._lock:
            known = self._placements.get(key)
        if known is not None:
            return known
        try:
            cwd: Path | None = Path.cwd()
        except OSError:  # the folder the server was started in is gone
            cwd = None
        tried = candidates(self.settings.project_dir, roots, dict(os.environ), cwd)
        found = place(self.home, tried, host_fix(client))
        with self._lock:
            if len(self._placements) >= MAX_PLACEMENTS:
                self._placements.clear()
            self._placements[key] = found
        return found

    def scoped(self, roots: list[str] | None = None, client: str | None = None) -> SessionMemory:
        """A session's view: its project and the personal memory, or the one named workspace."""
        return SessionMemory(self.of, self.settings.workspace, self.placement(roots, client), self.checkouts)

    def of(self, workspace: Path) -> Memory:
        with self._lock:
            memory = self._open.get(workspace)
            if memory is None:
                from reme_mcp.ops.memory import Memory

                memory = Memory(dataclasses.replace(self.settings, workspace=workspace))
                self._open[workspace] = memory
            return memory

    def opened(self) -> list[Memory]:
        with self._lock:
            return list(self._open.values())

    def finish(self) -> None:
        """What waits for a batch in every open workspace is written (see Memory.finish)."""
        for memory in self.opened():
            memory.finish()

    def follow(self, sources: Collection[str]) -> threading.Event:
        """Import hosts' session logs in the background: each dialog into the workspace of the
        project it ran in (per project), or into the one named workspace; set the event to stop."""
        from reme_mcp.ingest.runner import start_background

        first = self.of(self.settings.workspace)
        return start_background(first.ws, list(sources), at_most=0.0, route=self.route())

    def route(self, dry_run: bool = False) -> Callable[[str], Path] | None:
        """Per project: a session's working folder -> the workspace its dialog is filed in."""
        if not self.settings.per_project:
            return None
        home = self.home

        def workspace_of(folder: str) -> Path:
            placement = place(home, candidates(None, None, {}, Path(folder) if folder else None))
            _, workspace = placement.write_target
            if not dry_run:
                home.prepare(workspace, placement.project)
            return workspace

        return workspace_of

    def sync_in_background(self, every: float, idle: Callable[[], bool]) -> None:
        """Sync the served workspaces that are git clones through their remotes, between tool calls."""
        for _, memory in self.scoped().sources():
            if self.placement() is None or (memory.ws.root / ".git").exists():
                memory.sync_in_background(every, idle)
