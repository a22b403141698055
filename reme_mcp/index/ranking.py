"""Ranking: which words of a query are scored in which fields, with what weight, and the fields' text.

Kept apart from the index (which owns storage and sync) so the choices that
decide what comes first sit in one place, each with the measurement behind it
(bench/locomo.py, the LoCoMo dev split, categories 1-4).
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from collections.abc import Callable, Container, Iterable, Sequence
from itertools import islice, pairwise
from typing import Any, Protocol, TypeVar

from reme_mcp.index.analysis import _CJK_CHARS, fold, memory_analyzer
from reme_mcp.index.scoring import WeightedTerm
from reme_mcp.storage.documents import Chunk

# Field weights. A question that names a person is most often answered by that person
# (speaker), and questions say "in May 2023" (when). A note's name and description are
# derived from its first words when not given, so they weigh little: a common word in
# several titles must not outrank the one note whose body holds the rare words searched
# for; above zero, so a word found only there still finds it. Each value was chosen on
# bench/locomo.py and bench/peers.py together (docs/search-quality.md).
FIELD_BOOSTS = {"content": 1.0, "name": 0.1, "description": 0.1, "speaker": 1.0, "context": 0.5, "when": 0.5}
# How many messages each side of a dialog message are indexed as its context: an answer
# often sits a message or two from the words of the question.
CONTEXT_WINDOW = 2
# Less length normalisation than the usual 0.75: a message's context field is long or
# short by where it sits, not by what it says.
BM25_B = 0.5
BM25_K1 = 1.2
# Words in more than this share of chunks are left out of the query (see query_terms):
# in a large index they cost most of a search's time and decide little.
MAX_DF_SHARE = 0.1
# ...but only in an index this large: in a small one every word's weight counts and costs little.
MIN_PRUNE_DOCS = 500
# The context field holds each word up to four times over (once per neighbour), so its
# posting lists are long: there only words in under 2% of chunks are worth their cost.
CONTEXT_MAX_DF_SHARE = 0.02
# A single Chinese/Japanese character (the analyzer also emits the pairs around it) is
# kept in a large index's query only when it is rare: the pairs carry the meaning, a rare
# character still finds a name, and the common ones (的, 是, 数) were most of the slowest
# queries' cost.
CJK_CHAR_MAX_DF_SHARE = 0.02
# A chunk holding every adjacent pair of the query's words (a verbatim phrase) scores
# (1 + PHRASE_BOOST) times its BM25; one holding some pairs, in proportion: a phrase a
# person recalls lifts its note over notes that share a rare word in their title.
PHRASE_BOOST = 1.0
# A chunk holding the query's three or more words as written, one after another (not only each
# pair somewhere), counts this many times a chunk holding every pair: a fragment a person
# recalls word for word names its note, even beside notes whose titles hold its common words.
WHOLE_PHRASE = 3.0
# At most this many BM25 candidates are re-ranked by phrase (see phrase_rerank): more for
# a query of a few words, as a person recalls a phrase; fewer for a longer one (a question),
# whose pairs seldom stand verbatim in a chunk. Reading a candidate's text is the cost. 40, not
# the 70 it was before the walk past the pool (PAST_POOL_WALK) found a whole phrase's holders
# wherever they rank: the same recall on peers' seeds 1-4, LoCoMo and truth_check, p95 CPU -15%.
PHRASE_POOL = 40
PHRASE_POOL_LONG = 20
PHRASE_SHORT_PAIRS = 5  # at most this many pairs (six words) is a few words
# Past the pool, a short query's whole phrase is looked for among this many more BM25 candidates
# (only those holding every word are read): a phrase recalled word for word names its note even
# when its words are common ones and many notes hold them apart.
PAST_POOL_WALK = 400
# Chunks whose words PhraseTexts keeps (about 0.4 kB each).
PHRASE_CACHE = 20_000
# Words for phrase matching: each CJK character on its own (its pairs are the bigrams
# the index holds), any other run of letters and digits as one word.
_PHRASE_WORD = re.compile(rf"[{_CJK_CHARS}]|[^\W{_CJK_CHARS}]+")
# Letters that may carry an accent fold() drops (Latin, Greek, Cyrillic; NFKC composes
# them), and the combining accents NFKC leaves alone.
_ACCENTED = re.compile("[\u00c0-\u024f\u0300-\u04ff\u1e00-\u1fff]")


def _cjk_char(token: str) -> bool:
    return len(token) == 1 and ord(token) >= 0x2E80


def _cjk_only(phrase: str) -> bool:
    """Whether a phrase's words are all CJK characters, whose pairs the index holds as terms: a
    chunk holding the phrase holds every one of its bigrams, and BM25 already finds it."""
    return all(_cjk_char(word) for word in phrase.split())


def query_terms(
    tokens: Sequence[str], searcher: Any, frequency: Callable[[str, str], int] | None = None
) -> list[WeightedTerm]:
    """The query's telling terms in every searchable field, weighted by field (summed by scoring.BM25Scorer).

    A word found in a large share of all chunks says little about which one is
    meant, yet scoring its long posting list is most of a query's cost; in a
    large index it is dropped, unless every word is that common. On LoCoMo this
    kept every figure level and cut the CPU p95 of a query by about 15%. The
    context field is pruned harder (CONTEXT_MAX_DF_SHARE). `frequency(field, term)`
    gives a term's document frequency (default: the searcher's own lookup).
    """
    docs = searcher.doc_count()
    df_of = frequency if frequency is not None else searcher.doc_frequency
    context = list(tokens)
    # Each lookup visits every segment: the ones made here are handed on to the scorer.
    known: dict[tuple[str, str], int] = {}
    if docs >= MIN_PRUNE_DOCS:
        limit = MAX_DF_SHARE * docs
        df = {t: df_of("content", t) for t in tokens}
        known.update((("content", t), n) for t, n in df.items())
        kept = [t for t in tokens if df[t] <= (CJK_CHAR_MAX_DF_SHARE * docs if _cjk_char(t) else limit)]
        tokens = kept or sorted(tokens, key=df.__getitem__)[:1]
        known.update((("context", t), df_of("context", t)) for t in tokens)
        context = [t for t in tokens if known["context", t] <= CONTEXT_MAX_DF_SHARE * docs]
    return [
        WeightedTerm(field, token, boost, known.get((field, token)))
        for field, boost in FIELD_BOOSTS.items()
        if boost
        for token in (context if field == "context" else tokens)
    ]


def context_texts(chunks: Sequence[Chunk], kind: str) -> list[str]:
    """For each dialog message, the distinct terms of its neighbours, analysed, space-separated.

    A reply ("Yes, last Tuesday!") often only makes sense with the message it
    answers; scoring a message together with its neighbours finds it, while the
    hit still points at the message's own line. Other files get no context:
    their chunks are sections that stand on their own. Each message is analysed
    once here and the field only splits on spaces: analysing the neighbours' raw
    text in the field instead analyses every message five times rather than
    twice, for 0.6 points more any@5 on LoCoMo.
    """
    if kind not in ("dialog", "transcript") or CONTEXT_WINDOW <= 0:
        return [""] * len(chunks)
    analyzer = memory_analyzer()
    terms = [{t.text for t in analyzer(c.text)} for c in chunks]
    out = []
    for i in range(len(terms)):
        around: set[str] = set()
        for near in terms[max(0, i - CONTEXT_WINDOW) : i] + terms[i + 1 : i + 1 + CONTEXT_WINDOW]:
            around |= near
        out.append(" ".join(sorted(around)))
    return out


class Located(Protocol):
    """What diversification (and the query that hands it hits) needs of a hit."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def content(self) -> str: ...


