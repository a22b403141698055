"""The writer: incremental commits of changed files, and the spool that lets writers share one commit.

A commit re-indexes a set of files (dropping those that are gone) and patches
the store's file records with what it wrote. `remember` leaves the paths it
wrote in a spool folder (`spool_paths`); whoever next holds the index lock to
commit (a batch, any process's search) indexes everything spooled in one
commit. N writers need far fewer than N commits (a commit is the slow part),
and a spool entry left by a writer that died is picked up by the next commit.

Every path a commit reads comes from derived state (the spool, the records), so
it is checked like a path a model sent: one that leads outside the workspace
(`..`, absolute, through a symbolic link) is never read, only dropped from the index.
A commit that fails (a full disk) gives back Whoosh's write lock before the error
goes up; an index folder that vanished meanwhile is built again from the files.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index

from reme_mcp.errors import ReMeError
from reme_mcp.index.home import clear_unusable, ensure_folder
from reme_mcp.index.schema import FILE_RECORD, FileRecord, file_documents, file_record
from reme_mcp.index.segments import merge_small
from reme_mcp.index.store import BuildReason, IndexStore
from reme_mcp.index.whoosh_private import abandon, unlocked_writer
from reme_mcp.storage.workspace import Workspace

log = logging.getLogger("reme_mcp.index")


class IndexWriter:
    """Commits to one store's index."""

    def __init__(self, ws: Workspace, store: IndexStore) -> None:
        self.ws = ws
        self.store = store
        self._count = threading.Lock()
        # Paths this process spooled that no commit of its own has taken yet, each with the
        # number of its latest spooling: kept here too, so that a spool folder cleared by
        # someone never hides this process's writes from its own searches.
        self._mine: dict[str, int] = {}
        self._serial = 0
        # Why the last commit of spooled writes failed (a full or read-only disk), until one succeeds.
        self.failure: OSError | None = None

    @property
    def spool(self) -> Path:
        """Where writers leave the paths they wait to have indexed (beside the index: it may move)."""
        return self.store.folder / "pending"

    def write_files(self, paths: Iterable[str]) -> None:
        """Re-index these files now (dropping those that are gone), in one commit."""
        todo = list(paths)
        self._committing(lambda: self._commit(todo))

    def _committing(self, commit: Callable[[], None]) -> None:
        store = self.store
        with store.mutex, store.lock():
            try:
                commit()
            except (FileNotFoundError, whoosh_index.EmptyIndexError):
                if store.exists():
                    raise
                # The folder was cleared under us: the files are the truth, build it from them.
                store.reset()
                store.rebuild(BuildReason.MISSING)

    def spool_paths(self, paths: Iterable[str]) -> None:
        """Leave these paths in the spool, to be indexed by the next commit of any process."""
        name = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        entry = self.spool / name
        paths = list(paths)
        with self._count:  # first: this process's searches find them even if the spool cannot be written
            for path in paths:
                self._serial += 1
                self._mine[path] = self._serial
        text = "\n".join(paths)
        for attempt in range(3):  # the folder may be cleared between creating and writing it
            try:
                clear_unusable(self.spool, want_folder=True)  # a file or link there holds no entry
                ensure_folder(self.spool)
                tmp = self.spool / f".{name}"
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, entry)  # readers never see a half-written entry
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise

    @property
    def waiting(self) -> int:
        """Paths this process spooled that no commit of its own has taken yet."""
        return len(self._mine)

    def spooled(self) -> bool:
        """Whether this or any process left paths in the spool."""
        if self._mine:
            return True
        try:
            with os.scandir(self.spool) as entries:
                return any(not e.name.startswith(".") for e in entries)
        except OSError:
            return False

    def write_spooled(self, paths: Iterable[str], waiting: Iterable[str] = ()) -> list[str]:
        """One commit for `paths` and everything writers spooled (none when there is nothing);
        returns the spooled paths it took.

        `waiting`: paths another process counts as waiting (a server committing through a
        child, committer.py), taken like spooled ones: a path the server spooled again after
        it looked, whose later entry an earlier commit took with the first, has no entry
        left, and would otherwise wait in the server forever.
        """
        with self.store.mutex, self.store.lock():
            return self._write_spooled(paths, waiting)

    def mine(self) -> dict[str, int]:
        """What this process spooled and no commit took yet, each path with its latest spooling's number."""
        with self._count:
            return dict(self._mine)

    def taken(self, mine: dict[str, int], paths: Collection[str]) -> None:
        """A commit elsewhere took these spooled paths: those not spooled again since `mine` wait no more."""
        with self._count:
            for path, serial in mine.items():
                if path in paths and self._mine.get(path) == serial:  # else spooled again meanwhile: it waits on
                    del self._mine[path]

    def _write_spooled(self, paths: Iterable[str], elsewhere: Iterable[str] = ()) -> list[str]:
        mine = self.mine()
        try:
            entries = [e.path for e in os.scandir(self.spool) if not e.name.startswith(".")]
        except OSError:
            entries = []
        waiting = dict.fromkeys(mine)
        waiting.update(dict.fromkeys(elsewhere))
        for entry in entries:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                waiting.update(dict.fromkeys(p for p in Path(entry).read_text(encoding="utf-8").split("\n") if p))
        todo = dict.fromkeys(paths)
        todo.update(dict.fromkeys(self._not_indexed(waiting)))
        if todo:
            try:
                self.write_files(todo)
            except OSError as exc:
                self.failure = exc
                raise
        self.failure = None
        for entry in entries:
            with contextlib.suppress(OSError):
                os.unlink(entry)
        self.taken(mine, waiting)
        return list(waiting)

    def _not_indexed(self, paths: Iterable[str]) -> list[str]:
        """The spooled paths whose file the index does not hold as it is now (another process's
        sync may have indexed them already)."""
        records = self.store.records()
        todo = []
        for path in paths:
            record, entry = records.get(path), self.ws.entry(path)
            if entry is None and record is None:
                self._inside(path)  # a path leading outside is said once on stderr
            elif entry is None or record is None or record.stamp != entry.stamp:
                todo.append(path)
        return todo

    def _commit(self, paths: list[str]) -> None:
        ix = self.store.index()
        # Separate files per segment: Whoosh reads a compound file through Python-level
        # seeks, which made opening the segments after each commit most of its cost.
        writer = self._whoosh_writer(ix)
        # Find the old documents with the searcher we hold if it sees the generation the
        # writer starts from (delete_by_term would open every segment again).
        held = self.store.held_searcher()
        if held is not None and (held.reader().generation() != writer.generation - 1 or self.store.vanished()):
            held = None  # its document numbers are another commit's, or another index's
        written: dict[str, FileRecord | None] = {}
        try:
            for path in paths:
                if held is None:
                    writer.delete_by_term("path", path)
                else:
                    for docnum in held.document_numbers(path=path):
                        writer.delete_document(docnum)
                written[path] = None
                if not self._inside(path):
                    continue  # dropped from the index, never read
                for doc in file_documents(self.ws, path):
                    writer.add_document(**doc)
                    if doc["kind"] == FILE_RECORD:
                        written[path] = file_record(doc)
            writer.commit(mergetype=merge_small)
        except BaseException:
            abandon(writer)
            raise
        self.store.committed(writer.generation, written)

    def _whoosh_writer(self, ix: Any) -> Any:
        """Whoosh's writer, under the index lock this process holds (so not Whoosh's own)."""
        return unlocked_writer(ix, compound=False)

    def restamp(self, stamps: dict[str, str]) -> None:
        """Give these files' records a new change stamp, keeping everything else they hold.

        For files whose bytes are what the index holds although their stamp moved (a copy,
        a restore, a checkout): one commit of record documents, no file parsed again.
        """
        self._committing(lambda: self._restamp(stamps))

    def _restamp(self, stamps: dict[str, str]) -> None:
        ix = self.store.index()
        writer = self._whoosh_writer(ix)
        written: dict[str, FileRecord | None] = {}
        try:
            with ix.searcher() as searcher:
                for path, stamp in stamps.items():
                    fields = searcher.document(chunk_id=f"F:{path}")
                    if fields is None:
                        continue
                    fields = {**fields, "stamp": stamp}
                    writer.delete_by_term("chunk_id", fields["chunk_id"])
                    writer.add_document(**fields)
                    written[path] = file_record(fields)
            writer.commit(mergetype=merge_small)
        except BaseException:
            abandon(writer)
            raise
        self.store.committed(writer.generation, written)

    def _inside(self, path: str) -> bool:
        try:
            self.ws.contained_path(path)
        except ReMeError as exc:
            log.warning("reme-mcp: not indexing %r: %s", path[:200], exc)
            return False
        return True
