"""Fusion: the lexical ranking, joined by the semantic one, without losing a verbatim hit.

Reciprocal-rank fusion (each list adds weight / (K + rank) to a chunk) keeps the lexical
ranking the backbone: a chunk both lists rank high stays on top, and a chunk only the
model finds enters below the lexical hits that hold the query's words. Ranks, not scores,
are fused: BM25 and cosine scores are on scales that do not compare. The constants were
chosen by measuring bench/paraphrase.py and bench/locomo.py (docs/semantic.md).

Before any fusion, a lexical hit that holds the query verbatim, or every identifier in
it (a file name, a snake_case name, a version), keeps its place ahead of everything else.
Without one, the fused ranking and the model's own ranking of notes take turns: a fusion of
ranks alone let a note the model ranked first fall behind the words' near-misses on the notes
people write (docs/semantic.md, "Fusion").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from reme_mcp.index.analysis import memory_analyzer
from reme_mcp.index.semantic.models.trust import E5_TRUST, Trust

H = TypeVar("H")

RRF_K = 60
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0
# A query held verbatim keeps its lexical place from this width: a wide (CJK) character counts
# two, as it is printed, since two of them name a thing as four Latin letters do ("优化",
# "port"). Peers' harness with the stage on, Chinese recall@5: seeds 1 / 2 0.980 / 0.973 ->
# 0.987 / 0.980 (its misses were 3-character fragments the model reordered).
MIN_VERBATIM_WIDTH = 4
# The lexical stage is weak below WEAK (its best hit holds under 15% of the query's IDF
# weight: a paraphrase's hits in bench/paraphrase.py, 95th percentile 0.13) and strong from
# STRONG (LoCoMo's questions: 5th percentile 0.24), with a short ramp between. A ramp of
# 0.15-0.30 cost LoCoMo 1.5 points of any@5 (docs/semantic.md).
WEAK, STRONG = 0.15, 0.20
# The model's weight when the lexical stage is strong: none, so the results are the lexical
# ones exactly (0.1 and 0.25 cost LoCoMo 0.4 and 2.4 points of any@5).
SEMANTIC_WEIGHT_STRONG = 0.0


# A note takes the model's turn from this share of the model's floor: the floor, measured on
# generated paraphrases, held back the cross-language paraphrases of hand-written notes (cosine
# 0.21-0.25 with the default model). realws-dev by meaning 0.625 -> 0.667, bench/paraphrase.py
# --per-section 4 seeds 7/8 0.647/0.673 -> 0.693/0.680; no floor at all measured the same.
TURN_FLOOR = 0.8

# The order of turns (0: the model's notes, 1: the fused ranking). Two to the model: on notes
# people write, a note the model ranks fourth is still the answer more often than the words'
# third near-miss (realws-dev by meaning, the model alone 0.750: one turn each 0.667, two 0.708,
# MRR 0.395 -> 0.415; USE 0.583 -> 0.667, e5-small 0.625 -> 0.583; paraphrase and LoCoMo, with
# or without notes beside its dialogs, unchanged).
MODEL_FIRST, FUSED_FIRST = (0, 0, 1), (1, 0, 0)

# Only the first RERANK_DEPTH of a strong lexical stage's hits are reordered by meaning
# (models/trust.py: each model's weight for it).
RERANK_DEPTH = 20


def lexical_strength(best_coverage: float) -> float:
    """0 when the lexical stage found little of the query, 1 when it found its words."""
    return _ramp(best_coverage, WEAK, STRONG)


def doubted(strength: float, model_best: float, lexical_best: float, trust: Trust = E5_TRUST) -> float:
    """The lexical stage's strength, faded where the model finds a chunk much more like the
    question (cosine `model_best`) than any lexical hit (`lexical_best`)."""
    return strength * (1.0 - _ramp(model_best - lexical_best, *trust.doubt))


def _ramp(value: float, low: float, high: float) -> float:
    return min(1.0, max(0.0, (value - low) / (high - low)))


_IDENTIFIER = re.compile(r"[\w.-]*(?:[A-Za-z][\d_]|\d[A-Za-z_]|_|[a-z][A-Z]|\w\.\w)[\w.-]*")


def identifiers(query: str) -> list[str]:
    """The query's identifier-like words (snake_case, CamelCase, file.py, v2, OPS-12), case-folded."""
    return [m.group(0).strip(".-").casefold() for m in _IDENTIFIER.finditer(query) if len(m.group(0)) > 2]


def verbatim(content: str, query: str) -> bool:
    """Whether the chunk holds the whole query, or each of its identifiers, as written (case aside)."""
    text = " ".join(content.split()).casefold()
    whole = " ".join(query.split()).casefold()
    if _width(whole) >= MIN_VERBATIM_WIDTH and whole in text:
        return True
    found = identifiers(query)
    return bool(found) and all(word in text for word in found)


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def coverage(content: str, idf: dict[str, float]) -> float:
    """The share of the query's weight (its tokens' IDF) that the chunk's text holds.

    A paraphrase's lexical hits match only its function words ("my", "的"): low weight. A hit
    holding the query's names and rare words is the lexical stage at its best, and keeps it.
    """
    total = sum(idf.values())
    if total <= 0:
        return 1.0
    held = {t.text for t in memory_analyzer()(content)}
    return sum(w for token, w in idf.items() if token in held) / total


