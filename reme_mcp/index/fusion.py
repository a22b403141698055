"""Fusion: the lexical ranking, joined by the semantic one, without losing a verbatim hit.

Reciprocal-rank fusion (each list adds weight / (K + rank) to a chunk) keeps the lexical
ranking the backbone: a chunk both lists rank high stays on top, and a chunk only the
model finds enters below the lexical hits that hold the query's words. Ranks, not scores,
are fused: BM25 and cosine scores are on scales that do not compare. The constants were
chosen by measuring bench/paraphrase.py and bench/locomo.py (docs/semantic.md).

Before any fusion, a lexical hit that holds the query verbatim, or every identifier in
it (a file name, a snake_case name, a version), keeps its place ahead of everything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

H = TypeVar("H")

RRF_K = 60
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0
# Below this cosine similarity (of centred vectors, language_means.py) a chunk is not offered
# at all: unrelated text scores about 0.15-0.3, a paraphrase about 0.3-0.6 (docs/semantic.md).
MIN_SIMILARITY = 0.3
MIN_VERBATIM_CHARS = 4

_IDENTIFIER = re.compile(r"[\w.-]*(?:[A-Za-z][\d_]|\d[A-Za-z_]|_|[a-z][A-Z]|\w\.\w)[\w.-]*")


def identifiers(query: str) -> list[str]:
    """The query's identifier-like words (snake_case, CamelCase, file.py, v2, OPS-12), case-folded."""
    return [m.group(0).strip(".-").casefold() for m in _IDENTIFIER.finditer(query) if len(m.group(0)) > 2]


def verbatim(content: str, query: str) -> bool:
    """Whether the chunk holds the whole query, or each of its identifiers, as written (case aside)."""
    text = " ".join(content.split()).casefold()
    whole = " ".join(query.split()).casefold()
    if len(whole) >= MIN_VERBATIM_CHARS and whole in text:
        return True
    found = identifiers(query)
    return bool(found) and all(word in text for word in found)


def fuse(
    lexical: Sequence[H],
    semantic: Sequence[tuple[str, float]],
    key: Callable[[H], str],
    content: Callable[[H], str],
    query: str,
) -> list[tuple[str, float]]:
    """Chunk ids best first, with their fused score: verbatim lexical hits first, then by fused rank.

    `lexical`: hits best first; `semantic`: (chunk id, cosine similarity) best first.
    """
    scores: dict[str, float] = {}
    first: list[str] = []
    for rank, hit in enumerate(lexical, start=1):
        chunk = key(hit)
        scores[chunk] = scores.get(chunk, 0.0) + LEXICAL_WEIGHT / (RRF_K + rank)
        if verbatim(content(hit), query):
            first.append(chunk)
    for rank, (chunk, similarity) in enumerate(semantic, start=1):
        if similarity < MIN_SIMILARITY:
            break
        scores[chunk] = scores.get(chunk, 0.0) + SEMANTIC_WEIGHT / (RRF_K + rank)
    ahead = set(first)
    rest = sorted((c for c in scores if c not in ahead), key=lambda c: -scores[c])
    return [(c, scores[c]) for c in [*first, *rest]]
