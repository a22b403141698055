"""The semantic stage's vectors: derived state kept beside the index, never in the workspace.

A vector per chunk, or one per window of a long chunk (models/windows.py), grouped by file and
keyed by the file's content hash as the index recorded it (records.py): a file edited by
a person has a new hash and is embedded again, a file gone from the index is dropped, a
file only touched keeps its vectors. Each chunk also keeps a digest of the text the model
read, so a file embedded again reuses the vectors of the chunks that did not change: a
person's edit to one section of a long page, or a session's dialog that grows by a
message, costs what changed, not the whole file again.

On disk, in the index's private folder (home.py), two files: ``vectors-<model>.json`` (which
rows are which chunks, each row's share of CJK letters for centring.per_question, and where
its window starts in the chunk's text) names the ``vectors-<model>.<generation>.npy`` of
float16 rows it describes. A save writes a new generation's rows, then replaces the
description in one step: a reader, in this process or another, reads a description and the
very rows it names, never one save's description with another's rows. A store written by
another model, or unreadable, is started afresh: vectors can always be computed again from
the files.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from reme_mcp.errors import SaidOnce
from reme_mcp.index.semantic.models import centring
from reme_mcp.index.semantic.models.runtime import Vectors
from reme_mcp.index.semantic.vector_format import (
    ROW_DESCRIPTION,
    ChunkKey,
    FileVectors,
    Near,
    Rows,
    describe,
    joined,
    of_this_model,
    parse_stored,
    room_for,
    stacked,
    text_digest,
)

__all__ = ["ChunkKey", "FileVectors", "Near", "Rows", "VectorStore", "text_digest"]

log = logging.getLogger("reme_mcp.index")


@dataclass(frozen=True, slots=True)
class _Matrix:
    matrix: Vectors  # every row
    starts: NDArray[np.int64]  # where each chunk's rows start
    keys: list[ChunkKey]
    places: dict[str, int]  # each chunk id's place in keys
    shares: Vectors  # each row's share of CJK letters
    at: list[int]  # where each row's window starts in its chunk's text


def _end(held: _Matrix, chunk: int, rows: int) -> int:
    """Where a chunk's rows end: where the next one's start, or at the last row."""
    return int(held.starts[chunk + 1]) if chunk + 1 < len(held.starts) else rows


def _indexed(files: Sequence[FileVectors], matrix: Vectors) -> _Matrix:
    """What a search reads of `files`, whose rows `matrix` holds in their order."""
    counts = np.fromiter((n for f in files for n in f.counts), dtype=np.int64)
    keys = [c for f in files for c in f.chunks]
    return _Matrix(
        matrix,
        (np.cumsum(counts) - counts).astype(np.int64),
        keys,
        {key.chunk_id: place for place, key in enumerate(keys)},
        joined([f.shares for f in files]),
        [at for f in files for at in f.at],
    )


def _held_in(files: Sequence[FileVectors], matrix: Vectors) -> None:
    """Each file's block made a view of `matrix` (which holds them in order), so the vectors are
    held once: a copy beside the matrix doubled a large workspace's memory (885 MB for a server
    at 100k chunks; docs/semantic.md)."""
    row = 0
    for f in files:
        f.vectors = matrix[row : row + len(f.vectors)]
        row += len(f.vectors)


class VectorStore:
    """Every embedded file's chunk vectors, in memory and on disk; safe across this process's threads."""

    def __init__(self, folder: Path, model: str, dim: int) -> None:
        self._folder = folder
        self._meta = folder / f"vectors-{model}.json"
        # A generation's rows (save); a store written before generations had one file of rows.
        self._generation = re.compile(re.escape(self._meta.stem) + r"\.[0-9a-f]{12}\.npy")
        self._unnamed = folder / f"vectors-{model}.npy"
        self.model, self.dim = model, dim
        self._files: dict[str, FileVectors] = {}
        self._lock = threading.Lock()
        # All rows, where each chunk's rows start, the chunks' keys, each chunk id's place
        # among them, and each row's share of CJK letters: rebuilt after a change.
        self._matrix: _Matrix | None = None
        self._unsaved = False
        # The description on disk as this process last read or wrote it: another's save shows
        # as a change (refresh).
        self._seen: tuple[int, int, int] | None = None
        self._unwritable = SaidOnce(
            log,
            "saving the vectors of search by meaning",
            "searches by meaning answer from the vectors in memory, which are saved as soon as they can be",
        )

    # ---- what is held --------------------------------------------------------------------

    def hashes(self) -> dict[str, str]:
        """The content hash each embedded file had, by path."""
        with self._lock:
            return {path: f.content_hash for path, f in self._files.items()}

    def chunk_count(self) -> int:
        with self._lock:
            return sum(len(f.chunks) for f in self._files.values())

    def put(self, path: str, content_hash: str, chunks: list[ChunkKey], rows: list[Rows], digests: list[str]) -> None:
        """A file's chunks with what the model read of each and the digest of that text."""
        with self._lock:
            self._files[path] = FileVectors.of(content_hash, chunks, rows, digests, self.dim)
            self._matrix, self._unsaved = None, True

    def reusable(self, paths: Sequence[str]) -> dict[str, Rows]:
        """The rows these files' chunks have now, by text_digest(): what an edit left as it was."""
        with self._lock:
            held = [self._files[p] for p in paths if p in self._files]
            return {d: rows for f in held for d, rows in zip(f.digests, f.rows(), strict=True)}

    def drop(self, paths: list[str]) -> None:
        with self._lock:
            for path in paths:
                if self._files.pop(path, None) is not None:
                    self._matrix, self._unsaved = None, True

    def nearest(
        self, query: Vectors, k: int, chunk_ids: Sequence[str] = (), judge: Vectors | None = None
    ) -> tuple[list[Near], dict[str, float], dict[str, float]]:
        """The k chunks most like the query, best first, and how like it each of `chunk_ids` is
        (those without a vector left out), from one product over every vector: the cosine
        (every vector is a unit vector) of the chunk's best window, each language's pull on
        this question taken out (centring.per_question). With `judge` (the model's judging
        vector, embedders.py), also how like it each of `chunk_ids` is, from the same pass (the
        product takes both columns); without, that is the first likeness again."""
        held = self._all()
        keys = held.keys
        if not keys:
            return [], {}, {}
        columns = held.matrix @ (query if judge is None else np.stack([query, judge], axis=1))
        by_row = centring.per_question(columns if judge is None else columns[:, 0], held.shares)
        scores = np.maximum.reduceat(by_row, held.starts)
        k = min(k, len(keys))
        top = np.argpartition(-scores, k - 1)[:k]
        ranked = [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]
        best = [held.starts[i] + int(np.argmax(by_row[held.starts[i] : _end(held, i, len(by_row))])) for i in ranked]
        similar = {c: float(scores[held.places[c]]) for c in chunk_ids if c in held.places}
        judged = similar
        if judge is not None:
            by_judge = np.maximum.reduceat(centring.per_question(columns[:, 1], held.shares), held.starts)
            judged = {c: float(by_judge[held.places[c]]) for c in chunk_ids if c in held.places}
        near = [Near(keys[i], float(scores[i]), held.at[row]) for i, row in zip(ranked, best, strict=True)]
        return near, similar, judged

    def _all(self) -> _Matrix:
        with self._lock:
            return self._current()

    def _current(self) -> _Matrix:
        """The matrix of what is held now, stacked anew after a change (the lock held)."""
        if self._matrix is None:
            files = list(self._files.values())
            matrix = stacked([f.vectors for f in files], self.dim)
            _held_in(files, matrix)
            self._matrix = _indexed(files, matrix)
        return self._matrix

    # ---- on disk -------------------------------------------------------------------------

    @property
    def unsaved(self) -> bool:
        """Whether this process holds vectors it has not saved (a save refused: its stage tries again)."""
        with self._lock:
            return self._unsaved

    def stored_hashes(self) -> dict[str, str]:
        """The content hash each file had when its vectors were saved, by path, read from the disk
        now (`doctor`: what another process would load); empty when nothing of this model is saved."""
        try:
            meta = json.loads(self._meta.read_text(encoding="utf-8"))
            if not of_this_model(meta, self.model, self.dim):
                return {}
            return {str(entry["path"]): str(entry["hash"]) for entry in meta["files"]}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}

    def load(self) -> None:
        """Read what an earlier process embedded; anything unreadable or foreign is started afresh."""
        try:
            self._read()
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("reme-mcp: the stored vectors could not be read (%s); they are computed again", exc)

    def refresh(self) -> None:
        """Read the store again if another process saved it since this one last read or wrote it
        (several servers on one workspace: one embeds, the others take what it saved). What this
        process embedded and could not save yet is kept rather than replaced."""
        with self._lock:
            if self._unsaved:
                return
        if self._signature() == self._seen:
            return
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            self._read()  # a store caught mid-save (its rows replaced since) is read on the next look

    def _read(self) -> None:
        seen = self._signature()
        meta = json.loads(self._meta.read_text(encoding="utf-8"))
        named = meta.get("rows", self._unnamed.name)
        if named != self._unnamed.name and not (isinstance(named, str) and self._generation.fullmatch(named)):
            raise ValueError("the vector file's description names rows that are not its own")
        stored = np.load(self._folder / named, allow_pickle=False)
        files, matrix = parse_stored(meta, stored, self.model, self.dim)
        del stored  # float16 on disk; the float32 copy is the one kept
        with self._lock:
            self._files, self._matrix, self._seen = files, _indexed(list(files.values()), matrix), seen

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._meta)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def save(self) -> None:
        """Write the vectors if they changed: a new generation of rows, then the description that
        names it, each replaced atomically; then the rows no description names any more."""
        with self._lock:
            if not self._unsaved:
                return
            files = dict(self._files)
            held = self._current()  # its rows are those files' rows, in their order
            self._unsaved = False
        try:
            room_for(self._folder, held.matrix.shape[0] * (held.matrix.shape[1] * 2 + ROW_DESCRIPTION))
        except OSError as exc:
            with self._lock:
                self._unsaved = True
            self._unwritable.failed(exc)
            return
        matrix = held.matrix.astype(np.float16)
        rows = self._folder / f"{self._meta.stem}.{os.urandom(6).hex()}.npy"
        meta = describe(files, self.model, self.dim, rows.name)
        # One name for the rows in the making: a save cut short leaves one file, the next replaces it.
        tmp_npy, tmp_meta = self._unnamed.with_suffix(".npy.tmp"), self._meta.with_suffix(".json.tmp")
        try:
            with open(tmp_npy, "wb") as fh:
                np.save(fh, matrix, allow_pickle=False)
            tmp_meta.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp_npy, rows)
            os.replace(tmp_meta, self._meta)
        except OSError as exc:
            with self._lock:
                self._unsaved = True
            for tmp in (tmp_npy, tmp_meta, rows):
                with contextlib.suppress(OSError):
                    tmp.unlink()
            self._unwritable.failed(exc)
            return
        self._unwritable.cleared()
        with self._lock:
            self._seen = self._signature()
        with contextlib.suppress(OSError):
            for old in [self._unnamed, *self._folder.glob(f"{self._meta.stem}.*.npy")]:
                if old != rows and (old == self._unnamed or self._generation.fullmatch(old.name)):
                    old.unlink(missing_ok=True)
