"""The vectors' kinds and how they are kept on disk: a chunk's key, the rows the model read of it,
a file's block of rows, and the description (``vectors-<model>.json``) that names the rows file
and says which rows are which chunks (vectors.py keeps and searches them)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from reme_mcp.index.semantic.models.runtime import VECTORS_VERSION, Vectors

FORMAT = 4
# The fewest bytes a chunk's line of the description takes (its id, line, date, digest, shares):
# the room a save needs is counted from below, so it never refuses a save that would fit.
ROW_DESCRIPTION = 64


@dataclass(frozen=True, slots=True)
class ChunkKey:
    """What a search needs of a chunk before it reads the index: where it is, and its date."""

    chunk_id: str
    path: str
    start_line: int
    date: str


@dataclass(frozen=True, slots=True)
class Rows:
    """What the model read of one chunk: a unit vector a window (models/windows.py: a long text is read
    as several), each window's share of CJK letters (centring.per_question), and where in the
    chunk's text each window starts."""

    vectors: Vectors
    shares: Vectors
    at: list[int]


class Near(NamedTuple):
    """A chunk near a question: its cosine similarity, and where its best window starts."""

    key: ChunkKey
    similarity: float
    at: int


@dataclass(slots=True)
class FileVectors:
    """One file's chunks and what the model read of them, its rows as one block: a large
    workspace's matrix is stacked from a block a file, not from a thousand small ones."""

    content_hash: str
    chunks: list[ChunkKey]
    digests: list[str]  # per chunk, text_digest() of what the model read
    vectors: Vectors  # every chunk's rows, in order (a view of the store's matrix once stacked)
    shares: Vectors  # per row
    at: list[int]  # per row
    counts: list[int]  # rows a chunk

    @classmethod
    def of(
        cls, content_hash: str, chunks: list[ChunkKey], rows: list[Rows], digests: list[str], dim: int
    ) -> FileVectors:
        return cls(
            content_hash,
            chunks,
            digests,
            stacked([r.vectors for r in rows], dim),
            joined([r.shares for r in rows]),
            [a for r in rows for a in r.at],
            [len(r.vectors) for r in rows],
        )

    def rows(self) -> list[Rows]:
        """Per chunk, its rows (views of the file's block)."""
        out, row = [], 0
        for n in self.counts:
            out.append(Rows(self.vectors[row : row + n], self.shares[row : row + n], self.at[row : row + n]))
            row += n
        return out


def stacked(blocks: list[Vectors], dim: int) -> Vectors:
    return np.vstack(blocks).astype(np.float32, copy=False) if blocks else np.zeros((0, dim), dtype=np.float32)


def joined(parts: list[Vectors]) -> Vectors:
    """Per-row values (each row's share of CJK letters) of several parts, in order, as float32."""
    return np.concatenate(parts).astype(np.float32, copy=False) if parts else np.zeros(0, np.float32)


def text_digest(text: str) -> str:
    """A short, stable name for a text the model embedded: equal texts, equal vectors."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def describe(files: dict[str, FileVectors], model: str, dim: int, rows_name: str) -> dict[str, Any]:
    """The description a save writes beside the rows file `rows_name`, its files' rows in order."""
    entries = [
        {
            "path": p,
            "hash": f.content_hash,
            "chunks": [
                [c.chunk_id, c.start_line, c.date, d, [round(float(x), 3) for x in r.shares], r.at]
                for c, d, r in zip(f.chunks, f.digests, f.rows(), strict=True)
            ],
        }
        for p, f in files.items()
    ]
    return {"format": FORMAT, "model": model, "dim": dim, "rows": rows_name, "files": entries}


def room_for(folder: Path, need: int) -> None:
    """The error a save would meet, raised before it builds and writes anything: a read-only
    folder, or less free space than the save takes. A refused save is tried again every second,
    and building one costs as much as writing it (100k chunks: 180 MB of rows with the default model)."""
    found = os.statvfs(folder)
    if found.f_flag & os.ST_RDONLY:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(folder))
    if found.f_bavail * found.f_frsize < need:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))


def of_this_model(meta: Any, model: str, dim: int) -> bool:
    """Whether a stored description is of this format, model and size (else nothing of it is used)."""
    return bool(meta.get("format") == FORMAT and meta.get("model") == model and meta.get("dim") == dim)


def parse_stored(meta: Any, stored: Any, model: str, dim: int) -> tuple[dict[str, FileVectors], Vectors]:
    """The files of a stored pair, checked against each other and this model, and the matrix of
    their rows in order (each file's rows are views of it)."""
    if not of_this_model(meta, model, dim):
        return {}, stacked([], dim)
    if not isinstance(stored, np.ndarray) or stored.ndim != 2 or stored.shape[1] != dim:
        raise ValueError("the vector file does not match its description")
    matrix = stored.astype(np.float32)
    files: dict[str, FileVectors] = {}
    row = 0
    for entry in meta["files"]:
        path = str(entry["path"])
        if path in files:
            raise ValueError("the vector file's description names a file twice")
        chunks: list[ChunkKey] = []
        shares_all: list[float] = []
        at_all: list[int] = []
        counts: list[int] = []
        digests: list[str] = []
        first = row
        for chunk_id, start_line, day, digest, shares, at in entry["chunks"]:
            if not isinstance(shares, list) or not shares or not isinstance(at, list) or len(at) != len(shares):
                raise ValueError("a chunk of the vector file's description has no rows")
            if row + len(shares) > len(matrix):
                raise ValueError("the vector file is shorter than its description")
            chunks.append(ChunkKey(str(chunk_id), path, int(start_line), str(day)))
            shares_all.extend(float(x) for x in shares)
            at_all.extend(int(a) for a in at)
            counts.append(len(shares))
            digests.append(str(digest))
            row += len(shares)
        shares_of = np.array(shares_all, np.float32)
        files[path] = FileVectors(str(entry["hash"]), chunks, digests, matrix[first:row], shares_of, at_all, counts)
    if row != len(matrix):
        raise ValueError("the vector file is longer than its description")
    return files, matrix


def sweep_other_versions(folder: Path, key: str) -> None:
    """Removes the model `key`'s vectors and means of an earlier VECTORS_VERSION: a new version
    embeds everything afresh, and the old files would otherwise stay beside it for good.
    Other models' files (a hub model, switched back to later) are kept."""
    for kind, where in (("vectors", folder), ("means", folder.parent)):
        with contextlib.suppress(OSError):
            for path in where.glob(f"{kind}-*"):
                stem = path.name.split(".", 1)[0]
                named, _, version = stem.rpartition("-")
                if named == f"{kind}-{key}" and _VERSION.fullmatch(version) and version != VECTORS_VERSION:
                    path.unlink(missing_ok=True)


_VERSION = re.compile(r"c\d+")
