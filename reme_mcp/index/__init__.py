"""The index: a Whoosh index of the workspace's chunks, derived from the files and kept in sync.

The files are the truth. Each file has one record (its change stamp, links and
front matter) beside its chunks, committed together, so the index always knows
exactly which version of which file it holds (records.py). `MemoryIndex` is the
one door to it; behind it:

- home.py: where the index lives (a private folder of this user's, outside the workspace);
- store.py: opening, healing, rebuilding and swapping the index, its latest searcher;
- sync.py: when to compare the files with the records, and which (watch.py: the change feed);
- writer.py: incremental commits and the spool that lets writers share one;
- committer.py: a server's batch committed by a child process, off its GIL;
- when the spool is committed: reme_mcp/storage/batching.py (a `remember` does not wait for a commit);
- query.py: query tokens and terms, filters, scoring (scoring.py, ranking.py), diversification;
- together.py: the indexes of several workspaces searched as one ranking; snippets.py: cutting hits' text;
- schema.py: what a file becomes in the index; build.py, bulk_writer.py: the full build;
- segments.py: which segments are reopened and merged;
- whoosh_private.py: every use of Whoosh's private API, and what counts as corruption;
- semantic_hook.py: the optional search by meaning (semantic.py, chunk_texts.py, vectors.py,
  fusion.py; the models it embeds with are in embedding/).
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from whoosh.query import Term
from whoosh.searching import Searcher

from reme_mcp.config import default_index_home
from reme_mcp.embedding import hub_models
from reme_mcp.index import exchange, ranking
from reme_mcp.index.arrange import arrange
from reme_mcp.index.committer import commit_in_child
from reme_mcp.index.fusion import RERANK_DEPTH
from reme_mcp.index.hits import ChunkHit, Found, FoundHit, chunk_hit
from reme_mcp.index.home import private_folder
from reme_mcp.index.purge import drop_derived
from reme_mcp.index.query import Source, best_chunks, file_with_body, filters, query_tokens
from reme_mcp.index.schema import FILE_RECORD, FileRecord
from reme_mcp.index.scoring import BM25Scorer
from reme_mcp.index.semantic_hook import SemanticHook
from reme_mcp.index.snippets import cut_snippets
from reme_mcp.index.store import BuildReason, IndexStore
from reme_mcp.index.sync import MIN_THROTTLED_SCAN, IndexSync, stale
from reme_mcp.index.versions import current_versions, superseders
from reme_mcp.index.whoosh_private import is_corruption, is_gone
from reme_mcp.index.writer import IndexWriter
from reme_mcp.storage.batching import CommitBatcher
from reme_mcp.storage.workspace import Workspace, file_kind

__all__ = ["ChunkHit", "Found", "FoundHit", "IndexState", "MemoryIndex", "cut_snippets"]

T = TypeVar("T")

# How often an operation is run again when the index folder keeps changing under it.
CLEARED_ATTEMPTS = 8
# Hits found beyond the limit, so arranging (arrange.py) has the next ones to bring up.
SPARE_FOR_ARRANGING = 5
# Bytes free on the index's disk below which a write's commit is made before it is acknowledged,
# not batched: a batch of 500 notes and the merge of small segments write a few megabytes.
LOW_SPACE = 64 * 1024 * 1024


@dataclass(frozen=True)
class IndexState:
    """What `doctor` reports about the index."""

    directory: Path
    exists: bool
    files: int
    chunks: int
    stale: int
    skipped: int


class MemoryIndex:
    """The workspace's Whoosh index, shared safely by threads of this process and by other processes."""

    def __init__(
        self,
        ws: Workspace,
        max_scan_interval: float = 2.0,
        watch_after: float = MIN_THROTTLED_SCAN,
        home: Path | None = None,
        commit_in_child: bool = False,
        semantic: bool = False,
        semantic_model: str = hub_models.BUNDLED[0],
        models_home: Path | None = None,
    ) -> None:
        self.ws = ws
        self._home = home if home is not None else default_index_home()
        self._store = IndexStore(ws, private_folder(ws, self._home))
        self._writer = IndexWriter(ws, self._store)
        self._sync = IndexSync(ws, self._store, self._writer, max_scan_interval, watch_after)
        # A long-lived server commits its batches in a child process (committer.py); a short one
        # (the CLI, a script) would only pay the child's start for nothing.
        batch = self._commit_in_child if commit_in_child else self._commit_spooled
        self._batcher = CommitBatcher(batch, lambda: self._writer.waiting)
        self._scorer = BM25Scorer(ranking.BM25_K1, ranking.BM25_B)
        self._phrase_texts = ranking.PhraseTexts()
        self._superseders_of: tuple[tuple[int | None, int], dict[str, list[str]]] | None = None
        # The search by meaning, when on: nothing of it is imported before the first search.
        self.semantic = SemanticHook(self._store, chunk_hit, semantic_model, models_home) if semantic else None

    @property
    def folder(self) -> Path:
        """This workspace's private index folder (home.py): the index, its records and the write spool."""
        return self._store.folder

    @property
    def directory(self) -> Path:
        """The Whoosh index folder (inside `folder`)."""
        return self._store.directory

    @property
    def watching(self) -> bool:
        """Whether sync follows the kernel's change feed instead of walking the workspace."""
        return self._sync.view.watching

    def sync(self, force: bool = False) -> int:
        """Bring the index up to date with the files; returns how many files were (re)indexed or dropped."""
        return self._despite_clearing(lambda: self._sync.sync(force))

    def ready(self) -> bool:
        """Whether an index is on disk to search (a fresh workspace has none until its first search)."""
        return self._store.exists()

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Build the whole index afresh from the files and swap it in; returns the chunk count."""
        return self._store.rebuild(BuildReason.REQUESTED, progress=progress)

    def purge(self, paths: Collection[str]) -> None:
        """Leave nothing derived from these files (forgotten, redacted, deleted by a merge): the index
        rebuilt without what its segments kept of them, their vectors and saved records dropped (purge.py)."""
        self.rebuild()
        if self.semantic is not None:
            self.semantic.drop(paths)
        drop_derived(self.folder, paths)

    def close(self) -> None:
        """Let go of the open index (the next call opens it again)."""
        self._store.reset()

    def records(self) -> dict[str, FileRecord]:
        """Every file the index holds, by path."""
        return self._despite_clearing(self._store.records)

    def written(self, paths: Iterable[str]) -> None:
        """These files were just written: every later search finds them, the commit is batched (reme_mcp/storage/batching.py).

        Batched only while a commit can be counted on: the last one succeeded, the spool took the
        paths and the index's disk has LOW_SPACE free. Otherwise the commit is made now, and its
        OSError raised: the caller takes the files back, never acknowledging what no search finds.
        """
        todo = list(paths)
        try:
            self._despite_clearing(lambda: self._writer.spool_paths(todo))
            batched = self._writer.failure is None and _room(self._store.directory, self._store.folder)
        except OSError:
            batched = False  # counted as waiting all the same (writer.py): a commit now takes them
        self._batcher.wrote()
        if not batched:
            self._commit_spooled()

    def flush(self) -> None:
        """Commit the writes still waiting for their batch (the server is ending)."""
        self._batcher.flush()

    def _commit_spooled(self) -> None:
        self._despite_clearing(lambda: self._writer.write_spooled([]))

    def _commit_in_child(self) -> None:
        mine = self._writer.mine()
        taken = commit_in_child(self.ws.root, self._home, mine)
        if taken is None:
            self._commit_spooled()  # says why, and commits if it can
        else:
            self._writer.taken(mine, frozenset(taken))

    def _despite_clearing(self, step: Callable[[], T]) -> T:
        """Run an index operation; when the index folder changed under it (cleared by a person or
        a cleaner, rebuilt by another process), open the index afresh and run it again.

        Whoosh reports a file gone under it in several ways (whoosh_private.is_gone); the store
        tells whether the index it had open is still the one on disk, so an error from an intact
        index is raised, never retried away.
        """
        damage = ""  # why the index is built again before the next attempt
        for attempt in range(CLEARED_ATTEMPTS):
            try:
                if damage:
                    self._store.rebuild(BuildReason.DAMAGED, damage)  # the folder may vanish under it too
                    damage = ""
                return step()
            except Exception as exc:
                gone = is_gone(exc)
                if attempt == CLEARED_ATTEMPTS - 1 or not (gone or self._store.vanished()):
                    raise
                if gone and attempt >= 1 and not self._store.vanished():
                    # The same folder, reopened, still names a file that is not there: it was
                    # deleted file by file while a commit wrote into it, and a table of contents
                    # outlived its segment. That is damage, which waiting does not mend.
                    damage = f"{exc.__class__.__name__}: {exc}"
                    continue
                self._store.reset()
                time.sleep(0.01 * attempt)  # a cleaner deleting file by file: let it finish
        raise AssertionError("unreachable")

    def find(
        self,
        text: str,
        limit: int,
        start_date: str | None = None,
        end_date: str | None = None,
        path_prefix: str | None = None,
        max_chars: int | None = 4000,
    ) -> Found:
        """The best chunks for a free-text query, finished: a dialog question widened to its reply
        (exchange.py), each snippet cut around the match to an equal share of `max_chars`.
        With the semantic stage on, the query's nearest chunks join (semantic_hook.py)."""
        tokens = query_tokens(text)
        pairs = ranking.phrase_pairs(text)
        hits, total = self.search(
            tokens,
            limit + SPARE_FOR_ARRANGING,
            start_date,
            end_date,
            path_prefix,
            pairs,
            text=text,
        )
        return self.finish(hits, total, tokens, limit, text, max_chars)

    def finish(
        self, hits: list[ChunkHit], total: int, tokens: list[str], limit: int, text: str, max_chars: int | None
    ) -> Found:
        """A search's best chunks (limit + SPARE_FOR_ARRANGING of them) finished as `find` returns them."""
        hits = [exchange.with_reply(hit, self.following) for hit in hits]
        arranged = arrange(hits, limit, self._superseders(), self._first_chunk, lambda: self._rarity(tokens))
        finished = [FoundHit(a.hit, "", False, a.superseded_by, a.newer) for a in arranged]
        if max_chars is None:  # cut by the caller, over hits of several indexes merged (cut_snippets)
            return Found(finished, max(total, len(finished)))
        return Found(cut_snippets(finished, text, max_chars), max(total, len(finished)))

    def source(self, searcher: Searcher) -> Source:
        """This index as a search over several reads it (together.py), on a searcher `holding` gave."""
        return Source(self.ws, searcher, self._scorer, self._phrase_texts)

    def holding(self, step: Callable[[Searcher], T]) -> T:
        """Run a read on the latest searcher, under this index's mutex (see `_read`)."""
        return self._read(step)

    def superseded_by(self, paths: Iterable[str]) -> dict[str, list[str]]:
        """For each path, the current notes that replace it (empty when it is current)."""
        by_target = self._superseders()
        return {path: current_versions(path, by_target) for path in paths}

    def _superseders(self) -> dict[str, list[str]]:
        """Path -> the notes naming it in their `supersedes`, from the records, once per commit."""
        records = self.records()
        key = (self._store.records_generation, len(records))
        if self._superseders_of is None or self._superseders_of[0] != key:
            pairs = ((r.path, r.supersedes) for r in records.values() if r.supersedes)
            self._superseders_of = (key, superseders(pairs))
        return self._superseders_of[1]

    def _rarity(self, tokens: list[str]) -> dict[str, float]:
        """Each query word's IDF over the chunks' text: how much it tells one chunk from another."""

        def step(searcher: Searcher) -> dict[str, float]:
            docs = max(1, searcher.doc_count())
            df = self._scorer.doc_frequency
            return {t: math.log(1 + docs / (1 + df(searcher, "content", t))) for t in tokens}

        return self._read(step)

    def _first_chunk(self, path: str) -> ChunkHit | None:
        """A file's first chunk (a note the query did not find but a hit is replaced by)."""
        if self.ws.entry(path) is None:
            return None

        def step(searcher: Searcher) -> ChunkHit | None:
            chunks = [
                (docnum, searcher.stored_fields(docnum))
                for docnum in Term("path", path).docs(searcher)
                if searcher.stored_fields(docnum).get("kind") != FILE_RECORD
            ]
            if not chunks:
                return None
            docnum, fields = min(chunks, key=lambda c: int(c[1].get("start_line") or 1))
            return chunk_hit(fields, 0.0, docnum)

        return self._read(step)

    def search(
        self,
        tokens: list[str],
        limit: int,
        start_date: str | None = None,
        end_date: str | None = None,
        path_prefix: str | None = None,
        phrase: Sequence[str] = (),
        text: str = "",
    ) -> tuple[list[ChunkHit], int]:
        """The best chunks for a query's tokens (query_tokens), and the total number of matching chunks.

        `phrase`: the query's adjacent word pairs (ranking.phrase_pairs), which lift chunks holding them.
        `text`: the query as asked, for the search by meaning when it is on (semantic_hook.py).
        """
        hook = self.semantic if text.strip() else None
        if not tokens and hook is None:
            return [], 0
        where = filters(start_date, end_date, path_prefix)
        texts = self._phrase_texts
        # The search by meaning reorders the lexical hits' head (fusion.py): it needs that head whole.
        depth = limit if hook is None else max(limit, RERANK_DEPTH)
        hits, total = (
            self._read(
                lambda searcher: best_chunks(
                    self.ws, searcher, self._scorer, tokens, depth, where, chunk_hit, phrase, texts
                )
            )
            if tokens
            else ([], 0)
        )
        if hook is None:
            return hits, total
        fused, total = hook.fused(self.ws, text, hits, total, limit, (start_date, end_date, path_prefix), self._read)
        return fused[:limit], total

    def following(self, hit: ChunkHit) -> ChunkHit | None:
        """The chunk that starts on the line after `hit` in its file, if the index holds one.

        Read from the generation the last search read, so a hit and its neighbour agree.
        A file's chunks are added in order, so the next document is tried first: a term
        lookup of the chunk id costs about 2 ms, this a stored-fields read.
        """
        chunk_id = f"{hit.path}#{hit.end_line + 1}"

        def step() -> ChunkHit | None:
            with self._store.mutex:
                held = self._store.held_searcher()
                searcher = held if held is not None else self._store.searcher()
                docnum, fields = hit.docnum + 1, None
                if 0 < docnum < searcher.doc_count_all() and not searcher.reader().is_deleted(docnum):
                    fields = searcher.stored_fields(docnum)
                if fields is None or fields.get("chunk_id") != chunk_id:
                    found = list(Term("chunk_id", chunk_id).docs(searcher))
                    docnum, fields = (found[0], searcher.stored_fields(found[0])) if found else (-1, None)
            return None if fields is None else chunk_hit(fields, 0.0, docnum)

        return self._despite_clearing(step)

    def find_body(self, body_hash: str) -> str | None:
        """A file whose body is this content, if the index holds one."""
        return self._read(lambda searcher: file_with_body(self.ws, searcher, body_hash))

    def _read(self, step: Callable[[Searcher], T]) -> T:
        """Run a read on the latest searcher; a file found damaged while reading is rebuilt, then read again."""
        store = self._store

        def attempt() -> T:
            with store.mutex:
                try:
                    return step(store.searcher())
                except Exception as exc:
                    if not is_corruption(exc) or store.vanished():
                        raise
                    store.reset()
                    store.rebuild(BuildReason.DAMAGED, f"{exc.__class__.__name__}: {exc}")
                    return step(store.searcher())

        return self._despite_clearing(attempt)

    def state(self) -> IndexState:
        """Index health for `doctor`, without changing anything."""
        store = self._store
        files = {e.path: e for e in self.ws.walk()}
        if not store.exists():
            return IndexState(store.directory, False, 0, 0, len(files), 0)
        with store.mutex:
            records = store.records()
            searcher = store.searcher()
            total = searcher.doc_count()
            skipped = sum(1 for r in records.values() if searcher.document(path=r.path, kind=file_kind(r.path)) is None)
        return IndexState(
            store.directory, True, len(records), total - len(records), len(stale(files, records)), skipped
        )


def _room(directory: Path, folder: Path) -> bool:
    """Whether the disk a commit writes to (the index's directory, else the folder holding it, before
    a first build) has LOW_SPACE free; False when that cannot be told."""
    for where in (directory, folder):
        try:
            return shutil.disk_usage(where).free >= LOW_SPACE
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return False
