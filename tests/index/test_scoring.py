"""The term-at-a-time scorer gives exactly the scores and order of Whoosh's own search.

The oracle is Whoosh's document-at-a-time search with its BM25F model and the
Robertson-Sparck Jones IDF, over an index of several segments with deleted
documents (edits re-index a file; small commits leave segments), with and
without a date filter, in every field the ranking queries.
"""

from __future__ import annotations

import json
import math
import random
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from whoosh.query import And, Or, Query, Term, TermRange
from whoosh.scoring import BM25F, BM25FScorer

from reme_mcp.config import load_settings
from reme_mcp.index import ranking
from reme_mcp.index.query import query_tokens
from reme_mcp.index.scoring import BM25Scorer, WeightedTerm
from reme_mcp.index.store import IndexStore
from reme_mcp.ops.memory import Memory

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "蓝鲸",
    "数据",
    "部署",
]


class _RsjScorer(BM25FScorer):  # type: ignore[misc]
    def __init__(self, searcher: Any, fieldname: str, text: str, b: float, k1: float) -> None:
        parent = searcher.get_parent()
        n, df = parent.doc_count(), parent.doc_frequency(fieldname, text)
        self.idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        self.avgfl = parent.avg_field_length(fieldname) or 1
        self.B, self.K1, self.qf = b, k1, 1
        self.setup(searcher, fieldname, text)


class _RsjBM25(BM25F):  # type: ignore[misc]
    def scorer(self, searcher: Any, fieldname: str, text: str, qf: float = 1) -> Any:
        return _RsjScorer(searcher, fieldname, text, self.B, self.K1)


def _sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, weights=[1 / (i + 1) for i in range(len(WORDS))], k=rng.randint(2, 30))
    return " ".join(words)


def _note(rng: random.Random) -> str:
    return (
        f"---\nname: {rng.choice(WORDS)}\ndescription: {_sentence(rng)}\n---\n"
        + "\n\n".join(f"## {rng.choice(WORDS)}\n{_sentence(rng)}" for _ in range(rng.randint(1, 4)))
        + "\n"
    )


def _dialog(rng: random.Random) -> str:
    return "\n".join(
        json.dumps({"id": str(i), "name": rng.choice(["user", "assistant"]), "role": "user",
                    "content": [{"type": "text", "text": _sentence(rng)}], "created_at": "2026-11-01 10:00:00"})
        for i in range(rng.randint(3, 12))
    ) + "\n"  # fmt: skip


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root = tmp_path_factory.mktemp("scoring") / "ws"
    rng = random.Random(7)
    paths: list[Path] = []
    for i in range(60):
        path = root / "daily" / f"2026-11-{i % 28 + 1:02d}" / f"note-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_note(rng), encoding="utf-8")
        paths.append(path)
    (root / "session" / "dialog").mkdir(parents=True)
    for i in range(15):
        (root / "session" / "dialog" / f"s{i}.jsonl").write_text(_dialog(rng), encoding="utf-8")
    memory = Memory(load_settings(str(root), "UTC"))
    memory.index.sync(force=True)
    # Edits in small commits: more segments, and deleted documents in each (fewer small
    # segments than segments.merge_small merges, so they stay apart).
    for round_ in range(3):
        for path in rng.sample(paths, 5):
            path.write_text(_note(rng), encoding="utf-8")
        memory.index.sync(force=True)
        memory.remember(f"{_sentence(rng)} round {round_}", date="2026-11-30")
    # A remember's index commit waits for a batch: landed between the two searchers a test
    # opens, it would give them other statistics (a few thousandths of every score apart).
    memory.finish()
    return memory


def _reference(searcher: Any, terms: list[WeightedTerm], limit: int, flt: Query | None) -> list[tuple[int, float]]:
    query = Or([Term(t.field, t.text, boost=t.boost) for t in terms])
    results = searcher.search(query, limit=limit, filter=flt, optimize=False)
    return [(hit.docnum, hit.score) for hit in results]


def _store(memory: Memory) -> IndexStore:
    """The memory's index opened as another process would, for Whoosh's own searcher."""
    return IndexStore(memory.ws, memory.index.folder)


