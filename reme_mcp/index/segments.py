"""Segments: which segments a new reader opens, and when the small ones incremental commits leave are merged.

Whoosh writes each commit as a new segment. A full build writes a few large
ones (build.py); every remember or sync that indexes something adds a small one.
"""

from __future__ import annotations

import math
from typing import Any

from whoosh.reading import EmptyReader, MultiReader, SegmentReader

from reme_mcp.index.whoosh_private import read_toc

MAX_SEGMENTS_PER_TIER = 6  # small segments of one size tier left unmerged (see merge_small)
SMALL_SEGMENT_DOCS = 1000


def merge_small(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge the small segments incremental commits leave, a tier at a time.

    Segments under SMALL_SEGMENT_DOCS are grouped by size (tiers of 1-7, 8-63,
    64-511 and 512+ documents); once a tier holds MAX_SEGMENTS_PER_TIER, those are
    merged into one of the next tier. So a commit rarely merges, a merge costs
    about what it merges, and the large segments of a full build are never
    rewritten by a remember. (Whoosh's MERGE_SMALL merged only while the smallest
    segments summed under a Fibonacci bound, so beside several large segments the
    small ones piled up; merging all small ones at once rewrote a growing segment.)
    """
    tiers: dict[int, list[Any]] = {}
    for segment in segments:
        docs = segment.doc_count_all()
        if docs < SMALL_SEGMENT_DOCS:
            tiers.setdefault(int(math.log(max(docs, 1), 8)), []).append(segment)
    group = next((g for _, g in sorted(tiers.items()) if len(g) >= MAX_SEGMENTS_PER_TIER), None)
    if group is None:
        return segments
    for segment in group:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        writer.add_reader(reader)
        reader.close()
    return [s for s in segments if s not in group]


def reader_reusing(ix: Any, held: Any) -> Any:
    """A reader of the latest commit that keeps the held reader's unchanged segments open.

    Opening a segment reads its term table's directory through many small reads,
    and every commit (each remember, each sync that indexed something) would
    otherwise reopen every segment. A segment whose deletions changed is opened afresh. Whoosh's own reader(reuse=...) also carries over
    segments the new commit no longer lists, so it is not used. Nothing is closed
    unless the new reader opened completely (a commit racing this one: retried).
    """
    toc = read_toc(ix)
    keep = {r.segment().segment_id(): r for r, _ in held.leaf_readers() if r.segment() is not None} if held else {}
    opened: list[Any] = []
    readers: list[Any] = []
    try:
        for segment in toc.segments:
            reader = keep.get(segment.segment_id())
            if reader is None or reader.segment().deleted_count() != segment.deleted_count():
                reader = SegmentReader(ix.storage, toc.schema, segment, generation=toc.generation)
                opened.append(reader)
            readers.append(reader)
    except BaseException:
        for reader in opened:
            reader.close()
        raise
    kept = {id(r) for r in readers}
    for reader in keep.values():
        if id(reader) not in kept:
            reader.close()
    # Always a MultiReader, even of one segment: its generation is the commit's, where a
    # kept SegmentReader still carries the generation it was opened at.
    return MultiReader(readers, generation=toc.generation) if readers else EmptyReader(toc.schema)
