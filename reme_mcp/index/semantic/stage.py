"""The semantic stage: chunks embedded in the background, and a search by meaning over them.

The stage follows the index, not the files: after each sync it is woken, compares the
index's file records (their content hashes) with the files it has vectors for, and embeds
what is new or changed, drops what is gone (vectors.py). It runs in one daemon thread, so
a `remember` never waits for it and a search answers from whatever is embedded so far.
Several servers on one workspace (one a host) embed it once: one at a time holds the lock
beside the vectors and embeds, the others read what it saves (_catch_up_alone).

The model is loaded by that thread (models/embedders.py); a model that is missing or
fails to load is said once on stderr, shown by `doctor`, and the search stays lexical.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reme_mcp.index.schema import FileRecord
from reme_mcp.index.semantic.chunk_texts import FileTexts, file_texts, tokens_about
from reme_mcp.index.semantic.models import centring, hub_models, windows
from reme_mcp.index.semantic.models.e5_embedder import DIM
from reme_mcp.index.semantic.models.embedders import TextEmbedder, model_key, open_embedder
from reme_mcp.index.semantic.models.runtime import VECTORS_VERSION, EmbedderUnavailable, give_back_memory
from reme_mcp.index.semantic.models.trust import E5_TRUST, Trust
from reme_mcp.index.semantic.vector_format import sweep_other_versions
from reme_mcp.index.semantic.vectors import Near, Rows, VectorStore, text_digest
from reme_mcp.index.store import IndexStore
from reme_mcp.storage import locks
from reme_mcp.storage.batching import RETRY
from reme_mcp.storage.workspace import file_kind

log = logging.getLogger("reme_mcp.index")

# What a model call embeds, in tokens (about 128 chunks of a workspace's notes and dialogs):
# about half a second, so a batch never holds a stopping thread long, a long chunk counting
# for the windows it is read as. Its two one-core calls (models/e5_embedder.py) finish
# together more often in a bigger one: 128 chunks embedded 210 a second where 64 did 202
# (the embedder alone, 3 runs each).
BATCH_TOKENS = 12_000
EMBED_THREADS = 2  # cores the background embedding may use (at the lowest priority)
SAVE_EVERY = 10.0  # seconds between saves while a large workspace is being embedded
# ... or this many times as long as the last save took, if longer: a save writes every vector
# (about a second at 100k chunks), and it should not take more than a small share of the time.
SAVE_SHARE = 20
STOP_WAIT = 10.0  # seconds an exiting process waits for the batch being embedded
# Seconds between looks while another process embeds the workspace: what it saved is read,
# and this one takes over once it is done or gone.
LOOK_AGAIN = 2.0
READ_ALL_AT = 64  # files to embed from which one pass over the stored fields beats a lookup each


@dataclass(frozen=True)
class SemanticState:
    """What `doctor` says about the stage."""

    model: str
    status: str  # "loading", "ready", or why it is off
    embedded: int  # chunks with a vector
    files_waiting: int  # files the index holds that are not embedded yet (as of the last look)
    files_unreadable: int = 0  # files the model failed on, as they are now (searched by their words)


class SemanticStage:
    """One index's vectors, kept up to date by a background thread, and the nearest chunks to a question."""

    def __init__(
        self, store: IndexStore, folder: Path, model: str = hub_models.BUNDLED[0], models_home: Path | None = None
    ) -> None:
        self._store = store
        self._folder = folder
        self.model = model
        self._models_home = models_home  # where fetched hub models are (models/hub_models.py)
        self._key = model_key(model, models_home)
        self.vectors = VectorStore(folder, f"{self._key}-{VECTORS_VERSION}", hub_models.bundled_dim(model) or DIM)
        self.failure: str | None = None
        # Files the model could not read, with the content it failed on: not tried again until edited.
        self._unreadable: dict[str, str] = {}
        self._query_model: TextEmbedder | None = None
        self._text_model: TextEmbedder | None = None  # a question embedded as text, at once
        self._asker = ThreadPoolExecutor(1, thread_name_prefix="reme-ask")
        self._query_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._loaded = threading.Event()
        self._stopping = threading.Event()

    def wake(self) -> None:
        """The index may have changed: embed what is new (started on first call)."""
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reme-embed", daemon=True)
                self._thread.start()
                _RUNNING.add(self)
        if self.failure is None:
            self._idle.clear()
            self._wake.set()

    def stop(self, timeout: float) -> None:
        """Ends the background thread after the batch it is embedding (what is embedded is saved)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait(self, timeout: float) -> bool:
        """Wait until everything the index held at the last wake is embedded (or the model failed)."""
        self.wake()
        return self._idle.wait(timeout)

    def settled(self, timeout: float) -> bool:
        """Wait, without waking the stage, until it has embedded what it was last woken for."""
        return self._idle.wait(timeout)

    def loaded(self, timeout: float) -> bool:
        """Wait until the model is loaded or known to be missing."""
        return self._loaded.wait(timeout)

    def ask(
        self, text: str, k: int, chunk_ids: Sequence[str], as_text_too: bool = False
    ) -> tuple[list[Near], dict[str, float], dict[str, float]]:
        """The k chunks most like `text`, how like it each of `chunk_ids` is, and how like it the
        model judges them (its judging vector: embedders.py), from one embedding of the question
        (`as_text_too`: two, centring.joined); nothing while the model loads or when it is missing."""
        model = self._query_model
        if model is None or not text.strip():
            return [], {}, {}
        with self._query_lock:
            if as_text_too and self._text_model is not None and model.two_readings:
                # The two embeddings at once, one a core: a second one costs no wall time
                # while a core is free (the background embedding yields, it runs at nice 19).
                said = self._asker.submit(self._text_model.passages, [text])
                query = centring.joined(model.query(text), said.result())
            else:
                query = model.query(text)
        judge = model.judging(query)
        return self.vectors.nearest(query, k, chunk_ids, None if judge is query else judge)

    @property
    def trust(self) -> Trust:
        """How the fusion weighs the loaded model's cosines (e5's until it has loaded)."""
        model = self._query_model
        return model.trust if model is not None else E5_TRUST

    def state(self) -> SemanticState:
        waiting, gone, unreadable = self._behind()
        if self.failure is not None:
            status = f"off: {self.failure}"
        elif self._query_model is None:
            status = "loading" if self._thread is not None else "not started (starts with the first search)"
        elif self._idle.is_set() or not (waiting or gone):
            # A wake with nothing to do clears the idle flag for a moment (a search, the doctor's
            # own look): vectors that answer for every file the index holds are what "ready" means.
            status = "ready"
        else:
            status = "embedding"
        return SemanticState(self.model, status, self.vectors.chunk_count(), waiting, unreadable)

    def _records(self) -> dict[str, FileRecord]:
        """The index's files the model embeds, as the index holds them now."""
        store = self._store
        with store.mutex:
            return _read_by_model(store.records()) if store.exists() else {}

    def unsaved_files(self) -> int:
        """Files whose vectors on disk are not as the index holds them now (not embedded yet, or a save
        refused), and files saved that the index no longer holds: what `doctor` calls behind. 0 until
        the model has loaded, and when it cannot (search by meaning is off then: nothing is owed)."""
        if self.failure is not None or self._query_model is None:
            return 0
        records = self._records()
        saved = self.vectors.stored_hashes()
        return len(self._due(records, saved)) + sum(1 for p in saved if p not in records)

    def _behind(self) -> tuple[int, int, int]:
        """Files the index holds that are not embedded as they are now, files embedded that it no
        longer holds, and files the model failed on as they are now."""
        records = self._records()
        have = self.vectors.hashes()
        # A copy: the stage's thread may add to it meanwhile (this runs on a searching thread).
        failed = list(self._unreadable.items())
        unreadable = sum(1 for p, content in failed if p in records and _hash(records[p]) == content)
        return len(self._due(records, have)), sum(1 for p in have if p not in records), unreadable

    def _due(self, records: dict[str, FileRecord], have: dict[str, str]) -> list[str]:
        """The files whose content is not embedded as it is now (and not known to be unreadable)."""
        due = []
        for path, record in records.items():
            now = _hash(record)
            if have.get(path) != now and self._unreadable.get(path) != now:
                due.append(path)
        return due

    # ---- the background thread ------------------------------------------------------------

    def _run(self) -> None:
        # The lowest CPU priority for this thread alone (Linux schedules threads one by one):
        # on a busy machine, remember and search come first and embedding waits.
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        try:
            # Two handles on one model (its weights loaded once): the workspace is embedded on
            # both cores, by threads made here and so at this thread's priority; a question is
            # embedded on the searching thread, never behind a batch, its two forms side by side.
            means = self._folder.parent / f"means-{self._key}-{VECTORS_VERSION}.npy"
            worker = open_embedder(self.model, self._models_home, means, threads=EMBED_THREADS)
            query_model = text_model = open_embedder(self.model, self._models_home, means)
        except EmbedderUnavailable as exc:
            self.failure = str(exc)
            log.warning("reme-mcp: search by meaning is off: %s; search stays lexical", exc)
            self._idle.set()
            self._loaded.set()
            return
        if worker.dim != self.vectors.dim:  # a hub model of another size than the bundled one
            self.vectors = VectorStore(self._folder, self.vectors.model, worker.dim)
        self.vectors.load()
        sweep_other_versions(self._folder, self._key)
        self._query_model, self._text_model = query_model, text_model
        self._loaded.set()
        elsewhere = False  # another process is embedding this workspace
        failed: str | None = None  # why the last round failed, said once until it changes
        while not self._stopping.is_set():
            # Vectors are derived state: a round that failed, or a save refused (a full disk, a
            # read-only folder), is tried again on its own within a second (storage/batching.py's
            # rule), not only when the index next changes.
            behind = failed is not None or self.vectors.unsaved
            self._wake.wait(LOOK_AGAIN if elsewhere else RETRY if behind else None)
            self._wake.clear()
            if self._stopping.is_set():
                break
            try:
                elsewhere, failed = not self._catch_up_alone(worker), None
            except Exception as exc:  # the index changed under us, the machine out of memory
                elsewhere, why = False, f"{exc.__class__.__name__}: {exc}"
                if why != failed:
                    log.warning("reme-mcp: embedding stopped for now (%s); tried again in a second", why)
                failed = why
            if not elsewhere and not self._wake.is_set():
                self._idle.set()

    def _catch_up_alone(self, worker: TextEmbedder) -> bool:
        """Embeds what changed, unless another process on this workspace (a second host's server)
        is embedding it: then this one takes what that one has saved so far, answers from it,
        and looks again a moment later (False). So a workspace is embedded once, however many
        servers serve it; the one that holds the lock first reads what the others saved."""
        try:
            held = locks.try_take(self._folder / f"vectors-{self.vectors.model}.lock")
        except OSError:
            held = -1  # no folder to lock in: the index is gone, there is nothing to share
        if held is None:
            self.vectors.refresh()
            return False
        try:
            self.vectors.refresh()
            self._catch_up(worker)
        finally:
            if held >= 0:
                os.close(held)
        return True

    def _catch_up(self, worker: TextEmbedder) -> None:
        """Embeds what changed, drops what is gone."""
        todo, gone = self._plan()
        self.vectors.drop(gone)
        saved, took = time.monotonic(), 0.0
        batch: list[FileTexts] = []
        tokens = 0
        for item in todo:
            if self._stopping.is_set():
                batch = []
                break
            batch.append(item)
            tokens += sum(4 + tokens_about(t) for t in item.texts)  # and a window's marks
            if tokens >= BATCH_TOKENS:
                self._embed_apart(worker, batch)
                batch, tokens = [], 0
                if time.monotonic() - saved > max(SAVE_EVERY, SAVE_SHARE * took):
                    began = time.monotonic()
                    self.vectors.save()
                    saved = time.monotonic()
                    took = saved - began
        if self._stopping.is_set() and not self._folder.is_dir():
            return  # the index went with its workspace (a temporary one): nothing to keep
        self._embed_apart(worker, batch)
        self.vectors.save()

    def _embed_apart(self, worker: TextEmbedder, batch: list[FileTexts]) -> None:
        """Embeds the batch; when the model fails on it, each file on its own, so that one file it
        cannot read is left out (one stderr line) rather than holding back every file after it."""
        try:
            self._embed(worker, batch)
        except (OSError, MemoryError):
            raise  # the machine, not a file: the next wake tries again
        except Exception as exc:
            if len(batch) > 1:
                for item in batch:
                    self._embed_apart(worker, [item])
                return
            item = batch[0]
            self._unreadable[item.path] = item.content_hash
            log.warning(
                "reme-mcp: %s is not searched by meaning: the model cannot read it (%s: %s); "
                "it is searched by its words, and tried again when it changes",
                item.path,
                exc.__class__.__name__,
                exc,
            )

    def _embed(self, worker: TextEmbedder, batch: list[FileTexts]) -> None:
        """Embeds the chunks of these files whose text the model has not read yet (a long one as
        several windows); a chunk an edit left as it was keeps its rows, and equal texts are
        embedded once."""
        known = self.vectors.reusable([item.path for item in batch])
        digests = [[text_digest(t) for t in item.texts] for item in batch]
        new = {d: t for item, ds in zip(batch, digests, strict=True) for d, t in zip(ds, item.texts, strict=True)}
        for digest in known:
            new.pop(digest, None)
        if new:
            read = worker.passage_windows(list(new.values()))
            cuts = np.cumsum(read.counts)[:-1]
            for (digest, text), vectors, shares, first in zip(
                new.items(), np.split(read.vectors, cuts), np.split(read.shares, cuts), [0, *cuts], strict=True
            ):
                said = read.windows[first : first + len(vectors)]
                known[digest] = Rows(vectors, shares, windows.offsets(text, said))
            give_back_memory()
        for item, ds in zip(batch, digests, strict=True):
            self.vectors.put(item.path, item.content_hash, item.chunks, [known[d] for d in ds], ds)

    def _plan(self) -> tuple[list[FileTexts], list[str]]:
        """The files to embed (their chunks read from one searcher) and the paths to drop."""
        store = self._store
        with store.mutex:
            if not store.exists():
                return [], []
            records = _read_by_model(store.records())
            have = self.vectors.hashes()
            gone = [p for p in have if p not in records]
            changed = self._due(records, have)
            if not changed:
                return [], gone
            if len(changed) < READ_ALL_AT:  # a lookup a file, a moment under the lock
                searcher = store.searcher()
                return file_texts([fields for path in changed for fields in searcher.documents(path=path)]), gone
            # Many files: one pass over every chunk's stored text, seconds at 100k chunks. So
            # through a searcher of its own, of one generation (a file's chunks and its record
            # agree), without the index's lock, which every search takes.
            searcher = store.own_searcher()
        wanted = set(changed)
        with searcher:
            return file_texts([fields for fields in searcher.all_stored_fields() if fields.get("path") in wanted]), gone


def _read_by_model(records: dict[str, FileRecord]) -> dict[str, FileRecord]:
    """The files the model embeds: all but the day indexes, which stay found by their words.

    A day index's list of its notes is no memory of its own (schema.py leaves it out of the
    index); the line or two a person writes around it sums up the day in its notes' topics, and
    by meaning so short a summary outranks the note it sums up (docs/semantic.md, "What the
    model reads")."""
    return {path: record for path, record in records.items() if file_kind(path) != "day_index"}


# Stages whose thread runs. At the interpreter's exit each is stopped before Python tears
# itself down: a daemon thread inside onnxruntime's run when that happens aborted the
# process ("terminate called without an active exception", exit status 134).
_RUNNING: weakref.WeakSet[SemanticStage] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for stage in list(_RUNNING):
        stage.stop(STOP_WAIT)


def _hash(record: FileRecord) -> str:
    """What a file's vectors are keyed by: its content as the index recorded it."""
    return record.content_hash or record.stamp