def fuse(
    lexical: Sequence[H],
    semantic: Sequence[tuple[str, float]],
    key: Callable[[H], str],
    content: Callable[[H], str],
    query: str,
    covered: Sequence[float] | None = None,
    similar: Mapping[str, float] | None = None,
    trust: Trust = E5_TRUST,
    takes_turns: Callable[[str], bool] = lambda chunk: True,
    file_of: Callable[[str], str] = lambda chunk: chunk.rpartition("#")[0],
    judged: Mapping[str, float] | None = None,
) -> list[tuple[str, float]]:
    """Chunk ids best first, with their fused score: verbatim lexical hits first; else the fused
    ranking and the model's ranking of the chunks `takes_turns` allows, in turn.

    `lexical`: hits best first; `semantic`: (chunk id, cosine similarity) best first; `covered`:
    each lexical hit's coverage (`coverage`), by which the lexical stage's strength is known;
    `similar`: the cosine similarity of lexical hits to the question, by chunk id (the reordering,
    and the model's doubt of the lexical stage: `doubted`); `trust`: the model's own scale;
    `judged`: the cosines the reordering goes by, where the model judges by another vector than
    the question's (else `similar`).
    """
    scores: dict[str, float] = {}
    first: list[str] = []
    covered = list(covered) if covered is not None else [1.0] * len(lexical)
    strong = lexical_strength(max(covered, default=0.0))
    if similar and semantic:
        shown = (similar.get(key(hit), 0.0) for hit in lexical[:RERANK_DEPTH])
        strong = doubted(strong, semantic[0][1], max(shown, default=0.0), trust)
    # Weak lexical hits (a paraphrase's, matching function words) count by the square of what
    # they hold: at a coverage of 0.06, 1/61 would move the model's ranking by four places.
    # Strong ones rank as the lexical stage ranked them.
    semantic_weight = SEMANTIC_WEIGHT * (1.0 - strong) + SEMANTIC_WEIGHT_STRONG * strong
    for rank, (hit, held) in enumerate(zip(lexical, covered, strict=True), start=1):
        chunk = key(hit)
        share = (1.0 - strong) * held**2 + strong
        scores[chunk] = scores.get(chunk, 0.0) + LEXICAL_WEIGHT * share / (RRF_K + rank)
        if similar and trust.rerank and rank <= RERANK_DEPTH:
            # The lexical stage's best hit keeps its place (it counts as if the model agreed
            # fully): reordering it too cost LoCoMo 0.03 of MRR for the same recall.
            agreed = 1.0 if rank == 1 else (judged or similar).get(chunk, 0.0)
            scores[chunk] += strong * trust.rerank * agreed
        if verbatim(content(hit), query):
            first.append(chunk)
    for rank, (chunk, similarity) in enumerate(semantic, start=1):
        if similarity < trust.floor or semantic_weight <= 0:
            break  # a strong lexical stage answers alone: its results exactly
        scores[chunk] = scores.get(chunk, 0.0) + semantic_weight / (RRF_K + rank)
    ahead = set(first)
    rest = sorted((c for c in scores if c not in ahead), key=lambda c: -scores[c])
    if first:
        return [(c, scores[c]) for c in [*first, *rest]]
    # No hit holds the question as written: the model's own ranking of notes takes turns with
    # the fused one, leading it where the words found little, so a note the model ranks first
    # is never pushed out by the words' near-misses (realws-dev: fused recall by meaning
    # 0.33-0.38 -> 0.63). Not a dialog's messages: the model judges which message answers a
    # question worse than the words do (LoCoMo: any@5 1.5-2 points lower when they took turns).
    meant = [chunk for chunk, similarity in semantic if similarity >= TURN_FLOOR * trust.floor and takes_turns(chunk)]
    order = take_turns(rest, meant, strong < 1.0, file_of)
    return [(c, scores.get(c, 0.0)) for c in order]


def take_turns(
    fused: Sequence[str], meant: Sequence[str], meant_first: bool, file_of: Callable[[str], str]
) -> list[str]:
    """The fused ranking and the model's, the model's taking two turns to the fused one's (the
    model's first when `meant_first`, else the fused one's: F M M, M M F), each chunk once; what is
    left of the fused ranking follows, then of the model's. The model's turn passes over a chunk
    of a file already shown, so a second section of one note does not take the next note's turn;
    the fused ranking keeps its order (a dialog's neighbouring messages are evidence together)."""
    out: list[str] = []
    seen: set[str] = set()
    files: set[str] = set()
    lists = [(meant, True), (fused, False)]
    at = [0, 0]
    while at[0] < len(meant) or at[1] < len(fused):
        for turn in MODEL_FIRST if meant_first else FUSED_FIRST:
            ranked, by_file = lists[turn]
            while at[turn] < len(ranked) and (
                ranked[at[turn]] in seen or (by_file and file_of(ranked[at[turn]]) in files)
            ):
                at[turn] += 1
            if at[turn] < len(ranked):
                chunk = ranked[at[turn]]
                at[turn] += 1
                out.append(chunk)
                seen.add(chunk)
                files.add(file_of(chunk))
    return out + [chunk for chunk in meant if chunk not in seen]
