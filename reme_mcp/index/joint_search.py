"""Several workspaces' indexes searched as one ranking (a session reads its project's and the personal one).

Searched one after the other, each index paid a whole search: its phrase stage read the
candidates its own first places needed, and its hits were read, widened and arranged, though
the merged list keeps about half of them (bench/projects.py: 1.6x the time of one index of
both sizes). Here each index scores the query with its own statistics, as when searched
alone, so a hit's score means what it did; then the candidates of all are walked in one
best-first order (query.best_chunks_of), and only the share of one ranking's first places
each index holds is finished by that index (MemoryIndex.finish: its replies, versions and
arrangement, within its own workspace).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from whoosh.searching import Searcher

from reme_mcp.index import SPARE_FOR_ARRANGING, MemoryIndex, ranking
from reme_mcp.index.hits import ChunkHit, Found, chunk_hit
from reme_mcp.index.query import best_chunks_of, filters, query_tokens

T = TypeVar("T")


def find_together(
    indexes: Sequence[MemoryIndex],
    text: str,
    limit: int,
    start_date: str | None = None,
    end_date: str | None = None,
    path_prefix: str | None = None,
) -> list[Found]:
    """Each index's share of the best `limit` hits over all of them, finished, snippets left to the
    caller (cut_snippets): what MemoryIndex.find(..., max_chars=None) gives for one index."""
    distinct = len({id(index) for index in indexes}) == len(indexes)
    if len(indexes) < 2 or not distinct or any(index.semantic is not None for index in indexes):
        # The search by meaning fuses each index's own head of hits (fusion.py): searched alone.
        return [index.find(text, limit, start_date, end_date, path_prefix, None) for index in indexes]
    tokens = query_tokens(text)
    if not tokens:
        return [Found([], 0) for _ in indexes]
    where = filters(start_date, end_date, path_prefix)
    pairs = ranking.phrase_pairs(text)

    def step(searchers: list[Searcher]) -> list[tuple[list[ChunkHit], int]]:
        sources = [index.source(searcher) for index, searcher in zip(indexes, searchers, strict=True)]
        return best_chunks_of(sources, tokens, limit + SPARE_FOR_ARRANGING, where, chunk_hit, pairs)

    shares = _holding_all(indexes, step)
    return [
        index.finish(hits, total, tokens, limit, text, None)
        for index, (hits, total) in zip(indexes, shares, strict=True)
    ]


def _holding_all(indexes: Sequence[MemoryIndex], step: Callable[[list[Searcher]], T]) -> T:
    """`step` on every index's latest searcher, in the indexes' order, with all of them held.

    Held in the order of their folders, whatever order they are asked in: two searches over
    the same indexes in different orders never wait for each other.
    """
    order = sorted(range(len(indexes)), key=lambda i: str(indexes[i].folder))
    held: dict[int, Searcher] = {}

    def hold(k: int) -> T:
        if k == len(order):
            return step([held[i] for i in range(len(indexes))])

        def inner(searcher: Searcher) -> T:
            held[order[k]] = searcher
            return hold(k + 1)

        return indexes[order[k]].holding(inner)

    return hold(0)
