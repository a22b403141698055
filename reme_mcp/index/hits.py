"""What a search finds: chunks of files, with their place, score and text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reme_mcp.storage.text import readable


@dataclass(frozen=True)
class ChunkHit:
    path: str
    start_line: int
    end_line: int
    score: float
    name: str
    description: str
    date: str | None
    content: str
    docnum: int = -1  # where the searcher that found it holds it (see MemoryIndex.following)
    meant_at: int = 0  # where in `content` the part the model found like the question starts
    by_meaning: bool = False  # brought by the semantic stage, not among the hits of the query's words


def chunk_hit(fields: dict[str, Any], score: float, docnum: int = -1) -> ChunkHit:
    # An index built by an earlier version may store a lone surrogate (storage/text.py).
    return ChunkHit(
        path=fields["path"],
        start_line=int(fields.get("start_line") or 1),
        end_line=int(fields.get("end_line") or 1),
        score=score,
        name=readable(fields.get("name") or ""),
        description=readable(fields.get("description") or ""),
        date=fields.get("date") or None,
        content=readable(fields.get("content") or ""),
        docnum=docnum,
    )


@dataclass(frozen=True)
class Arranged:
    """A hit in the order a search shows it, with what replaces it."""

    hit: ChunkHit
    superseded_by: tuple[str, ...] = ()  # the current notes replacing it (explicit: their `supersedes`)
    newer: tuple[str, ...] = ()  # newer hits stating the same fact with other values (implicit)


@dataclass(frozen=True)
class FoundHit:
    """A finished hit: its snippet cut to its share of the budget, and what the index knows of its currency."""

    hit: ChunkHit
    snippet: str
    cut: bool  # whether the snippet was cut to the budget
    superseded_by: tuple[str, ...] = ()  # the current notes that replace this one (their front matter says so)
    newer: tuple[str, ...] = ()  # newer hits that read as versions of the same fact (possibly outdated)


@dataclass(frozen=True)
class Found:
    """A search's finished hits, best first, and how many chunks matched in all."""

    hits: list[FoundHit]
    total: int
