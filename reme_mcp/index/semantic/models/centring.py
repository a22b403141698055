"""Language centring shared by every embedder: each language's mean, removed from each vector.

The means are one model's (language_means.py says why and how much): computed once a
process from the everyday sentences there, kept in a small file beside the indexes so a
later start skips that second of CPU, and shared by every handle on that model.
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from reme_mcp.index.semantic.models import language_means
from reme_mcp.index.semantic.models.trust import E5_TRUST, Trust
from reme_mcp.storage.files import write_whole

Vectors = NDArray[np.float32]
# A model's raw unit vectors for texts, embedded as stored text (False) or as a question (True).
RawEmbed = Callable[[list[str], bool], Vectors]
Means = tuple[Vectors, Vectors]  # English, Chinese

_LOCK = threading.Lock()
_MEANS: dict[str, Vectors] = {}


def model_means(name: str, dim: int, raw: RawEmbed, stored: Path | None) -> tuple[Means, Means]:
    """The model's means as stored text and as a question, computed (or read) once a process."""
    with _LOCK:
        if name not in _MEANS:
            _MEANS[name] = _load_or_compute(dim, raw, stored)
        pe, pz, qe, qz = _MEANS[name]
    return (pe, pz), (qe, qz)


def centre(texts: list[str], vectors: Vectors, means: Means) -> Vectors:
    """Unit vectors with each text's language mean removed (mixed text by its share of CJK letters)."""
    return centre_by_share(shares_of(texts), vectors, means)


def shares_of(texts: list[str]) -> Vectors:
    """Each text's share of CJK letters."""
    return np.array([language_means.cjk_share(t) for t in texts], dtype=np.float32)


def centre_by_share(shares: Vectors, vectors: Vectors, means: Means) -> Vectors:
    """Unit vectors with each one's language mean removed, by its text's share of CJK letters."""
    share = shares.reshape(-1, 1)
    centred = vectors - language_means.STRENGTH * (share * means[1] + (1.0 - share) * means[0])
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    unit: Vectors = (centred / np.maximum(norms, 1e-6)).astype(np.float32)
    return unit


# How many chunks' worth of the whole workspace's mean each language's mean is drawn toward
# (per_question): a language a few chunks hold is barely corrected, so a lone note in it
# that answers the question keeps its score.
SHRINK_CHUNKS = 20


def per_question(scores: Vectors, shares: Vectors) -> Vectors:
    """A question's cosine similarities with each language's pull on it taken out.

    Centring (above) removes each language's mean once for all questions, but how strongly a
    question prefers its own language varies from question to question. So each chunk's
    score loses how far its language's mean score for this question lies above the
    workspace's (mixed text by its share of CJK letters; each mean drawn toward the
    workspace's by SHRINK_CHUNKS). In a workspace of one language nothing moves. On
    bench/paraphrase.py, seeds 7-10, fused recall@5 across languages went 0.761 -> 0.795 on
    average (docs/semantic.md)."""
    if not len(scores):
        return scores
    overall = float(scores.mean())
    chinese = (float(shares @ scores) + SHRINK_CHUNKS * overall) / (float(shares.sum()) + SHRINK_CHUNKS)
    rest = 1.0 - shares
    other = (float(rest @ scores) + SHRINK_CHUNKS * overall) / (float(rest.sum()) + SHRINK_CHUNKS)
    pull = shares * (chinese - overall) + rest * (other - overall)
    out: Vectors = (scores - pull).astype(np.float32)
    return out


def joined(asked: Vectors, said: Vectors) -> Vectors:
    """A question's unit vector from its embeddings as a question and as stored text, averaged.

    e5 reads "query: " text and "passage: " text differently; a question asked in other words
    (or the other language) than its note is found more often by the two together than by
    either (bench/paraphrase.py, seeds 7 and 8, recall@5: question form 0.840 / 0.860, text
    form 0.820 / 0.860, both 0.887 / 0.887). It costs a second embedding of the question, so
    it is asked only where the words found little (index/semantic/hook.py): on LoCoMo, whose
    questions the words answer, it gained nothing and doubled the search time.
    """
    both = asked.reshape(-1) + said.reshape(-1)
    unit: Vectors = (both / max(float(np.linalg.norm(both)), 1e-6)).astype(np.float32)
    return unit


@dataclass(frozen=True)
class Read:
    """Stored texts as the model read them: a row a window, in the texts' order."""

    vectors: Vectors  # centred unit vectors
    windows: list[str]  # the text each window is of
    shares: Vectors  # each window's share of CJK letters
    counts: list[int]  # each text's windows


class Centred:
    """What every embedder gives the stage: centred unit vectors for stored text and questions.

    A runtime supplies `_raw` (its model's unit vectors) and its means (model_means)."""

    dim: int
    # How the fusion weighs the model's cosines: e5's scale unless a model says otherwise.
    trust: Trust = E5_TRUST
    # Whether the model reads a question otherwise than stored text (e5's "query: " and
    # "passage: "): only then is a question embedded both ways (joined).
    two_readings: bool = True
    _passage_means: Means
    _query_means: Means

    def _raw(self, texts: list[str], is_query: bool) -> Vectors:
        raise NotImplementedError

    def _raw_windows(self, texts: list[str]) -> tuple[Vectors, list[str], list[int]]:
        """Stored texts' unit vectors, a long text as several windows where the model reads only
        a text's start, the text of each window, and each text's number of windows; one a text
        where the model reads them whole."""
        return self._raw(texts, False), texts, [1] * len(texts)

    def passages(self, texts: list[str]) -> Vectors:
        """Unit vectors for stored text, one row per text, centred (language_means.py)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return centre(texts, self._raw(texts, False), self._passage_means)

    def passage_windows(self, texts: list[str]) -> Read:
        """Stored texts read whole (a long one in windows, windows.py), each window centred by its own language."""
        vectors, windows, counts = self._raw_windows(texts) if texts else (np.zeros((0, self.dim)), [], [])
        shares = shares_of(windows)
        return Read(centre_by_share(shares, vectors.astype(np.float32), self._passage_means), windows, shares, counts)

    def query(self, text: str) -> Vectors:
        """The unit vector of a question, centred like the stored text."""
        return centre([text], self._raw([text], True), self._query_means).reshape(self.dim)

    def judging(self, query: Vectors) -> Vectors:
        """The vector whose cosines with stored text reorder a strong lexical stage's hits: the
        question's own."""
        return query


def _load_or_compute(dim: int, raw: RawEmbed, stored: Path | None) -> Vectors:
    """English and Chinese means, as stored text then as a question: rows pe, pz, qe, qz."""
    if stored is not None:
        with contextlib.suppress(OSError, ValueError):
            kept = np.load(stored, allow_pickle=False)
            if kept.shape == (4, dim):
                return np.asarray(kept, dtype=np.float32)
    en, zh = list(language_means.ENGLISH), list(language_means.CHINESE)
    means = np.stack([raw(t, q).mean(axis=0) for q in (False, True) for t in (en, zh)]).astype(np.float32)
    if stored is not None:
        with contextlib.suppress(OSError):
            # Two servers starting at once for the first time compute these together: each writes whole.
            saved = io.BytesIO()
            np.save(saved, means, allow_pickle=False)
            write_whole(stored, saved.getvalue(), durable=False)
    return means