def test_the_index_has_segments_and_deletions(memory: Memory) -> None:
    reader = _store(memory).searcher().reader()
    assert len(list(reader.leaf_readers())) >= 2
    assert reader.has_deletions()


@pytest.mark.parametrize("filtered", [False, True])
def test_scores_and_order_match_whoosh(memory: Memory, filtered: bool) -> None:
    store = _store(memory)
    searcher = store.searcher()
    oracle = store.index().searcher(weighting=_RsjBM25(B=ranking.BM25_B, K1=ranking.BM25_K1))
    scorer = BM25Scorer(ranking.BM25_K1, ranking.BM25_B)
    rng = random.Random(11)
    flt = And([TermRange("date", "2026-11-05", "2026-11-20")]) if filtered else None
    allowed = frozenset(flt.docs(searcher)) if flt is not None else None
    compared = 0
    for _ in range(40):
        tokens = query_tokens(" ".join(rng.sample(WORDS, rng.randint(1, 4))))
        terms = ranking.query_terms(tokens, searcher)
        ours, total = scorer.top(searcher, terms, 1000, allowed)
        theirs = _reference(oracle, terms, 1000, flt)
        assert total == len(theirs)
        assert [doc for doc, _ in ours] == [doc for doc, _ in theirs] or _same_up_to_ties(ours, theirs)
        for (_, a), (_, b) in zip(ours, theirs, strict=True):
            assert a == pytest.approx(b, rel=1e-5)
        compared += len(ours)
    assert compared > 1000  # the comparison covered real result lists


def _same_up_to_ties(ours: list[tuple[int, float]], theirs: list[tuple[int, float]]) -> bool:
    """Equal scores may come in either order (float sums in another order)."""

    def key(pairs: list[tuple[int, float]]) -> list[tuple[float, int]]:
        return sorted((-round(score, 4), doc) for doc, score in pairs)

    return key(ours) == key(theirs)  # fmt: skip


def test_deleted_documents_never_come_back(memory: Memory) -> None:
    searcher = _store(memory).searcher()
    deleted = {offset + doc for leaf, offset in searcher.leaf_searchers() for doc in leaf.reader().deleted_docs_set}
    assert deleted
    terms = [WeightedTerm(field, word, 1.0) for word in WORDS for field in ("content", "name", "description")]
    ours, _ = BM25Scorer(ranking.BM25_K1, ranking.BM25_B).top(searcher, terms, 10_000)
    assert ours and not deleted & {doc for doc, _ in ours}


def test_document_frequencies_match_whoosh_before_and_after_a_commit(memory: Memory) -> None:
    scorer = BM25Scorer(ranking.BM25_K1, ranking.BM25_B)
    fields = ("content", "name", "context", "when")
    for _ in range(2):  # the second time from the scorer's kept term lookups
        searcher = _store(memory).searcher()
        for word in [*WORDS, "nosuchword"]:
            for field in fields:
                assert scorer.doc_frequency(searcher, field, word) == searcher.doc_frequency(field, word)
        memory.remember(f"{' '.join(WORDS[:3])} once more", date="2026-12-01")
        memory.finish()  # a new segment: the kept lookups of the old ones must not stand in for it


def test_docs_with_every_word_are_whooshs_over_every_field_asked(memory: Memory) -> None:
    searcher = _store(memory).searcher()
    reader = searcher.reader()
    scorer = BM25Scorer(ranking.BM25_K1, ranking.BM25_B)
    deleted = {offset + doc for leaf, offset in searcher.leaf_searchers() for doc in leaf.reader().deleted_docs_set}

    def holding(word: str) -> set[int]:  # Whoosh's postings leave deleted documents out
        fields = [f for f in ("content", "name") if searcher.doc_frequency(f, word)]
        return {doc for field in fields for doc in reader.postings(field, word).all_ids()}

    words = [query_tokens(w)[0] for w in WORDS[:8]]  # as indexed ("charlie" is "charli")
    for pair in pairwise(words):
        want = holding(pair[0]) & holding(pair[1])
        assert want and scorer.docs_with_all(searcher, ("content", "name"), pair) - deleted == want
    assert scorer.docs_with_all(searcher, ("content",), [words[0], "nosuchword"]) == set()
