"""Queries: a query's tokens, its weighted terms, filters, BM25 scoring, the stored fields, diversification.

The query text is analysed once (`query_tokens`) and the caller keeps the tokens
for its snippets. Which terms are scored in which fields is ranking.py's choice,
the scores are scoring.py's; here they are put together over one searcher.
A hit whose file is gone since the last sync (or whose stored path would lead
outside the workspace) is never returned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    terms = ranking.query_terms(tokens, searcher, lambda field, text: scorer.doc_frequency(searcher, field, text))
    allowed = frozenset(And(where).docs(searcher)) if where else None
    ranked, total = scorer.ranked(searcher, terms, allowed)
    read: dict[int, dict[str, Any]] = {}  # the phrase stage's reads serve the hits too

    def stored(doc: int) -> dict[str, Any]:
        if doc not in read:
            read[doc] = searcher.stored_fields(doc)
        return read[doc]

    kept = texts if texts is not None else ranking.PhraseTexts()
    best = ranking.phrase_rerank(
        ranked, lambda doc: kept.words(searcher, doc, stored), phrase, limit + SPARE_HITS, limit
    )
    hits: list[H] = []
    for docnum, score in best:
        fields = stored(docnum)
        if ws.entry(str(fields["path"])) is None:
            continue  # deleted since the last scan: never point at a missing file
        hits.append(hit(fields, score, docnum))
    return ranking.diversify(hits, limit), total


def file_with_body(ws: Workspace, searcher: Searcher, body_hash: str) -> str | None:
    """A file whose body is this content, if the index holds one that is still there."""
    for fields in searcher.documents(body_hash=body_hash):
        if ws.entry(str(fields["path"])) is not None:
            return str(fields["path"])
    return None
