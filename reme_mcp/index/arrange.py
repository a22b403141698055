"""Arranging a search's hits so the list shows the whole picture, and what is true now first.

Scoring ranks chunks one by one; the answer is a list. Four steps look at the list as a whole:

1. Neighbours merge: sections of one note whose lines touch become one range.
2. One note does not fill the list: another region of a note already shown stays only when it
   scores near that note's best; weaker repeats go behind the other files' hits.
   Dialogs are left out of both: there every message is evidence of its own, and evidence sits
   beside evidence (bench/locomo.py: merging neighbouring messages raised lines per hit from 1.35
   to 2.04, and moving a dialog's weaker repeats down cost 1 to 4.5 points of any@5).
3. A curated note (a daily note, a digest) comes before a raw dialog hit that merely repeats it.
4. Versions: a superseded note comes right after the note that replaces it (versions.py; the
   replacement is brought into the list if the query missed it), and hits that read as versions of
   one fact (version_rules.py) are shown together, newest first, the older ones marked as possibly
   outdated (implicit_versions.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import lru_cache

from reme_mcp.index.analysis import query_term_set
from reme_mcp.index.hits import Arranged, ChunkHit
from reme_mcp.index.implicit_versions import implicit_versions
from reme_mcp.index.versions import current_versions
from reme_mcp.storage.documents import is_dialog

__all__ = ["Arranged", "arrange"]

# A second region of a file stays in place when it scores at least this share of the file's best.
REPEAT_SHARE = 0.7
# A curated note goes before a dialog hit holding this share of the note's words.
REPEATED_SHARE = 0.6


def arrange(
    hits: list[ChunkHit],
    limit: int,
    by_target: Mapping[str, list[str]],
    chunk_of: Callable[[str], ChunkHit | None],
    rarity: Callable[[], Mapping[str, float]],
) -> list[Arranged]:
    """The hits in the order they are shown, at most `limit`; `by_target` is versions.superseders's map,
    `chunk_of(path)` a file's first chunk (for a replacement the query did not find), `rarity()` the
    query's analysed words with their IDF (asked only when two hits could be versions)."""
    merged = _spread(_merge_neighbours(hits))
    merged = _curated_first(merged)
    arranged = _explicit_versions(merged, by_target, chunk_of)
    return implicit_versions(arranged, rarity)[:limit]


def _merge_neighbours(hits: list[ChunkHit]) -> list[ChunkHit]:
    out: list[ChunkHit] = []
    for hit in hits:
        for i, kept in enumerate(out):
            if (
                kept.path == hit.path
                and not is_dialog(hit.path)
                and hit.start_line <= kept.end_line + 1
                and kept.start_line <= hit.end_line + 1
            ):
                first, second = (kept, hit) if kept.start_line <= hit.start_line else (hit, kept)
                inside = second.end_line <= first.end_line
                content = first.content if inside else f"{first.content}\n{second.content}"
                out[i] = replace(
                    kept,
                    start_line=first.start_line,
                    end_line=max(first.end_line, second.end_line),
                    content=content,
                    by_meaning=kept.by_meaning and hit.by_meaning,
                )
                break
        else:
            out.append(hit)
    return out


def _spread(hits: list[ChunkHit]) -> list[ChunkHit]:
    best: dict[str, float] = {}
    kept: list[ChunkHit] = []
    later: list[ChunkHit] = []
    for hit in hits:
        top = best.setdefault(hit.path, hit.score)
        (kept if is_dialog(hit.path) or hit.score >= REPEAT_SHARE * top or top <= 0 else later).append(hit)
    return kept + later


@lru_cache(maxsize=1024)
def _words(text: str) -> frozenset[str]:
    return query_term_set(text)


def _curated_first(hits: list[ChunkHit]) -> list[ChunkHit]:
    first_dialog = next((i for i, h in enumerate(hits) if is_dialog(h.path)), None)
    if first_dialog is None:
        return hits
    out = list(hits)
    for note in [h for h in hits[first_dialog + 1 :] if not is_dialog(h.path)]:
        words = _words(note.content)
        if not words:
            continue
        at = out.index(note)
        for i, other in enumerate(out[:at]):
            if is_dialog(other.path) and len(words & _words(other.content)) >= REPEATED_SHARE * len(words):
                out.insert(i, out.pop(at))
                break
    return out


def _explicit_versions(
    hits: list[ChunkHit], by_target: Mapping[str, list[str]], chunk_of: Callable[[str], ChunkHit | None]
) -> list[Arranged]:
    out = [Arranged(hit, tuple(current_versions(hit.path, by_target))) for hit in hits]
    i = 0
    while i < len(out):
        old = out[i]
        for head in old.superseded_by:
            at = next((j for j, a in enumerate(out) if a.hit.path == head), None)
            if at is not None and at > i:
                out.insert(i, out.pop(at))
                i += 1
            elif at is None:
                found = chunk_of(head)
                if found is not None:
                    out.insert(i, Arranged(replace(found, score=old.hit.score)))
                    i += 1
        i += 1
    return out
