"""The two bundled models read together: USE and multilingual-e5-small, their cosines blended.

Each model is wrong where the other is right: USE finds notes asked for in other words and
across languages best, e5-small the dialog message that answers a question (docs/semantic.md,
"Choosing the model"). A vector here is the two models' centred unit vectors side by side,
each scaled by the root of its share, so its dot product with another is the two cosines
blended by those shares, and it is a unit vector itself: the stage, the vectors on disk and
the per-question centring treat it as one model's.

Stored text is read in e5-small's windows (the narrower: they leave room for its "passage: "
prefix), and USE reads the same lines, so a window's two halves are of one text.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from reme_mcp.index.semantic.models import centring
from reme_mcp.index.semantic.models.trust import E5_TRUST, Trust
from reme_mcp.index.semantic.models.use_embedder import TRUST as USE_TRUST

MODEL = "use-e5-small"
E5_MODEL = "multilingual-e5-small"
# USE's share of a blended cosine. bench/paraphrase.py, seeds 7 and 8, and LoCoMo (any@5,
# session@5) at shares 0.5 / 0.3 / 0.15: 0.980/0.980, 0.973/0.973, 0.920/0.940 and 77.8/93.8,
# 78.2/93.4, 78.3/93.0 (bench/log-2026-12.md).
USE_SHARE = 0.3
Vectors = centring.Vectors


def _blend(use: float, e5: float) -> float:
    return USE_SHARE * use + (1.0 - USE_SHARE) * e5


# Its cosines are the blend of the two models', so its floor and the doubt's margins are the
# blend of theirs. A strong lexical stage's hits are reordered by e5-small's cosine alone, at
# e5-small's weight (`judging`; USE reorders nothing, use_embedder.TRUST). LoCoMo any@5 /
# MRR / session@5 / lines per hit, the blend 78.0 / 0.625 / 93.4 / 1.37, e5-small's cosine
# 78.8 / 0.630 / 93.3 / 1.36; realws-dev and bench/paraphrase.py unchanged
# (bench/log-2026-12.md). The blend lifted a dialog's questions, which USE finds
# like the question asked, and with them the replies they come back with (index/question_reply.py).
TRUST = Trust(
    floor=_blend(USE_TRUST.floor, E5_TRUST.floor),
    doubt=(_blend(USE_TRUST.doubt[0], E5_TRUST.doubt[0]), _blend(USE_TRUST.doubt[1], E5_TRUST.doubt[1])),
    rerank=E5_TRUST.rerank,
)


class _Half(Protocol):
    dim: int

    def passages(self, texts: list[str]) -> Vectors: ...

    def passage_windows(self, texts: list[str]) -> centring.Read: ...

    def query(self, text: str) -> Vectors: ...


class PairEmbedder:
    """USE and e5-small as one model: the interface of the stage's embedders (embedders.py),
    over the two loaded models (each loaded once a process, shared with any stage of its own)."""

    trust = TRUST
    two_readings = True  # e5-small reads a question otherwise than stored text

    def __init__(self, use: _Half, e5: _Half) -> None:
        self._use, self._e5 = use, e5
        self.name = MODEL
        self.dim = self._use.dim + self._e5.dim
        self._scales = (math.sqrt(USE_SHARE), math.sqrt(1.0 - USE_SHARE))

    def _side_by_side(self, use: Vectors, e5: Vectors) -> Vectors:
        joined: Vectors = np.concatenate([use * self._scales[0], e5 * self._scales[1]], axis=-1).astype(np.float32)
        return joined

    def passages(self, texts: list[str]) -> Vectors:
        return self._side_by_side(self._use.passages(texts), self._e5.passages(texts))

    def passage_windows(self, texts: list[str]) -> centring.Read:
        read = self._e5.passage_windows(texts)
        use = self._use.passages(read.windows) if read.windows else np.zeros((0, self._use.dim), np.float32)
        return centring.Read(self._side_by_side(use, read.vectors), read.windows, read.shares, read.counts)

    def query(self, text: str) -> Vectors:
        return self._side_by_side(self._use.query(text), self._e5.query(text))

    def judging(self, query: Vectors) -> Vectors:
        """e5-small's half of the question alone, scaled so its product with a stored vector is
        e5-small's cosine: USE judges which message answers a question worse than the words do."""
        judge = np.zeros_like(query)
        judge[..., self._use.dim :] = query[..., self._use.dim :] / (1.0 - USE_SHARE)
        return judge
