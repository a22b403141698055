"""The default bundled model's token layers as an 8-bit ONNX graph, built once from its weights and kept.

USE multilingual v3 reads a text as its tokens' rows of a word table, three n-gram
convolutions over them (two, three and five tokens wide, each two layers deep with a
residual), a normalization, then the mean over the text and a few dense layers. The
convolutions are nearly all of its work: they run here, in onnxruntime, with 8-bit
weights a column and the activations quantized per call (the CPU's integer dot-product
units), and take the texts of a call as one flat run of tokens, the window of each
token kept inside its own text by a gather index (a slot outside it reads a row of
zeros). The word table's lookup and the per-text layers stay in numpy (use_embedder.py):
they are a small share of the time, and the 65 MB table is not copied into a graph.

Against the package's own numpy forward pass, the vectors agree to a cosine of 0.998 on
average (tests/index/semantic/test_use_runtime.py), and a core embeds about two and a half times as
many texts (docs/semantic.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from reme_mcp.index.semantic.models import model_cache, onnx_graph

T = TypeVar("T")

GRAPH_VERSION = "u1"
WORD_DIM = 512  # a word table row
BRANCH_DIM = 256  # each convolution's width
# (tokens a window, of which before the token) for the three convolutions, as the model was trained.
ORDERS = ((2, 0), (3, 1), (5, 2))
BEFORE = max(before for _, before in ORDERS)
AFTER = max(n - 1 - before for n, before in ORDERS)
WINDOW = BEFORE + AFTER + 1
FEATURES = WORD_DIM + len(ORDERS) * BRANCH_DIM


def loaded(weights: Any, source: Path, folder: Path, load: Callable[[Path | bytes], T]) -> T:
    """`load` of the graph for the model whose weights (the package's loaded arrays) came from
    `source`, kept in `folder` (model_cache.py)."""
    name = f"use-m3-int8-{model_cache.fingerprint(source)}-{GRAPH_VERSION}.onnx"
    return model_cache.loaded(folder, name, lambda: bytes(_graph(weights).SerializeToString()), load)


def window_index(lengths: NDArray[np.int64]) -> NDArray[np.int64]:
    """For texts of these lengths laid end to end: each token's WINDOW positions, from BEFORE
    before it to AFTER after it; a position outside the token's own text is the row of zeros
    (the number of tokens)."""
    tokens = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    ends = np.repeat(np.cumsum(lengths), lengths)
    places = np.arange(tokens, dtype=np.int64)[:, None] + np.arange(-BEFORE, AFTER + 1, dtype=np.int64)
    inside = (places >= starts[:, None]) & (places < ends[:, None])
    return np.where(inside, places, tokens)


def _graph(w: Any) -> Any:
    """words [tokens, 512], window [tokens, WINDOW] -> features [tokens, FEATURES], normalized."""
    from onnx import TensorProto, helper

    g = onnx_graph.Builder()

    def norm(x: str, name: str, gain: NDArray[np.float32], shift: NDArray[np.float32]) -> str:
        weights = [g.const(f"{name}.g", gain.astype(np.float32)), g.const(f"{name}.b", shift.astype(np.float32))]
        return g.node("LayerNormalization", [x, *weights], axis=-1, epsilon=float(w.eps))

    def columns(x: str, name: str, start: int, stop: int) -> str:
        bounds = [
            g.const(f"{name}.{k}", np.array([v], dtype=np.int64)) for k, v in (("0", start), ("1", stop), ("a", 1))
        ]
        return g.node("Slice", [x, *bounds])

    zeros = g.const("zeros", np.zeros((1, BRANCH_DIM), dtype=np.float32))
    x = norm(g.product("words", "proj", w.proj_W, w.proj_b), "proj.ln", w.ln_g_all, w.ln_b_all)
    features = ["words"]
    for i, (n, before) in enumerate(ORDERS):
        branch = columns(x, f"x{i}", i * BRANCH_DIM, (i + 1) * BRANCH_DIM)
        window = columns("window", f"w{i}", BEFORE - before, BEFORE - before + n)
        flat = g.const(f"flat{i}", np.array([-1, n * BRANCH_DIM], dtype=np.int64))
        for layer, (matrix, bias) in enumerate(((w.w1[i], w.b1[i]), (w.w2[i], w.b2[i]))):
            padded = g.node("Concat", [branch, zeros], axis=0)
            read = g.node("Reshape", [g.node("Gather", [padded, window], axis=0), flat])
            branch = g.node("Add", [g.node("Relu", [g.product(read, f"c{i}.{layer}", matrix, bias)]), branch])
        features.append(branch)
    out = norm(g.node("Concat", features, axis=1), "ln", w.ln_g, w.ln_b)
    g.nodes.append(helper.make_node("Identity", [out], ["features"]))
    return g.model(
        "use-multilingual-v3-int8",
        [
            helper.make_tensor_value_info("words", TensorProto.FLOAT, ["tokens", WORD_DIM]),
            helper.make_tensor_value_info("window", TensorProto.INT64, ["tokens", WINDOW]),
        ],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["tokens", FEATURES])],
    )
