"""Which runtime embeds for the semantic stage: a bundled model (use_embedder.py, e5_embedder.py) or a fetched one (onnx_embedder.py).

Both give unit vectors, centred the same way (centring.py), through one small interface.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

from reme_mcp.config import default_models_home
from reme_mcp.index.semantic.models import hub_models
from reme_mcp.index.semantic.models.centring import Read, Vectors
from reme_mcp.index.semantic.models.e5_embedder import Embedder
from reme_mcp.index.semantic.models.pair_embedder import E5_MODEL, PairEmbedder
from reme_mcp.index.semantic.models.pair_embedder import MODEL as PAIR_MODEL
from reme_mcp.index.semantic.models.trust import Trust
from reme_mcp.index.semantic.models.use_embedder import MODEL as USE_MODEL
from reme_mcp.index.semantic.models.use_embedder import UseEmbedder


class TextEmbedder(Protocol):
    name: str
    dim: int
    trust: Trust  # how the fusion weighs this model's cosines
    two_readings: bool  # whether a question read as stored text differs (centring.joined)

    def passages(self, texts: list[str]) -> Vectors: ...

    def passage_windows(self, texts: list[str]) -> Read: ...

    def query(self, text: str) -> Vectors: ...

    def judging(self, query: Vectors) -> Vectors: ...


def model_key(name: str, models_home: Path | None) -> str:
    """What names a model's vectors and language means on disk: a model fetched again under the
    same name, but another, starts afresh instead of mixing with the old one's vectors."""
    home = models_home or default_models_home()
    found = None if hub_models.is_bundled(name) else hub_models.fetched(home, name)
    return name if found is None else f"{name}-{found.fingerprint}"


# Loaded models, one per (model, folder, means, threads) in a process: a server reads a project's
# workspace and the personal one, each with its semantic stage, and a model holds 200-300 MB.
# The runtimes answer concurrent calls (onnxruntime sessions are thread-safe).
PAIR = (USE_MODEL, E5_MODEL)
_LOADED: dict[tuple[str, Path, Path | None, int], TextEmbedder] = {}
_LOADING = threading.RLock()  # the pair of models loads its two halves through open_embedder


def open_embedder(name: str, models_home: Path | None, means_file: Path | None, threads: int = 1) -> TextEmbedder:
    """The model `name`, loaded once per process; EmbedderUnavailable (one line) when it cannot be
    had. Never downloads.

    `threads`: the cores embedding may use. A bundled model's 8-bit graph is built once
    into the models folder (use_graph.py, e5_graph.py)."""
    home = models_home or default_models_home()
    key = (model_key(name, home), home, means_file, threads)  # a model fetched anew is another
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = _load(name, home, means_file, threads)
        return _LOADED[key]


def _load(name: str, home: Path, means_file: Path | None, threads: int) -> TextEmbedder:
    if name == PAIR_MODEL:
        halves = [(half, means_file and means_file.with_name(means_file.name.replace(name, half, 1))) for half in PAIR]
        return PairEmbedder(*(open_embedder(half, home, means, threads) for half, means in halves))
    if name == USE_MODEL:
        return UseEmbedder(home, threads=threads, means_file=means_file)
    if hub_models.is_bundled(name):
        return Embedder(home, name, threads=threads, means_file=means_file)
    from reme_mcp.index.semantic.models.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(name, home, threads=threads, means_file=means_file)
