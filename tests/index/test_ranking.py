"""Ranking helpers: date words, neighbour context, de-duplication of repeated text and the phrase stage."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import pytest

from reme_mcp.index.analysis import _CJK_CHARS, fold
from reme_mcp.index.ranking import (
    PHRASE_BOOST,
    WHOLE_PHRASE,
    PhraseTexts,
    context_texts,
    date_words,
    diversify,
    phrase_pairs,
    phrase_rerank,
    phrase_share,
    phrase_words,
    spaced_words,
    whole_phrase,
)
from reme_mcp.storage.documents import Chunk


def test_date_words() -> None:
    assert date_words("2023-05-08") == "2023 may 8"
    assert date_words("2026-12-31") == "2026 december 31"
    assert date_words("2026-13-01") == ""
    assert date_words("") == "" and date_words("not a date") == ""


def test_context_is_the_neighbours_terms_for_dialogs_only() -> None:
    chunks = [Chunk(i, i, text) for i, text in enumerate(["alpha", "bravo", "tango", "delta", "echo"], start=1)]
    contexts = context_texts(chunks, "dialog")
    assert set(contexts[2].split()) == {"alpha", "bravo", "delta", "echo"}
    assert set(contexts[0].split()) == {"bravo", "tango"}
    assert "tango" not in contexts[2].split()  # a message's own words are not its context
    assert context_texts(chunks, "daily") == [""] * 5


@dataclass(frozen=True)
class Hit:
    path: str
    start_line: int
    end_line: int
    content: str


def test_repeated_text_moves_behind_the_rest() -> None:
    hits = [
        Hit("a.md", 1, 1, "The freeze starts Friday."),
        Hit("b.md", 4, 4, "the  freeze starts friday."),
        Hit("c.md", 2, 2, "Something else."),
        Hit("a.md", 2, 2, "Neighbouring evidence."),
    ]
    assert [h.path + str(h.start_line) for h in diversify(hits, 4)] == ["a.md1", "c.md2", "a.md2", "b.md4"]
    assert len(diversify(hits, 2)) == 2


# ---- the phrase stage: checked against the plain computation ---------------------------------

PHRASE_VOCAB = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "Echo",
    "ÉCHO",
    "foxtrot",
    "v2",
    "9",
    "朱",
    "琳",
    "为",
    "计",
    "费",
]


def _plain_share(query: str, text: str) -> float:
    """The reference: the query's adjacent word pairs, looked up in the set of the text's adjacent pairs;
    WHOLE_PHRASE when the text holds the words the pairs join back to, one after another (three or more)."""
    said = phrase_words(query)
    asked = list(dict.fromkeys((said[i], said[i + 1]) for i in range(len(said) - 1)))
    words = phrase_words(text)
    if len(asked) >= 2:
        joined = [asked[0][0], *(second for _, second in asked)]
        if any(words[i : i + len(joined)] == joined for i in range(len(words))):
            return WHOLE_PHRASE
    held = {(words[i], words[i + 1]) for i in range(len(words) - 1)}
    return sum(pair in held for pair in asked) / len(asked) if asked else 0.0


def _plain_rerank(candidates: list[tuple[int, float]], texts: dict[int, str], query: str) -> list[tuple[int, float]]:
    """The reference: every candidate's final score, all sorted."""
    finals = [(doc, score * (1 + PHRASE_BOOST * _plain_share(query, texts[doc]))) for doc, score in candidates]
    return sorted(finals, key=lambda pair: (-pair[1], pair[0]))


def _text(rng: random.Random, n: int) -> str:
    glue = ["", " ", ", ", " - ", "\n"]
    return "".join(rng.choice(PHRASE_VOCAB) + rng.choice(glue[1:] if i % 3 else glue) for i in range(n))


def test_phrase_words_split_scripts_and_fold_case_and_accents() -> None:
    assert phrase_words("Noxcynval moved the backup") == ["noxcynval", "moved", "the", "backup"]
    assert phrase_words("朱琳为计费服务写了") == list("朱琳为计费服务写了")
    assert phrase_words("ÉCHO-Delta v2.3") == ["echo", "delta", "v2", "3"]
    assert phrase_pairs("leak in the leak in") == ["leak in", "in the", "the leak"]
    assert phrase_pairs("alpha") == [] and phrase_pairs("") == []


def test_phrase_words_fold_as_the_plain_fold_does() -> None:
    """The fast path (accents folded only where a letter may carry one) against fold() on everything."""
    alphabet = "aZéÉçñßøĳﬁＡ１ й Ё ά ἄ ǅ 朱琳がガ한국 \u0301\u0308 -.,_9"
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert phrase_words(text) == re.findall(rf"[{_CJK_CHARS}]|[^\W{_CJK_CHARS}]+", fold(text)), text


def test_phrase_share_matches_the_plain_pair_lookup() -> None:
    rng = random.Random(13)
    for _ in range(2000):
        query, text = _text(rng, rng.randint(0, 5)), _text(rng, rng.randint(0, 40))
        pairs = phrase_pairs(query)
        got = phrase_share(pairs, spaced_words(text), whole_phrase(pairs))
        assert got == pytest.approx(_plain_share(query, text))


def test_no_pair_spans_two_texts() -> None:
    spaced = spaced_words("go-backend", "", "The user builds backend services in Go.")
    assert phrase_share(["go backend"], spaced) == 1.0
    assert phrase_share(["backend the"], spaced) == 0.0
    assert spaced_words("", "Alpha") == " alpha "


