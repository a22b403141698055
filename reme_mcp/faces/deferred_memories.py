"""The workspaces' memory, created on first use, shared by everything that serves one process.

The MCP server, its warm-up and the stdio front's early search all reach the indexes
through one DeferredMemories, so each workspace is opened once and flushed once at exit. A
session's view (its project and the personal memory, or the one named workspace) comes
from `session(roots, client)`. Nothing heavy is imported here until memory is first
wanted: the stdio front imports this module before it answers the handshake.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from reme_mcp.config import Settings

if TYPE_CHECKING:
    from reme_mcp.ops.session_memory import SessionMemory
    from reme_mcp.ops.workspace_memories import WorkspaceMemories

# The longest the warm-up and the ingest wait for tools/list before they start anyway.
WARM_UP_DELAY = 1.0
# A query that opens the index and finds nothing.
WARM_UP_QUERY = "reme-mcp-opens-its-index"
FOLLOW_DELAY = 3.0


class DeferredMemories:
    """The process's `WorkspaceMemories`, made only when first wanted (or by the warm-up thread), so
    the stdio front imports nothing heavy before the handshake."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._memories: WorkspaceMemories | None = None
        self._lock = threading.Lock()

    def memories(self) -> WorkspaceMemories:
        with self._lock:
            if self._memories is None:
                from reme_mcp.ops.workspace_memories import WorkspaceMemories

                # A server's batched index commits are made by a child process (index/committer.py):
                # its calls would otherwise wait out every batch.
                self._memories = WorkspaceMemories(dataclasses.replace(self.settings, commit_in_child=True))
            return self._memories

    def session(self, roots: list[str] | None = None, client: str | None = None) -> SessionMemory:
        """The view of a session whose client gave these roots (None: it declares none)."""
        return self.memories().scoped(roots, client)

    def open_index(self) -> None:
        """Open and check each searched workspace's index, and build what a first answer needs (the
        query's reader, the result models), so the first search only searches."""
        from reme_mcp.ops.results import SearchHit, SearchResult

        for _, memory in self.session().sources():
            memory.search(WARM_UP_QUERY, limit=1)
        SearchHit.model_rebuild()
        SearchResult.model_rebuild()

    def warm_up(self, after: threading.Event | None = None, at_most: float = WARM_UP_DELAY) -> None:
        """Import the index, open it and sync it in the background, so the first search is fast.

        It waits for `after` (set once tools/list is answered), or `at_most` seconds:
        on two cores its imports and scan would otherwise hold the GIL while the
        client's initialize and tools/list wait, and clients time out slow starters.
        """

        def run() -> None:
            if after is not None:
                after.wait(at_most)
            with contextlib.suppress(Exception):  # the first real call reports any problem properly
                for _, memory in self.session().sources():
                    memory.warm_up()

        threading.Thread(target=run, name="reme-warm-up", daemon=True).start()

    def follow(
        self, sources: Collection[str], after: threading.Event, at_most: float = FOLLOW_DELAY
    ) -> threading.Event:
        """Follow hosts' session logs into memory, starting once tools/list is answered (or after `at_most`).

        Setting the returned event stops the ingest, whether or not it has started yet.
        """
        stop = threading.Event()

        def run() -> None:
            after.wait(at_most)
            if stop.is_set():
                return
            try:
                following = self.memories().follow(sources)
            except Exception as exc:  # never take the server down: say why ingest is not running
                print(f"reme-mcp: ingest did not start: {exc}", file=sys.stderr)
                return
            stop.wait()
            following.set()

        threading.Thread(target=run, name="reme-ingest-start", daemon=True).start()
        return stop

    def sync_every(self, every: float, idle: Callable[[], bool], after: threading.Event) -> None:
        """Sync through the workspace's git remote every `every` seconds, between tool calls (team/)."""

        def run() -> None:
            after.wait(FOLLOW_DELAY)
            try:
                self.memories().sync_in_background(every, idle)
            except Exception as exc:  # never take the server down: say why sync is not running
                print(f"reme-mcp: background sync did not start: {exc}", file=sys.stderr)

        threading.Thread(target=run, name="reme-team-sync-start", daemon=True).start()

    def finish(self) -> None:
        """The client is gone: commit the index writes still waiting for their batch."""
        with self._lock:
            memories = self._memories
        if memories is not None:
            memories.finish()
