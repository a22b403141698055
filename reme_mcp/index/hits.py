"""What a search finds: chunks of files, with their place, score and text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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


def chunk_hit(fields: dict[str, Any], score: float, docnum: int = -1) -> ChunkHit:
    return ChunkHit(
        path=fields["path"],
        start_line=int(fields.get("start_line") or 1),
        end_line=int(fields.get("end_line") or 1),
        score=score,
        name=fields.get("name") or "",
        description=fields.get("description") or "",
        date=fields.get("date") or None,
        content=fields.get("content") or "",
        docnum=docnum,
    )


@dataclass(frozen=True)
class Found:
    """A search's finished hits, best first: each with its snippet, cut to its share of the budget."""

    hits: list[tuple[ChunkHit, str, bool]]  # the hit, its snippet, whether the snippet was cut
    total: int
