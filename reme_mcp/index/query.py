"""Queries: a query's tokens, its weighted terms, filters, BM25 scoring, the stored fields, diversification.

The query text is analysed once (`query_tokens`) and the caller keeps the tokens
for its snippets. Which terms are scored in which fields is ranking.py's choice,
the scores are scoring.py's; here they are put together over one searcher.
A hit whose file is gone since the last sync (or whose stored path would lead
outside the workspace) is never returned.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from whoosh.query import And, Prefix, Query, TermRange
from whoosh.searching import Searcher

from reme_mcp.index import ranking
from reme_mcp.index.analysis import memory_analyzer
from reme_mcp.index.ranking import H
from reme_mcp.index.scoring import BM25Scorer
from reme_mcp.storage.workspace import Workspace

MAX_QUERY_TOKENS = 64
# Hits scored beyond the limit, so that dropping vanished files and moving repeats back still fills it.
SPARE_HITS = 10
# Where a phrase looked for past the pool (ranking.phrase_rerank) may lie: the text, or the name a
# note is known by (a description is the text's first words when not given).
PHRASE_FIELDS = ("content", "name")


def query_tokens(text: str) -> list[str]:
    """The query's distinct analysed tokens, in order, at most MAX_QUERY_TOKENS."""
    analyzer = memory_analyzer()
    tokens: dict[str, None] = {}
    for token in analyzer(text, mode="query"):
        tokens.setdefault(token.text, None)
        if len(tokens) >= MAX_QUERY_TOKENS:
            break
    return list(tokens)


def filters(start_date: str | None, end_date: str | None, path_prefix: str | None) -> list[Query]:
    found: list[Query] = []
    if start_date or end_date:
        found.append(TermRange("date", start_date or "0000-00-00", end_date or "9999-99-99"))
    if path_prefix:
        found.append(Prefix("path", path_prefix))
    return found


@dataclass(frozen=True)
class Source:
    """One index as a search reads it: its workspace, searcher, scorer and kept phrase texts."""

    ws: Workspace
    searcher: Searcher
    scorer: BM25Scorer
    texts: ranking.PhraseTexts


def best_chunks(
    ws: Workspace,
    searcher: Searcher,
    scorer: BM25Scorer,
    tokens: list[str],
    limit: int,
    where: list[Query],
    hit: Callable[[dict[str, Any], float, int], H],
    phrase: Sequence[str] = (),
    texts: ranking.PhraseTexts | None = None,
) -> tuple[list[H], int]:
    """The `limit` best chunks for the tokens (made by `hit` from stored fields, score and docnum), and how many matched.

    `phrase`: the query's adjacent word pairs, re-ranked by ranking.phrase_rerank; `texts` keeps chunks' words.
    """
    kept = texts if texts is not None else ranking.PhraseTexts()
    return best_chunks_of([Source(ws, searcher, scorer, kept)], tokens, limit, where, hit, phrase)[0]


def best_chunks_of(
    sources: Sequence[Source],
    tokens: list[str],
    limit: int,
    where: list[Query],
    hit: Callable[[dict[str, Any], float, int], H],
    phrase: Sequence[str] = (),
) -> list[tuple[list[H], int]]:
    """The `limit` best chunks over all the sources as one ranking, as each source's share (best
    first) and how many of its chunks matched.

    Each source scores with its own statistics, as when searched alone; the phrase stage then
    walks their candidates in one best-first order, so it reads the candidates of one ranking,
    not of each source (with one source, exactly best_chunks).
    """
    streams: list[Iterator[tuple[tuple[int, int], float]]] = []
    totals: list[int] = []
    telling: list[set[str]] = []
    for i, source in enumerate(sources):
        searcher, scorer = source.searcher, source.scorer
        terms = ranking.query_terms(tokens, searcher, partial(scorer.doc_frequency, searcher))
        allowed = frozenset(And(where).docs(searcher)) if where else None
        ranked, total = scorer.ranked(searcher, terms, allowed)
        streams.append(_tagged(i, ranked))
        totals.append(total)
        telling.append({term.text for term in terms if term.field == "content"})
    candidates = streams[0] if len(streams) == 1 else heapq.merge(*streams, key=lambda c: -c[1])
    read: dict[tuple[int, int], dict[str, Any]] = {}  # the phrase stage's reads serve the hits too

    def stored(at: tuple[int, int]) -> dict[str, Any]:
        if at not in read:
            read[at] = sources[at[0]].searcher.stored_fields(at[1])
        return read[at]

    def words_of(at: tuple[int, int]) -> str:
        source = sources[at[0]]
        return source.texts.words(source.searcher, at[1], lambda doc: stored((at[0], doc)))

    def holding_every_word() -> set[tuple[int, int]]:
        """The candidates holding every telling word of the query (so perhaps its phrase)."""
        found: set[tuple[int, int]] = set()
        for i, source in enumerate(sources):
            held = source.scorer.docs_with_all(source.searcher, PHRASE_FIELDS, telling[i]) if telling[i] else set()
            found.update((i, doc) for doc in held)
        return found

    best = ranking.phrase_rerank(
        candidates, words_of, phrase, limit + SPARE_HITS, limit, holding_every_word=holding_every_word
    )
    found: list[tuple[int, H]] = []
    for (i, docnum), score in best:
        fields = stored((i, docnum))
        if sources[i].ws.entry(str(fields["path"])) is None:
            continue  # deleted since the last scan: never point at a missing file
        found.append((i, hit(fields, score, docnum)))
    shares: list[list[H]] = [[] for _ in sources]
    for i, chunk in ranking.diversify_apart(found, limit):
        shares[i].append(chunk)
    return list(zip(shares, totals, strict=True))


def _tagged(which: int, ranked: Iterator[tuple[int, float]]) -> Iterator[tuple[tuple[int, int], float]]:
    return (((which, doc), score) for doc, score in ranked)


def file_with_body(ws: Workspace, searcher: Searcher, body_hash: str) -> str | None:
    """A file whose body is this content, if the index holds one that is still there."""
    for fields in searcher.documents(body_hash=body_hash):
        if ws.entry(str(fields["path"])) is not None:
            return str(fields["path"])
    return None
