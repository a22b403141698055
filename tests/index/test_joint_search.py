"""together: several indexes searched as one ranking, each hit found and finished by its own index."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from reme_mcp.index import MemoryIndex
from reme_mcp.index.joint_search import find_together
from reme_mcp.storage.workspace import Workspace
from tests.conftest import write

SHARED = ["deploy", "cache", "review", "backend", "release", "schedule", "budget", "python", "rollout", "latency"]


def _workspace(root: Path, own: str, seed: int) -> MemoryIndex:
    """Notes in words both workspaces use, each note also holding a word only this one has. All of
    one day: no note is a newer version of another (implicit_versions.py would regroup those), so
    what is compared is the ranking alone."""
    rng = random.Random(seed)
    for n in range(40):
        words = " ".join(rng.sample(SHARED, 4))
        write(root, f"daily/2026-11-01/note-{n}.md", f"# {own} {n}\n\n{own} note {n}: {words}.\n")
    index = MemoryIndex(Workspace(root))
    index.sync()
    return index


@pytest.fixture
def pair(tmp_path: Path) -> tuple[MemoryIndex, MemoryIndex]:
    return _workspace(tmp_path / "project", "alphaword", 1), _workspace(tmp_path / "personal", "betaword", 2)


def test_each_hit_comes_from_its_own_index_with_the_score_it_has_there(pair: tuple[MemoryIndex, MemoryIndex]) -> None:
    rng = random.Random(3)
    for _ in range(20):
        query = " ".join(rng.sample(SHARED, rng.randint(1, 3)))
        founds = find_together(pair, query, 10)
        assert sum(len(found.hits) for found in founds) >= 10  # the caller merges them and cuts to 10
        for index, own, found in zip(pair, ("alphaword", "betaword"), founds, strict=True):
            alone = {(h.hit.path, h.hit.start_line): h.hit.score for h in index.find(query, 40, max_chars=None).hits}
            for hit in found.hits:
                assert own in hit.hit.content  # read from the index that found it
                assert alone[hit.hit.path, hit.hit.start_line] == pytest.approx(hit.hit.score)


def test_the_first_places_are_those_of_one_ranking(pair: tuple[MemoryIndex, MemoryIndex]) -> None:
    query = "deploy latency python"
    founds = find_together(pair, query, 5)
    together = sorted((h.hit.score for found in founds for h in found.hits), reverse=True)
    separate = sorted((h.hit.score for index in pair for h in index.find(query, 5, max_chars=None).hits), reverse=True)
    assert together[:5] == pytest.approx(separate[:5])


def test_a_word_of_one_workspace_finds_only_its_notes(pair: tuple[MemoryIndex, MemoryIndex]) -> None:
    project, personal = find_together(pair, "betaword", 10)
    assert not project.hits
    assert personal.hits and all("betaword" in h.hit.content for h in personal.hits)


def test_asked_in_either_order_the_same_hits(pair: tuple[MemoryIndex, MemoryIndex]) -> None:
    first = find_together(pair, "review budget", 8)
    second = find_together(pair[::-1], "review budget", 8)
    assert [h.hit.path for h in first[0].hits] == [h.hit.path for h in second[1].hits]
    assert [h.hit.path for h in first[1].hits] == [h.hit.path for h in second[0].hits]
