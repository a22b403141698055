"""What the bundled models' graph builders share: naming nodes and weights, and 8-bit products.

Both models' weights become ONNX graphs here (e5_graph.py, use_graph.py) that onnxruntime
runs on the CPU's integer dot-product units. Imported only while a graph is built, once a
machine: `onnx` is needed for nothing else.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

OPSET = 17
# The file format's version, stamped as the oldest that carries OPSET: `onnx` stamps its own
# newest, which an older onnxruntime refuses to load ("Unsupported model IR version"), and
# the newest onnxruntime for an Intel Mac is older than the newest onnx for it.
IR_VERSION = 8


class Builder:
    """A graph in the making: its nodes, each named after its place, and its weights."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self._helper, self._numpy = helper, numpy_helper
        self.nodes: list[Any] = []
        self.weights: list[Any] = []

    def const(self, name: str, value: NDArray[Any]) -> str:
        self.weights.append(self._numpy.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        out = f"n{len(self.nodes)}"
        self.nodes.append(self._helper.make_node(op, inputs, [out], domain=domain, **attrs))
        return out

    def eight_bits(self, name: str, matrix: NDArray[np.float32]) -> tuple[str, str]:
        """A product's matrix [in, out] as 8-bit weights and a float scale a column (symmetric)."""
        scale = np.maximum(np.abs(matrix).max(axis=0), 1e-12) / 127.0
        q = self.const(f"{name}.q", np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8))
        return q, self.const(f"{name}.s", scale.astype(np.float32))

    def product(self, x: str, name: str, matrix: NDArray[np.float32], bias: NDArray[np.float32]) -> str:
        """x @ M + b, M [in, out]: 8-bit weights a column, the activations quantized per call."""
        q, s = self.eight_bits(name, matrix)
        b = self.const(f"{name}.b", np.asarray(bias, dtype=np.float32))
        return self.node("DynamicQuantizeMatMul", [x, q, s, "", b], domain="com.microsoft")

    def model(self, name: str, inputs: list[Any], outputs: list[Any]) -> Any:
        """The graph with the standard and onnxruntime's operator sets."""
        graph = self._helper.make_graph(self.nodes, name, inputs, outputs, self.weights)
        opsets = [self._helper.make_opsetid("", OPSET), self._helper.make_opsetid("com.microsoft", 1)]
        return self._helper.make_model(graph, opset_imports=opsets, producer_name="reme-mcp", ir_version=IR_VERSION)