H = TypeVar("H", bound=Located)


def diversify(hits: Sequence[H], limit: int) -> list[H]:
    """The best `limit` hits, with repeats of a better hit's text moved behind the rest.

    The same text stored twice (a note copied into a digest, a message repeated
    in a transcript) would show one thing twice and push other evidence out.
    Neighbouring messages are not repeats: on LoCoMo, moving hits next to a
    better hit down cost 11 points of any@5, since evidence sits beside evidence.
    """
    return [hit for _, hit in diversify_apart([(0, hit) for hit in hits], limit)]


def diversify_apart(hits: Sequence[tuple[int, H]], limit: int) -> list[tuple[int, H]]:
    """diversify over hits of several indexes, each tagged with its index: a text repeats only
    within its own index (each workspace is searched as if alone)."""
    kept: list[tuple[int, H]] = []
    later: list[tuple[int, H]] = []
    seen: set[tuple[int, str]] = set()
    for which, hit in hits:
        text = " ".join(hit.content.split()).casefold()
        if text and (which, text) in seen:
            later.append((which, hit))
        else:
            kept.append((which, hit))
            seen.add((which, text))
    return (kept + later)[:limit]


_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)


def date_words(day: str) -> str:
    """'2023-05-08' -> '2023 may 8': a date as people write it in a question."""
    if len(day) != 10 or not day[:4].isdigit() or not day[5:7].isdigit() or not day[8:].isdigit():
        return ""
    month = int(day[5:7])
    if not 1 <= month <= 12:
        return ""
    return f"{day[:4]} {_MONTHS[month - 1]} {int(day[8:])}"


def phrase_words(text: str) -> list[str]:
    """The words of a text in order, folded as the index folds them: the unit of phrase matching.

    Accents are folded only when a Latin letter that may carry one is present: the
    decomposition it takes was half the cost of a Chinese chunk's words.
    """
    if text.isascii():
        return _PHRASE_WORD.findall(text.lower())
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _PHRASE_WORD.findall(fold(folded) if _ACCENTED.search(folded) else folded)


def phrase_pairs(query: str) -> list[str]:
    """The query's adjacent word pairs, each as 'a b', without repeats."""
    words = phrase_words(query)
    return list(dict.fromkeys(f"{a} {b}" for a, b in pairwise(words)))


