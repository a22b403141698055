"""What every embedding runtime shares: how much of a text a model reads, how texts share a
transformer call, a one-core onnxruntime session, and the error that turns the stage off.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from reme_mcp.index.semantic.models import centring, hub_models

# Names the vectors on disk: a change to what is embedded, or how, starts them afresh.
VECTORS_VERSION = "c8"
# What the model reads of a text at once: its cost grows with the length a call reads, so a
# question is read from its start and stored text longer than this in windows (windows.py).
MAX_EMBED_TOKENS = 96
# What a model reads of a text at most: 32 windows of 96 tokens rarely reach this far, and a
# text many times longer (a log pasted whole) costs no more to split into words.
READ_CHARS = 4096
# Texts a model call takes, sorted by length so little of a batch is padding; and the
# padded tokens one call holds at most. A call runs on one core, and small calls keep its
# activations in that core's cache: 432 tokens embedded 209 chunks a second where 768 did
# 185 (bench/semantic_perf.py's texts, two calls side by side).
BATCH_TEXTS = 8
BATCH_TOKENS = 432

Vectors = centring.Vectors


class EmbedderUnavailable(Exception):
    """The model cannot be had: the extra is not installed, or the model failed to load (one line)."""


def check_installed(name: str) -> None:
    """EmbedderUnavailable (one line) when a package that runs the bundled model `name` is not
    installed: looked for, not imported (onnx is needed only when a graph is built)."""
    missing = hub_models.missing_packages(name)
    if missing:
        raise EmbedderUnavailable(
            f"the semantic extra is incomplete ({', '.join(missing)} missing): pip install 'reme-mcp[semantic]'"
        )


def padded(rows: list[list[int]], pad: int) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Token ids of several texts as one [texts, longest] array filled out with `pad`, and the
    mask that says which places are tokens (1.0) and which padding (0.0)."""
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.float32)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1.0
    return ids, mask


def by_length(ids: list[list[int]]) -> list[list[int]]:
    """Text indexes grouped by length: at most BATCH_TEXTS texts, BATCH_TOKENS padded tokens."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # Sorted ascending, so this text is the batch's longest: the padded size is its length.
        if current and (len(current) >= BATCH_TEXTS or len(ids[i]) * (len(current) + 1) > BATCH_TOKENS):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def one_core_session(graph: Path | bytes, disabled_optimizers: Sequence[str] = ()) -> Any:
    """An onnxruntime session of a bundled model's graph (both bundled models' runtimes use it)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # A call runs on the thread that makes it, on one core (e5's _Runtime._each runs several side by side).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # Activations are freed after each call rather than kept in an arena that only grows:
    # 150 MB less resident (two sessions then), about 5% slower (docs/semantic.md).
    options.enable_cpu_mem_arena = False
    return onnxruntime.InferenceSession(
        graph if isinstance(graph, bytes) else str(graph),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(disabled_optimizers),
    )


def give_back_memory() -> None:
    """Hands the heap a call of the model freed back to the system. glibc keeps the large
    blocks that several threads freed, and a heap fragmented by one call grows on the next:
    without this, 30 calls of 128 texts ended 90-100 MB higher than with it, and the peak
    during them was 45 MB higher; the call takes 2-3 ms, against about 600 ms for the
    model's call (docs/semantic.md). glibc only: elsewhere there is no such call."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)
