"""A model fetched from a hub (hub_models.py), run on the CPU by onnxruntime with its own tokenizer.

The same interface and the same language centring (centring.py) as the bundled model
(e5_embedder.py), so the stage, the fusion and their thresholds treat both alike. Imported
only by the stage's thread when such a model is chosen (`reme-mcp[semantic-hub]`):
never on the server's start path, and it never downloads (a model that is not fetched
is one line saying how to fetch it).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from reme_mcp.index.semantic.models import centring, hub_models, windows
from reme_mcp.index.semantic.models.runtime import MAX_EMBED_TOKENS, EmbedderUnavailable, by_length, padded

Vectors = centring.Vectors

# What a sentence-transformers export of its whole pipeline names its result: the text's vector
# after the pooling and any dense layers the model adds (EmbeddingGemma's two), beside the token
# vectors it lists first, which pooled here would miss those layers.
SENTENCE_OUTPUT = "sentence_embedding"


class OnnxEmbedder(centring.Centred):
    """One loaded hub model; safe for several threads at once (onnxruntime's sessions and the tokenizer are)."""

    def __init__(self, name: str, models_home: Path, threads: int = 1, means_file: Path | None = None) -> None:
        found = hub_models.fetched(models_home, name)
        if found is None:
            raise EmbedderUnavailable(hub_models.not_here(name))
        missing = hub_models.missing_files(found)
        if missing:
            raise EmbedderUnavailable(
                f"the model {name} in {found.folder} lacks {', '.join(missing)}: run reme-mcp model fetch {name} --force"
            )
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError as exc:
            raise EmbedderUnavailable(f"the hub models' runtime is not installed ({hub_models.HUB_EXTRA})") from exc
        spec = found.model
        try:
            tokenizer, session = _load(found.folder / spec.tokenizer, found.folder / spec.onnx, threads)
        except Exception as exc:  # a damaged file, an export of another shape: one line
            raise EmbedderUnavailable(f"the model {name} failed to load ({exc.__class__.__name__}: {exc})") from exc
        self._tokenizer: Any = tokenizer
        self._session: Any = session
        self._inputs = {i.name: i.type for i in session.get_inputs()}
        outputs = [o.name for o in session.get_outputs()]
        self._output = SENTENCE_OUTPUT if SENTENCE_OUTPUT in outputs else outputs[0]
        # Texts share a call when padding can be masked out, until an export says its batch
        # size is fixed at one.
        self._batches = "attention_mask" in self._inputs
        if "input_ids" not in self._inputs:
            raise EmbedderUnavailable(f"the model {name} takes no input_ids: it is not a text encoder this runs")
        self._spec = spec
        self._marks = _marks(tokenizer)
        self.name = name
        try:
            self.dim = int(self._raw(["a"], False).shape[1])
        except Exception as exc:
            raise EmbedderUnavailable(f"the model {name} failed to run ({exc.__class__.__name__}: {exc})") from exc
        if spec.dim is not None and spec.dim != self.dim:
            raise EmbedderUnavailable(f"the model {name} gives {self.dim} dimensions, its description says {spec.dim}")
        means = centring.model_means(f"{name}-{found.fingerprint}", self.dim, self._raw, means_file)
        self._passage_means, self._query_means = means

    def _raw(self, texts: list[str], is_query: bool) -> Vectors:
        """Unit vectors of texts' starts (MAX_EMBED_TOKENS), in `texts`' order."""
        prefix = self._spec.query_prefix if is_query else self._spec.passage_prefix
        return self._vectors([self._start(ids) for ids in self._encoded(texts, prefix)])

    def _raw_windows(self, texts: list[str]) -> tuple[Vectors, list[str], list[int]]:
        """Stored texts read whole: one that fits a window as _raw reads it, a longer one line
        by line (windows.py); the vectors, the text of each, and each text's number."""
        prefix = self._spec.passage_prefix
        head, tail = self._marks
        prefix_ids = (
            list(self._tokenizer.encode(prefix.strip(), add_special_tokens=False).ids) if prefix.strip() else []
        )
        planned = windows.plan(
            texts,
            self._encoded(texts, prefix),
            MAX_EMBED_TOKENS,  # the marks included
            lambda lines: [
                list(e.ids)
                for e in self._tokenizer.encode_batch([_spaced(line) for line in lines], add_special_tokens=False)
            ],
            lambda tokens: head + prefix_ids + tokens + tail,
            MAX_EMBED_TOKENS - len(head) - len(tail) - len(prefix_ids),
        )
        ids, said, counts = windows.flat(planned)
        return self._vectors(ids), said, counts

    def _encoded(self, texts: list[str], prefix: str) -> list[list[int]]:
        """Texts' token ids with the model's marks, whole."""
        return [list(e.ids) for e in self._tokenizer.encode_batch([prefix + _spaced(t) for t in texts])]

    def _start(self, ids: list[int]) -> list[int]:
        """A text's first MAX_EMBED_TOKENS tokens, its closing marks kept."""
        tail = self._marks[1]
        return ids if len(ids) <= MAX_EMBED_TOKENS else ids[: MAX_EMBED_TOKENS - len(tail)] + tail

    def _vectors(self, ids: list[list[int]]) -> Vectors:
        """Unit vectors of token ids, in order; texts of like length share a call (runtime.by_length)."""
        if not ids:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        rows: dict[int, Vectors] = {}
        for batch in by_length(ids) if self._batches else [[i] for i in range(len(ids))]:
            try:
                pooled = self._pooled([ids[i] for i in batch])
            except Exception:
                if len(batch) == 1:
                    raise
                # An export whose batch size is fixed at one: one text a call from now on.
                self._batches = False
                pooled = np.vstack([self._pooled([ids[i]]) for i in batch])
            rows.update(zip(batch, pooled, strict=True))
        out = np.vstack([rows[i] for i in range(len(ids))])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        unit: Vectors = (out / np.maximum(norms, 1e-6)).astype(np.float32)
        return unit

    def _pooled(self, rows: list[list[int]]) -> Vectors:
        ids, places = padded(rows, 0)  # the padding's id is masked out
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = places.astype(np.int64)
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        if "position_ids" in self._inputs:  # exports of decoder-born encoders (optimum's Gemma) ask for them
            feed["position_ids"] = np.broadcast_to(np.arange(ids.shape[1], dtype=np.int64), ids.shape).copy()
        feed = {k: v.astype(np.int32) if self._inputs[k] == "tensor(int32)" else v for k, v in feed.items()}
        out = np.asarray(self._session.run([self._output], feed)[0], dtype=np.float32)
        if out.ndim == 2:  # an export that pools itself
            return out
        if self._spec.pooling == "cls":
            return out[:, 0]
        weights = places[..., None]  # the mean over the real tokens
        pooled: Vectors = (out * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return pooled


# One session a model file and thread count for the whole process: onnxruntime runs one session from several
# threads at once, so the stage's two handles (embedding, questions) share the weights.
_LOADED: dict[tuple[Path, Path, int], tuple[Any, Any]] = {}
_LOCK = threading.Lock()


def _load(tokenizer_file: Path, onnx_file: Path, threads: int) -> tuple[Any, Any]:
    import onnxruntime
    from tokenizers import Tokenizer

    key = (tokenizer_file, onnx_file, threads)
    with _LOCK:
        if key not in _LOADED:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            # Whole texts: a text is cut (OnnxEmbedder._start) or read in windows (windows.py) here.
            tokenizer.no_truncation()
            tokenizer.no_padding()
            options = onnxruntime.SessionOptions()
            # The stage embeds a workspace on two threads (at the lowest priority), a question on one.
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
            _LOADED[key] = (tokenizer, session)
        return _LOADED[key]


def _spaced(text: str) -> str:
    """A text's runs of white space as one space (never empty: a tokenizer may reject that)."""
    return " ".join(text.split()) or " "


def _marks(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a text's own: [CLS] and [SEP], <s> and </s>, or none."""
    bare = list(tokenizer.encode("a", add_special_tokens=False).ids)
    marked = list(tokenizer.encode("a").ids)
    for i in range(len(marked) - len(bare) + 1):
        if marked[i : i + len(bare)] == bare:
            return marked[:i], marked[i + len(bare) :]
    return [], []
