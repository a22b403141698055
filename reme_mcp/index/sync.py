"""Sync: bring the index up to date with the files before a search, as cheaply as the workspace allows.

The files are compared with the index's file records (records.py) by change
stamp: new, changed and gone files are written in one commit (writer.py). In a
small workspace every sync walks every file. Once a walk costs `watch_after`
(10 ms), or the index holds WATCH_MIN_FILES files, the kernel's change feed
(watch.py) says which paths to look at instead. Where there is no feed, a walk
over 10 ms is throttled by its own cost: at most every 5x its duration (capped
by max_scan_interval), so a burst of searches does not rescan each time.

An index that cannot be written (a full disk, a read-only folder) is not
damaged: the sync says so once on stderr and searches answer from what the
index holds; the next sync tries again.
"""

from __future__ import annotations

import contextlib
import logging
import time

from whoosh import index as whoosh_index

from reme_mcp.errors import ReMeError, SaidOnce
from reme_mcp.index.schema import FileRecord, same_bytes
from reme_mcp.index.store import BuildReason, IndexStore
from reme_mcp.index.watch import FileView
from reme_mcp.index.whoosh_private import is_corruption, is_gone
from reme_mcp.index.writer import IndexWriter
from reme_mcp.storage.workspace import FileEntry, Workspace

log = logging.getLogger("reme_mcp.index")

MIN_THROTTLED_SCAN = 0.010  # seconds
WATCH_MIN_FILES = 1000  # an index of this many files watches for changes from the start
# When at least this many files, and most of the workspace, really changed, the bulk
# builder (build.py) does the work: file by file costs several times more per chunk.
BULK_AT = 200


def stale(files: dict[str, FileEntry], records: dict[str, FileRecord], only: set[str] | None = None) -> list[str]:
    """Paths whose file and index record differ (new, changed or gone), among `only` if given."""
    if only is not None:
        return [
            p
            for p in only
            if ((e := files.get(p)) is None and p in records)
            or (e is not None and ((r := records.get(p)) is None or r.stamp != e.stamp))
        ]
    changed = [p for p, e in files.items() if (r := records.get(p)) is None or r.stamp != e.stamp]
    gone = [p for p in records if p not in files]
    return changed + gone


class IndexSync:
    """When to compare the files with the index, and which of them."""

    def __init__(
        self,
        ws: Workspace,
        store: IndexStore,
        writer: IndexWriter,
        max_scan_interval: float = 2.0,
        watch_after: float = MIN_THROTTLED_SCAN,
    ) -> None:
        self.store = store
        self.writer = writer
        self.max_scan_interval = max_scan_interval
        self.watch_after = watch_after
        self.ws = ws
        self.view = FileView(ws)
        self._last_scan_end = 0.0
        self._last_scan_cost = 0.0
        # The index folder's identity and the records' generation when the files last matched them
        # (a rebuilt index numbers its commits afresh: a generation alone may name another index's).
        self._settled: tuple[tuple[int, int] | None, int | None] | None = None
        self._pending: set[str] = set()  # paths the feed reported that are not yet settled
        self._unwritable = SaidOnce(
            log, "updating the index", "searches answer from the index as it is until it can be written"
        )
        self._identity: tuple[int, int] | None = None  # the index folder's, as the last sync left it

    def sync(self, force: bool = False) -> int:
        """Bring the index up to date with the files; returns how many files were (re)indexed or dropped."""
        store = self.store
        with store.mutex:
            started = time.monotonic()
            cost, builds = self._last_scan_cost, store.builds
            wait = min(self.max_scan_interval, 5 * cost) if cost >= MIN_THROTTLED_SCAN else 0.0
            if self.view.watching:
                wait = 0.0  # reading the kernel's events costs next to nothing: never skip it
            # Never throttle past a vanished index (someone cleared the folder): build it now.
            if (
                not force
                and started - self._last_scan_end < wait
                and store.identity() == self._identity  # not cleared or rebuilt elsewhere since
                and store.exists()
                and not self.writer.spooled()
            ):
                return 0
            try:
                changed = self._sync_once()
            except Exception as exc:
                if not is_corruption(exc):
                    raise
                store.reset()
                self._settled = None
                store.rebuild(BuildReason.DAMAGED, f"{exc.__class__.__name__}: {exc}")
                changed = self._sync_once()
            self._last_scan_end = time.monotonic()
            self._identity = store.identity()
            if not changed and builds == store.builds:  # the cost of a pure scan, not of indexing
                self._last_scan_cost = self._last_scan_end - started
                if self._last_scan_cost >= self.watch_after:
                    self.view.start_watching()  # the next sync sets the watches
            return changed

    def _sync_once(self) -> int:
        store = self.store
        records = store.records()
        if len(records) >= WATCH_MIN_FILES:
            self.view.start_watching()  # a workspace this large is known to scan slowly
        files, touched = self.view.files()
        # Writes waiting in the spool (reme_mcp/storage/batching.py) are committed before any search reads.
        spooled = self.writer.spooled()
        only: set[str] | None = None  # the paths to compare; None: all of them
        if touched is not None and self._settled == (store.identity(), store.records_generation):
            self._pending |= touched
            if not self._pending and not spooled:
                return 0  # no file event, no commit by anyone: nothing to compare
            only = set(self._pending)
        if not spooled and not stale(files, records, only):
            self._settle()
            return 0
        try:
            with store.lock():
                # Another process may have done part of the work while we waited.
                generation = store.records_generation
                records = store.records()
                todo = stale(files, records, only if store.records_generation == generation else None)
                moved, todo = self._split_unchanged(files, records, todo)
                if moved:
                    try:
                        self.writer.restamp(moved)
                    except (OSError, TypeError, whoosh_index.EmptyIndexError) as exc:
                        # Restamping only spares work: when the folder changes under it (cleared,
                        # rebuilt by another process), the files are indexed the ordinary way.
                        if is_corruption(exc) and store.exists():
                            raise
                        todo += list(moved)
                        moved = {}
                if len(todo) >= BULK_AT and len(todo) * 2 > len(files):
                    store.reset()
                    self._settled = None
                    store.rebuild(BuildReason.CHANGED, f"{len(todo)} of {len(files)} files")
                elif todo or spooled:
                    self.writer.write_spooled(todo)  # with what writers are waiting to index
        except OSError as exc:
            if is_corruption(exc) or is_gone(exc):
                raise  # a folder cleared under the write: the caller opens it afresh and writes again
            self._unwritable.failed(exc)
            return 0
        self._unwritable.cleared()
        self._settle()
        return len(todo) + len(moved)

    def _split_unchanged(
        self, files: dict[str, FileEntry], records: dict[str, FileRecord], todo: list[str]
    ) -> tuple[dict[str, str], list[str]]:
        """Among stale paths, those whose bytes are still what the index holds (their new stamps), and the rest."""
        moved: dict[str, str] = {}
        rest: list[str] = []
        for path in todo:
            entry, record = files.get(path), records.get(path)
            if entry is not None and record is not None:
                with contextlib.suppress(ReMeError):
                    if same_bytes(self.ws.contained_path(path), record):
                        moved[path] = entry.stamp
                        continue
            rest.append(path)
        return moved, rest

    def _settle(self) -> None:
        """The files and the index's records agree as of this generation."""
        self._settled = (self.store.identity(), self.store.records_generation)
        self._pending.clear()
