"""A tiny real embedding model and tokenizer, served in a model hub's file layout on 127.0.0.1.

The model is a real ONNX graph (input_ids, attention_mask -> last_hidden_state) that looks
each token up in a small matrix whose rows make chosen words alike: "automobile" lies
next to "car", "racket" next to "tennis". Everything else is the unknown token, whose row
is zero. Run by the same onnxruntime and tokenizers as a model fetched from Hugging Face.
"""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

DIM = 8
# Word -> its row. Pairs share a main direction; words of other pairs are orthogonal to it.
ROWS: dict[str, list[float]] = {
    "car": [1.0, 0, 0, 0, 0, 0, 0, 0],
    "automobile": [0.95, 0.3, 0, 0, 0, 0, 0, 0],
    "tennis": [0, 0, 1.0, 0, 0, 0, 0, 0],
    "racket": [0, 0, 0.9, 0.4, 0, 0, 0, 0],
    "peanuts": [0, 0, 0, 0, 1.0, 0, 0, 0],
    "allergic": [0, 0, 0, 0, 0.8, 0.5, 0, 0],
}
VOCAB = ["[UNK]", "[PAD]", *ROWS]


def write_model(
    folder: Path, swapped: bool = False, batch_of_one: bool = False, pipeline: bool = False, external: bool = False
) -> None:
    """onnx/model.onnx and tokenizer.json, as a repository on the hub holds them.

    `swapped`: another model of the same shape, whose car/automobile pair lies where the
    first one's tennis/racket pair lies, and the reverse. `batch_of_one`: an export whose
    batch size is fixed at one, as some are. `pipeline`: an export of a whole
    sentence-transformers pipeline, as EmbeddingGemma's are: it also asks for position_ids,
    and its token vectors come first but make no two words alike; the words' likeness is in
    its `sentence_embedding` output alone (the pooled vector after the model's dense layers).
    `external`: its weights in a file of their own beside it, onnx/model.onnx_data.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    matrix = np.zeros((len(VOCAB), DIM), dtype=np.float32)
    for word, row in ROWS.items():
        matrix[VOCAB.index(word)] = row
    if swapped:
        matrix[:, [0, 1, 2, 3]] = matrix[:, [2, 3, 0, 1]]
    batch: int | str = 1 if batch_of_one else "batch"
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["looked_up"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask_3d"]),
        helper.make_node("Mul", ["looked_up", "mask_3d"], ["last_hidden_state"]),
    ]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, "sequence"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [batch, "sequence"]),
    ]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIM])]
    initializer = [
        numpy_helper.from_array(matrix, "table"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
    ]
    if pipeline:
        # The token vectors: each word its own direction. The sentence's: the likeness table's, summed.
        nodes[0] = helper.make_node("Gather", ["distinct", "input_ids"], ["looked_up"])
        nodes += [
            helper.make_node("Gather", ["table", "input_ids"], ["alike"]),
            helper.make_node("Mul", ["alike", "mask_3d"], ["alike_masked"]),
            helper.make_node("ReduceSum", ["alike_masked", "axis1"], ["sentence_embedding"], keepdims=0),
        ]
        distinct = np.zeros_like(matrix)
        distinct[2:, : len(ROWS)] = np.eye(len(ROWS), dtype=np.float32)
        initializer += [
            numpy_helper.from_array(distinct, "distinct"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ]
        inputs.append(helper.make_tensor_value_info("position_ids", TensorProto.INT64, [batch, "sequence"]))
        outputs.append(helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", DIM]))
    graph = helper.make_graph(nodes, "tiny-encoder", inputs, outputs, initializer=initializer)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what every onnxruntime of the last years reads
    onnx.checker.check_model(model)
    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    onnx.save(
        model,
        str(folder / "onnx" / "model.onnx"),
        save_as_external_data=external,
        location="model.onnx_data",
        size_threshold=100,  # the table; the small constants shape inference reads stay inline, as in real exports
    )
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))


class _Hub(http.server.SimpleHTTPRequestHandler):
    """Files under `/{owner}/{repo}/resolve/main/`; the tokenizer of a repository named `broken` stops
    halfway, any file of a repository named `slow` trickles (a download to interrupt), and the
    files of a repository named `nolength` come without their size (the end of the connection ends them)."""

    def do_GET(self) -> None:
        if "/nolength/" in self.path:
            path = Path(self.translate_path(self.path))
            if not path.is_file():
                self.send_error(404)
                return
            self.send_response(200)
            self.end_headers()
            self.wfile.write(path.read_bytes())
            self.close_connection = True
            return
        if "/slow/" in self.path:
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                self.wfile.write(b"x" * 1000)
                for _ in range(300):
                    time.sleep(0.1)
                    self.wfile.write(b"x")
                    self.wfile.flush()
            except OSError:  # the client went away
                pass
            self.close_connection = True
            return
        if "/broken/" in self.path and self.path.endswith("/tokenizer.json"):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"{" * 1000)
            self.wfile.flush()
            self.close_connection = True
            return
        with contextlib.suppress(OSError):  # the client went away (a full disk, an interrupted fetch)
            super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve_hub(root: Path) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 over `root`, in the hub's layout; yields its address."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Hub, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
