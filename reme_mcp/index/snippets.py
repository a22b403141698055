"""Snippets: a hit's text cut to a budget around where the query matched.

Beside the analyzer because "where the query matched" is the analyzer's answer: the
chunk is analysed as it was indexed, and the first token that is one of the query's
terms gives the character offset to centre on. Searching the raw text for the terms
cannot work: the query "Café résumé" analyses to `cafe`, `resum`, which occur nowhere
in "café ... résumé" as written, while the analyzer's offsets point right at them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from reme_mcp.index.analysis import memory_analyzer
from reme_mcp.index.hits import FoundHit
from reme_mcp.index.query import query_tokens

# Analysing costs about 0.4 ms per 1,000 characters, and a chunk without any query term in its
# text (it matched by its name or its neighbours) is analysed to the end: a dialog message can be
# one very long line. Past this many characters the snippet keeps the start instead.
MAX_SCAN_CHARS = 32_768
# No snippet is cut shorter than this, however many hits share the budget.
MIN_SNIPPET_CHARS = 80


def first_match(text: str, terms: Collection[str]) -> int | None:
    """The character offset of the first token of `text` that is one of the analysed `terms`."""
    if not terms:
        return None
    for token in memory_analyzer()(text, chars=True, mode="index"):
        if token.text in terms:
            return int(token.startchar)
    return None


def snippet(text: str, terms: Collection[str], budget: int, meant_at: int = 0) -> tuple[str, bool]:
    """The text cut to `budget` characters, a quarter of it before the first match, else before
    `meant_at` (where the part the model found like the question starts); whether it was cut."""
    if len(text) <= budget:
        return text, False
    anchor = first_match(text[:MAX_SCAN_CHARS], terms)
    if anchor is None:
        anchor = min(max(0, meant_at), len(text))
    start = max(0, min(anchor - budget // 4, len(text) - budget))
    piece = text[start : start + budget]
    return ("…" if start else "") + piece + ("…" if start + budget < len(text) else ""), True


def cut_snippets(hits: list[FoundHit], text: str, max_chars: int) -> list[FoundHit]:
    """Each hit's snippet cut around the query's match to an equal share of `max_chars`: for
    one index's hits, or for hits of several workspaces merged into one list."""
    share = max(MIN_SNIPPET_CHARS, max_chars // max(1, len(hits)))
    terms = frozenset(query_tokens(text))
    finished = []
    for found in hits:
        piece, cut = snippet(found.hit.content, terms, share, found.hit.meant_at)
        finished.append(dataclasses.replace(found, snippet=piece, cut=cut))
    return finished