def whole_phrase(pairs: Sequence[str]) -> str:
    """The query's words as a spaced_words phrase (' a b c '), joined back from its phrase_pairs,
    when there are three or more (a query that repeats a pair joins back to no phrase it holds)."""
    if len(pairs) < 2:
        return ""
    return f" {pairs[0].split(' ')[0]} {' '.join(pair.split(' ')[1] for pair in pairs)} "


def spaced_words(*texts: str) -> str:
    """The texts' phrase words between single spaces, with a space at each end: ' a b c '.

    Several texts are kept apart by a '|', which no query word is, so no pair spans two.
    """
    return f" {' | '.join(' '.join(words) for text in texts if (words := phrase_words(text)))} "


def phrase_share(pairs: Sequence[str], spaced: str, whole: str = "") -> float:
    """The share of `pairs` found adjacent and in order in a spaced_words text; WHOLE_PHRASE when
    the text holds the `whole` phrase (whole_phrase) as written."""
    if not pairs:
        return 0.0
    if whole and whole in spaced:
        return WHOLE_PHRASE
    return sum(f" {pair} " in spaced for pair in pairs) / len(pairs)


class PhraseTexts:
    """Each chunk's spaced_words (its name, description and text), kept while the index generation stays the same.

    The name and description count: a note named "go-backend" holds the phrase "Go backend".

    Reading a chunk's stored text was most of the phrase stage's cost, and the same
    chunks come back as candidates query after query.
    """

    def __init__(self, capacity: int = PHRASE_CACHE) -> None:
        self.capacity = capacity
        self._generation: object = None
        self._texts: dict[int, str] = {}

    def words(self, searcher: Any, doc: int, stored: Callable[[int], dict[str, Any]] | None = None) -> str:
        """The chunk's spaced_words; `stored` reads its stored fields (default: the searcher's)."""
        generation = searcher.reader().generation()
        if generation != self._generation or len(self._texts) >= self.capacity:
            self._generation, self._texts = generation, {}
        spaced = self._texts.get(doc)
        if spaced is None:
            fields = stored(doc) if stored else searcher.stored_fields(doc)
            texts = (fields.get("name") or "", fields.get("description") or "", fields.get("content") or "")
            spaced = self._texts[doc] = spaced_words(*texts)
        return spaced


# A candidate: a document number, or (which index, document number) over several indexes.
D = TypeVar("D", int, tuple[int, int])


def phrase_rerank(
    ranked: Iterable[tuple[D, float]],
    words_of: Callable[[D], str],
    pairs: Sequence[str],
    limit: int,
    exact: int,
    pool: int | None = None,
    holding_every_word: Callable[[], Container[D]] | None = None,
) -> list[tuple[D, float]]:
    """The best `limit` of BM25's (doc, score) pairs (best first) once the phrase signal is added.

    The phrase can at most multiply a score by (1 + PHRASE_BOOST * WHOLE_PHRASE), so once the
    `exact`-th best final score beats what the next BM25 candidate could reach, no
    later one can enter the first `exact` places: the walk stops there, usually after
    a few dozen candidates, and the first `exact` results are those of re-ranking
    every match (tests/index/test_ranking.py checks that against the plain computation).
    Only when `pool` candidates did not settle them does it stop early, on BM25's order;
    except that a few words recalled as written (a short query with a whole phrase, not of CJK
    characters alone, see _cjk_only) go on past the pool to the candidates `holding_every_word()` names, the only ones that can hold
    the phrase, reading up to another `pool` of them among the next PAST_POOL_WALK.
    """
    if not pairs:
        return list(islice(ranked, limit))
    short = len(pairs) <= PHRASE_SHORT_PAIRS
    if pool is None:
        pool = PHRASE_POOL if short else PHRASE_POOL_LONG
    whole = whole_phrase(pairs)
    most = 1 + PHRASE_BOOST * (WHOLE_PHRASE if whole else 1.0)
    scored: list[tuple[float, D]] = []
    leaders: list[float] = []  # the `exact` best final scores so far, a min-heap
    past: Container[D] | None = None  # the candidates read past the pool, once it is spent
    walked = 0
    for doc, score in ranked:
        if len(scored) >= limit and leaders[0] > score * most:
            break
        if len(scored) >= max(pool, limit):
            if not (whole and short and holding_every_word) or walked >= PAST_POOL_WALK or _cjk_only(whole):
                break
            past = holding_every_word() if past is None else past
            walked += 1
            if doc not in past:
                continue
            if len(scored) >= max(pool, limit) + pool:
                break
        final = score * (1 + PHRASE_BOOST * phrase_share(pairs, words_of(doc), whole))
        scored.append((-final, doc))
        if len(leaders) < exact:
            heapq.heappush(leaders, final)
        elif final > leaders[0]:
            heapq.heapreplace(leaders, final)
    return [(doc, -negative) for negative, doc in sorted(scored)[:limit]]
