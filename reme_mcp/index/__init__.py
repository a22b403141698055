"""The index: a Whoosh index of the workspace's chunks, derived from the files and kept in sync.

The files are the truth. Each file has one record (its change stamp, links and
front matter) beside its chunks, committed together, so the index always knows
exactly which version of which file it holds (records.py). Before a search the
files are compared with the records, from a walk or from the kernel's change
feed (watch.py), and only what changed is re-indexed. A missing, corrupt or
old-schema index is rebuilt from the files by itself (build.py); queries are
scored by scoring.py, and segments.py decides which segments are reopened and merged.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from whoosh import index as whoosh_index
from whoosh.filedb.filestore import FileStorage
from whoosh.query import And, Prefix, Query, Term, TermRange
from whoosh.searching import Searcher

from reme_mcp.index import ranking
from reme_mcp.index.analysis import memory_analyzer
from reme_mcp.index.build import build_index
from reme_mcp.index.records import RecordCache
from reme_mcp.index.schema import FILE_RECORD, SCHEMA_VERSION, FileRecord, file_documents, file_record
from reme_mcp.index.scoring import BM25Scorer
from reme_mcp.index.segments import merge_small, reader_reusing
from reme_mcp.index.watch import FileView
from reme_mcp.workspace import FileEntry, Workspace, file_kind

log = logging.getLogger("reme_mcp.index")

MAX_QUERY_TOKENS = 64
MIN_THROTTLED_SCAN = 0.010  # seconds
WATCH_MIN_FILES = 1000  # an index of this many files watches for changes from the start (watch.py)
_CORRUPTION = (
    OSError,
    EOFError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    whoosh_index.IndexError,
)


@dataclass(frozen=True)
class ChunkHit:
    path: str
    start_line: int
    end_line: int
    score: float
    name: str
    description: str
    date: str | None
    content: str
    docnum: int = -1  # where the searcher that found it holds it (see MemoryIndex.following)


@dataclass(frozen=True)
class IndexState:
    """What `doctor` reports about the index."""

    directory: Path
    exists: bool
    files: int
    chunks: int
    stale: int
    skipped: int


def _chunk_hit(fields: dict[str, Any], score: float, docnum: int) -> ChunkHit:
    return ChunkHit(
        path=fields["path"],
        start_line=int(fields.get("start_line") or 1),
        end_line=int(fields.get("end_line") or 1),
        score=score,
        name=fields.get("name") or "",
        description=fields.get("description") or "",
        date=fields.get("date") or None,
        content=fields.get("content") or "",
        docnum=docnum,
    )


def _open_index(directory: Path) -> Any:
    """Open the index without mmap: whoosh copies every mmapped sub-file into a BytesIO
    on open, so a 100k-chunk index cost ~600 MB of RSS and a 300 MB copy per reopen."""
    return FileStorage(str(directory), supports_mmap=False).open_index()


T = TypeVar("T")


def _through_commits(step: Callable[[], T], attempts: int = 10) -> T:
    """Run an index read that another process's commit can race.

    A commit deletes the generation it replaces, so a reader that listed the
    folder just before may find its table of contents gone. That is no
    corruption: the next attempt opens the new generation.
    """
    for attempt in range(attempts):
        try:
            return step()
        except FileNotFoundError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.002 * (attempt + 1))
    raise AssertionError("unreachable")


class MemoryIndex:
    """The workspace's Whoosh index, shared safely by threads of this process and by other processes."""

    def __init__(self, ws: Workspace, max_scan_interval: float = 2.0, watch_after: float = MIN_THROTTLED_SCAN) -> None:
        self.ws = ws
        self.directory = ws.state_dir / f"index-v{SCHEMA_VERSION}"
        self.max_scan_interval = max_scan_interval
        self._lock = threading.RLock()
        self._ix: Any = None
        self._searcher: Searcher | None = None
        self._records: dict[str, FileRecord] = {}
        self._record_cache = RecordCache(ws, ws.state_dir / f"records-v{SCHEMA_VERSION}.json")
        self._records_generation = -2
        self._last_scan_end = 0.0
        self._last_scan_cost = 0.0
        self._builds = 0
        self._scorer = BM25Scorer(ranking.BM25_K1, ranking.BM25_B)
        self._phrase_texts = ranking.PhraseTexts()
        # Once a scan costs `watch_after` seconds, the kernel's change feed replaces it (watch.py).
        self.watch_after = watch_after
        self._view = FileView(ws)
        self._settled_generation = -3  # records generation when the files last matched the records
        self._pending: set[str] = set()  # paths the feed reported that are not yet settled

    # ---- opening and rebuilding --------------------------------------------------------------

    def _open(self) -> Any:
        if self._ix is None:
            if not whoosh_index.exists_in(str(self.directory)):
                self.rebuild(reason="no index yet")
            try:
                self._ix = _through_commits(lambda: _open_index(self.directory))
            except _CORRUPTION as exc:
                self._ix = None
                self.rebuild(reason=f"the index is unreadable ({exc.__class__.__name__})")
                self._ix = _open_index(self.directory)
        return self._ix

    def _reset(self) -> None:
        if self._searcher is not None:
            with contextlib.suppress(Exception):
                self._searcher.close()
        self._ix, self._searcher, self._records, self._records_generation = None, None, {}, -2
        self._settled_generation = -3

    def rebuild(self, reason: str = "asked to", progress: Callable[[int, int], None] | None = None) -> int:
        """Build the whole index from the files in a fresh folder, then swap it in. Returns the chunk count."""
        with self._lock, self.ws.lock("index"):
            if reason == "no index yet" and whoosh_index.exists_in(str(self.directory)):
                return 0  # another process built it while we waited
            # A first build is news only when it indexed something (a new, empty workspace is not).
            if reason not in ("asked to", "no index yet"):
                log.warning("reme-mcp: rebuilding the index at %s: %s", self.directory, reason)
            self._reset()
            self._builds += 1
            staging = self.directory.with_name(f".{self.directory.name}.building-{os.getpid()}")
            # Under the index lock no other build runs: any staging or old folder is what a
            # killed build left behind (each as big as the index), so clear them all.
            for leftover in self.directory.parent.glob(f".{self.directory.name}.*"):
                if ".building-" in leftover.name or ".old-" in leftover.name:
                    shutil.rmtree(leftover, ignore_errors=True)
            staging.mkdir(parents=True)
            chunks = build_index(self.ws, staging, progress)
            if reason == "no index yet" and chunks:
                log.warning("reme-mcp: rebuilding the index at %s: %s", self.directory, reason)
            old = self.directory.with_name(f".{self.directory.name}.old-{os.getpid()}")
            if self.directory.exists():
                os.replace(self.directory, old)
            os.replace(staging, self.directory)
            shutil.rmtree(old, ignore_errors=True)
            self._drop_older_schemas()
            return chunks

    def _drop_older_schemas(self) -> None:
        """Indexes of older schema versions are dead weight once this one is built."""
        for folder in self.directory.parent.glob("index-v*"):
            version = folder.name.removeprefix("index-v")
            if version.isdigit() and int(version) < SCHEMA_VERSION:
                shutil.rmtree(folder, ignore_errors=True)

    # ---- the file records --------------------------------------------------------------------

    def _current_searcher(self) -> Searcher:
        """A searcher of the latest commit; an index that vanished or broke meanwhile is rebuilt."""
        with self._lock:
            try:
                return self._latest_searcher()
            except _CORRUPTION as exc:
                self._reset()
                if whoosh_index.exists_in(str(self.directory)):
                    self.rebuild(reason=f"the index is unreadable ({exc.__class__.__name__}: {exc})")
                return self._latest_searcher()  # opening a missing index builds it

    def _latest_searcher(self) -> Searcher:
        ix = self._open()
        if self._searcher is None or not _through_commits(self._searcher.up_to_date):
            held = self._searcher.reader() if self._searcher is not None else None
            self._searcher = Searcher(_through_commits(lambda: reader_reusing(ix, held)), fromindex=ix)
        return self._searcher

    def records(self) -> dict[str, FileRecord]:
        """Every file the index holds, by path; recomputed only when another commit happened."""
        searcher = self._current_searcher()
        generation = searcher.reader().generation()
        if generation != self._records_generation:
            self._records, self._records_generation = self._record_cache.live(searcher), generation
        return self._records

    # ---- sync --------------------------------------------------------------------------------

    def sync(self, force: bool = False) -> int:
        """Bring the index up to date with the files; returns how many files were (re)indexed or dropped.

        A cheap scan always runs, so a small workspace reflects an edit in the very next
        search. Once a scan costs `watch_after` (10 ms), the kernel's change feed takes
        over where it can (watch.py): the changed paths only, before every search. Where
        it cannot, a scan over 10 ms is throttled by its own cost: it runs at most every
        5x its duration (capped by max_scan_interval), so a burst of searches over a
        large workspace does not rescan each time.
        """
        with self._lock:
            started = time.monotonic()
            cost, builds = self._last_scan_cost, self._builds
            wait = min(self.max_scan_interval, 5 * cost) if cost >= MIN_THROTTLED_SCAN else 0.0
            if self._view.watching:
                wait = 0.0  # reading the kernel's events costs next to nothing: never skip it
            # Never throttle past a vanished index (someone cleared metadata/): rebuild it now.
            if not force and started - self._last_scan_end < wait and whoosh_index.exists_in(str(self.directory)):
                return 0
            try:
                changed = self._sync_once()
            except _CORRUPTION as exc:
                self._reset()
                self.rebuild(reason=f"the index is unreadable ({exc.__class__.__name__}: {exc})")
                changed = self._sync_once()
            self._last_scan_end = time.monotonic()
            if not changed and builds == self._builds:  # the cost of a pure scan, not of indexing
                self._last_scan_cost = self._last_scan_end - started
                if self._last_scan_cost >= self.watch_after:
                    self._view.start_watching()  # the next sync sets the watches
            return changed

    def _sync_once(self) -> int:
        records = self.records()
        if len(records) >= WATCH_MIN_FILES:
            self._view.start_watching()  # a workspace this large is known to scan slowly
        files, touched = self._view.files()
        only: set[str] | None = None  # the paths to compare; None: all of them
        if touched is not None and self._records_generation == self._settled_generation:
            self._pending |= touched
            if not self._pending:
                return 0  # no file event, no commit by anyone: nothing to compare
            only = set(self._pending)
        if not self._stale(files, records, only):
            self._settle()
            return 0
        with self.ws.lock("index"):
            # Another process may have done part of the work while we waited.
            generation = self._records_generation
            records = self.records()
            done = self._apply(files, records, only if self._records_generation == generation else None)
        self._settle()
        return done

    def _settle(self) -> None:
        """The files and the index's records agree as of this generation."""
        self._settled_generation = self._records_generation
        self._pending.clear()

    @staticmethod
    def _stale(files: dict[str, FileEntry], records: dict[str, FileRecord], only: set[str] | None = None) -> list[str]:
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

    def _apply(self, files: dict[str, FileEntry], records: dict[str, FileRecord], only: set[str] | None) -> int:
        stale = self._stale(files, records, only)
        if not stale:
            return 0
        self._write_spooled(stale)  # with the notes writers are waiting to index: one commit for all
        return len(stale)

    def write_files(self, paths: Iterable[str], locked: bool = False) -> None:
        """Re-index these files now (dropping those that are gone), in one commit."""
        with self._lock, contextlib.nullcontext() if locked else self.ws.lock("index"):
            ix = self._open()
            # Separate files per segment: Whoosh reads a compound file through Python-level
            # seeks, which made opening the segments after each commit most of its cost.
            writer = ix.writer(timeout=60.0, compound=False)
            # Find the old documents with the searcher we hold if it sees the generation the
            # writer starts from (delete_by_term would open every segment again).
            held = self._searcher
            if held is not None and held.reader().generation() != writer.generation - 1:
                held = None
            written: dict[str, FileRecord | None] = {}
            try:
                for path in paths:
                    if held is None:
                        writer.delete_by_term("path", path)
                    else:
                        for docnum in held.document_numbers(path=path):
                            writer.delete_document(docnum)
                    written[path] = None
                    for doc in file_documents(self.ws, path):
                        writer.add_document(**doc)
                        if doc["kind"] == FILE_RECORD:
                            written[path] = file_record(doc)
                writer.commit(mergetype=merge_small)
            except BaseException:
                writer.cancel()
                raise
            # Patch the records rather than re-reading every file's record (the cost of a
            # sync grew with the workspace), but only if no other commit came between.
            if self._records_generation == writer.generation - 1:
                records = dict(self._records)  # a new dict: callers may hold the old one
                for path, record in written.items():
                    if record is None:
                        records.pop(path, None)
                    else:
                        records[path] = record
                self._records, self._records_generation = records, writer.generation

    def write_files_shared(self, paths: Iterable[str]) -> None:
        """Index these files before returning, sharing one commit with writers waiting alongside.

        Each writer leaves its paths in a spool folder, then takes the index lock; whoever
        holds it indexes everything spooled in one commit. N writers at once need far fewer
        than N commits (a commit is the slow part), and a spool entry left by a writer that
        died is picked up by the next one.
        """
        spool = self.ws.state_dir / "pending"
        spool.mkdir(parents=True, exist_ok=True)
        name = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        tmp = spool / f".{name}"
        tmp.write_text("\n".join(paths), encoding="utf-8")
        os.replace(tmp, spool / name)  # readers never see a half-written entry
        with self._lock, self.ws.lock("index"):
            if (spool / name).exists():  # else another writer's commit included these files
                self._write_spooled([])

    def _write_spooled(self, paths: Iterable[str]) -> None:
        """One commit for `paths` and everything spooled by writers. Call under the index lock."""
        spool = self.ws.state_dir / "pending"
        try:
            entries = [e.path for e in os.scandir(spool) if not e.name.startswith(".")]
        except OSError:
            entries = []
        todo = dict.fromkeys(paths)
        for entry in entries:
            with contextlib.suppress(OSError):
                todo.update(dict.fromkeys(p for p in Path(entry).read_text(encoding="utf-8").split("\n") if p))
        self.write_files(todo, locked=True)
        for entry in entries:
            with contextlib.suppress(OSError):
                os.unlink(entry)

    # ---- queries -----------------------------------------------------------------------------

    def query_tokens(self, text: str) -> list[str]:
        analyzer = memory_analyzer()
        tokens: dict[str, None] = {}
        for token in analyzer(text, mode="query"):
            tokens.setdefault(token.text, None)
            if len(tokens) >= MAX_QUERY_TOKENS:
                break
        return list(tokens)

    def search(
        self,
        tokens: list[str],
        limit: int,
        start_date: str | None = None,
        end_date: str | None = None,
        path_prefix: str | None = None,
        phrase: Sequence[str] = (),
    ) -> tuple[list[ChunkHit], int]:
        """The best chunks for a query's tokens (query_tokens), and the total number of matching chunks.

        `phrase`: the query's adjacent word pairs (ranking.phrase_pairs), which lift chunks holding them.
        """
        if not tokens:
            return [], 0
        filters: list[Query] = []
        if start_date or end_date:
            filters.append(TermRange("date", start_date or "0000-00-00", end_date or "9999-99-99"))
        if path_prefix:
            filters.append(Prefix("path", path_prefix))
        with self._lock:
            searcher = self._current_searcher()
            terms = ranking.query_terms(tokens, searcher)
            allowed = frozenset(And(filters).docs(searcher)) if filters else None
            ranked, total = self._scorer.ranked(searcher, terms, allowed)
            read: dict[int, dict[str, Any]] = {}  # the phrase stage's reads serve the hits too

            def stored(doc: int) -> dict[str, Any]:
                if doc not in read:
                    read[doc] = searcher.stored_fields(doc)
                return read[doc]

            words = lambda doc: self._phrase_texts.words(searcher, doc, stored)  # noqa: E731
            best = ranking.phrase_rerank(ranked, words, phrase, limit + 10, limit)
            hits: list[ChunkHit] = []
            for docnum, score in best:
                fields = stored(docnum)
                if not (self.ws.root / fields["path"]).exists():
                    continue  # deleted since the last scan: never point at a missing file
                hits.append(_chunk_hit(fields, score, docnum))
        return ranking.diversify(hits, limit), total

    def following(self, hit: ChunkHit) -> ChunkHit | None:
        """The chunk that starts on the line after `hit` in its file, if the index holds one.

        Read from the generation the last search read, so a hit and its neighbour agree.
        A file's chunks are added in order, so the next document is tried first: a term
        lookup of the chunk id costs about 2 ms, this a stored-fields read.
        """
        chunk_id = f"{hit.path}#{hit.end_line + 1}"
        with self._lock:
            searcher = self._searcher if self._searcher is not None else self._current_searcher()
            docnum, fields = hit.docnum + 1, None
            if 0 < docnum < searcher.doc_count_all() and not searcher.reader().is_deleted(docnum):
                fields = searcher.stored_fields(docnum)
            if fields is None or fields.get("chunk_id") != chunk_id:
                found = list(Term("chunk_id", chunk_id).docs(searcher))
                docnum, fields = (found[0], searcher.stored_fields(found[0])) if found else (-1, None)
        return None if fields is None else _chunk_hit(fields, 0.0, docnum)

    def find_body(self, body_hash: str) -> str | None:
        """A file whose body is this content, if the index holds one."""
        with self._lock:
            searcher = self._current_searcher()
            for fields in searcher.documents(body_hash=body_hash):
                if (self.ws.root / fields["path"]).exists():
                    return str(fields["path"])
        return None

    def backlinks(self, path: str) -> list[str]:
        """Files that link to `path`."""
        with self._lock:
            searcher = self._current_searcher()
            return sorted({str(f["path"]) for f in searcher.documents(links=path)})

    def state(self) -> IndexState:
        """Index health for `doctor`, without changing anything."""
        exists = whoosh_index.exists_in(str(self.directory))
        files = {e.path: e for e in self.ws.walk()}
        if not exists:
            return IndexState(self.directory, False, 0, 0, len(files), 0)
        with self._lock:
            records = self.records()
            searcher = self._current_searcher()
            total = searcher.doc_count()
            skipped = sum(1 for r in records.values() if searcher.document(path=r.path, kind=file_kind(r.path)) is None)
        return IndexState(
            self.directory,
            True,
            len(records),
            total - len(records),
            len(self._stale(files, records)),
            skipped,
        )