def test_phrase_rerank_gives_the_first_places_of_reranking_every_candidate() -> None:
    rng = random.Random(7)
    stopped_early = 0
    for _ in range(100):
        texts = {doc: _text(rng, rng.randint(1, 30)) for doc in range(rng.randint(1, 200))}
        scores = {doc: round(rng.uniform(0.1, 20.0), 3) for doc in texts}
        candidates = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
        query = _text(rng, rng.randint(2, 5))
        read: list[int] = []

        def words_of(doc: int, texts: dict[int, str] = texts, read: list[int] = read) -> str:
            read.append(doc)
            return spaced_words(texts[doc])

        exact, limit = rng.randint(1, 8), rng.randint(8, 20)
        got = phrase_rerank(iter(candidates), words_of, phrase_pairs(query), limit, exact, pool=10_000)
        want = _plain_rerank(candidates, texts, query)
        assert [doc for doc, _ in got[:exact]] == [doc for doc, _ in want[:exact]]
        assert [s for _, s in got[:exact]] == pytest.approx([s for _, s in want[:exact]])
        assert len(got) == min(limit, len(candidates))
        stopped_early += len(read) < len(candidates)
    assert stopped_early > 25  # the bound did cut the walk short, not only the pool


def test_phrase_rerank_without_pairs_keeps_bm25_order_and_reads_nothing() -> None:
    candidates = [(3, 9.0), (1, 5.0), (2, 1.0)]

    def unread(doc: int) -> str:
        raise AssertionError("no text is needed without a phrase")

    assert phrase_rerank(iter(candidates), unread, [], 2, 2) == candidates[:2]


def test_phrase_rerank_stops_at_the_pool() -> None:
    candidates = [(doc, 100.0 - doc) for doc in range(50)]
    read: list[int] = []
    phrase_rerank(iter(candidates), lambda doc: read.append(doc) or " x ", ["a b"], 5, 5, pool=12)
    assert len(read) == 12


def test_a_short_phrase_is_looked_for_past_the_pool_among_candidates_holding_every_word() -> None:
    candidates = [(doc, 100.0 - doc / 10) for doc in range(200)]
    texts = {doc: " lazy loading the websocket hub " if doc == 90 else " websocket notes " for doc in range(200)}
    read: list[int] = []

    def words_of(doc: int) -> str:
        read.append(doc)
        return texts[doc]

    pairs = phrase_pairs("loading the websocket")
    holding = {doc for doc in range(200) if doc % 10 == 0}
    got = phrase_rerank(iter(candidates), words_of, pairs, 5, 5, pool=12, holding_every_word=lambda: holding)
    assert got[0][0] == 90  # found past the pool, lifted by its whole phrase
    assert all(doc < 12 or doc in holding for doc in read)  # past the pool only those are read
    without = phrase_rerank(iter(candidates), words_of, pairs, 5, 5, pool=12)
    assert 90 not in [doc for doc, _ in without]


def test_a_long_query_stops_at_the_pool_whatever_holds_its_words() -> None:
    candidates = [(doc, 100.0 - doc) for doc in range(200)]
    read: list[int] = []
    pairs = phrase_pairs("one two three four five six seven eight")
    phrase_rerank(
        iter(candidates), lambda doc: read.append(doc) or " x ", pairs, 5, 5, pool=12, holding_every_word=lambda: {50}
    )
    assert len(read) == 12


def test_phrase_texts_are_kept_per_generation() -> None:
    class Reader:
        def __init__(self) -> None:
            self.gen = 1

        def generation(self) -> int:
            return self.gen

    class Searcher:
        def __init__(self) -> None:
            self.r, self.reads = Reader(), 0

        def reader(self) -> Reader:
            return self.r

        def stored_fields(self, doc: int) -> dict[str, str]:
            self.reads += 1
            return {"content": f"Alpha bravo {doc}"}

    searcher, texts = Searcher(), PhraseTexts(capacity=3)
    assert texts.words(searcher, 1) == " alpha bravo 1 "
    texts.words(searcher, 1)
    assert searcher.reads == 1
    searcher.r.gen = 2  # a commit: document numbers may now mean other chunks
    texts.words(searcher, 1)
    assert searcher.reads == 2
    for doc in range(2, 6):  # past the capacity the kept texts are let go
        texts.words(searcher, doc)
    reads = searcher.reads
    texts.words(searcher, 1)
    assert searcher.reads == reads + 1


def test_a_fragment_recalled_word_for_word_outranks_notes_holding_its_words_apart() -> None:
    """'compression for the session' names the one note that says it, word for word, above a
    note whose title holds 'session' and whose pairs match in part."""
    pairs = phrase_pairs("compression for the session")
    verbatim = spaced_words("job queue notes", "", "We enabled compression for the session cache.")
    apart = spaced_words("session store notes", "", "For the session we tried compression later.")
    assert phrase_share(pairs, verbatim, whole_phrase(pairs)) == WHOLE_PHRASE
    assert phrase_share(pairs, apart, whole_phrase(pairs)) < 1.0
    ranked = phrase_rerank(iter([(2, 8.0), (1, 4.0)]), {1: verbatim, 2: apart}.get, pairs, 2, 2)  # type: ignore[arg-type]
    assert [doc for doc, _ in ranked] == [1, 2]
    assert whole_phrase(phrase_pairs("two words")) == ""  # a pair is already the whole phrase
