"""Scoring: BM25 over the index's posting lists, one term at a time.

Whoosh scores a query document by document through a tree of matcher objects,
several Python calls per posting per term: on a 100k-chunk workspace a query
with a common word spent hundreds of milliseconds there. Here each term's
posting list is read the way Whoosh stores it, in blocks of document ids and
term frequencies, and its scores are added into one accumulator. A field's
lengths come from the segment's length column (one byte per document, read
once per segment and kept), and the BM25 length norm from a 256-entry table,
since Whoosh keeps a length as one byte.

The formula and the statistics are Whoosh's BM25F, with the Robertson-Sparck
Jones IDF (as Lucene has it) instead of Whoosh's log(N/(df+1)) + 1: Whoosh's
"+ 1" gives a word found in half of all chunks a third of the weight of a rare
one, RSJ weighs it near zero (level on LoCoMo any@k, +1.0 session@5), which
also lets ranking.query_terms leave the commonest words out for almost nothing.
tests/index/test_scoring.py checks every score against Whoosh's own search with the
same formula, so a Whoosh upgrade that changed its storage would fail there.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from whoosh.util.numeric import byte_to_length

from reme_mcp.index.whoosh_private import field_length_bytes, posting_blocks, term_info

_LENGTH_OF_BYTE = [float(byte_to_length(i)) for i in range(256)]
# Term lookups kept (a segment's terms never change): a query's words in six fields over every
# segment were a fixed cost of each search, paid again for each workspace a session reads.
TERM_INFO_CACHE = 20_000


@dataclass(frozen=True)
class WeightedTerm:
    """One word of a query in one field, with that field's weight."""

    field: str
    text: str
    boost: float
    df: int | None = None  # its document frequency, when the caller already looked it up


class BM25Scorer:
    """Top-k BM25 over a Whoosh searcher; keeps each segment's field lengths between calls."""

    def __init__(self, k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self._lengths: dict[tuple[str, str], bytes] = {}
        self._norms: dict[tuple[str, float], list[float]] = {}
        self._infos: dict[tuple[str, str, str], Any] = {}  # (segment id, field, text) -> TermInfo or None
        self._info_segments: set[str] = set()
        self._fields: dict[str, frozenset[str]] = {}  # segment id -> the fields it holds terms of

    def doc_frequency(self, searcher: Any, field: str, text: str) -> int:
        """How many documents hold the term, deletions included (as Whoosh's own doc_frequency)."""
        return sum(info.doc_frequency() for _, _, info in self._term_infos(searcher.leaf_searchers(), field, text))

    def docs_with_all(self, searcher: Any, fields: Sequence[str], words: Iterable[str]) -> set[int]:
        """The documents holding every word, each in any of `fields` (deleted ones too: never
        scored); the rarest word first, so the set only shrinks."""
        leaves = searcher.leaf_searchers()
        found: set[int] | None = None
        for word in sorted(words, key=lambda w: self.doc_frequency(searcher, fields[0], w)):
            docs: set[int] = set()
            for field in fields:
                for reader, offset, info in self._term_infos(leaves, field, word):
                    for ids, _ in posting_blocks(reader, field, word, info):
                        docs.update(map(offset.__add__, ids))
            found = docs if found is None else found & docs
            if not found:
                break
        return found or set()

    def _term_infos(self, leaves: Sequence[tuple[Any, int]], field: str, text: str) -> list[tuple[Any, int, Any]]:
        """The (reader, docnum offset, TermInfo) of each segment holding the term: one lookup per
        segment, kept, where Whoosh's doc_frequency, `in` and postings each look it up again."""
        found = []
        infos = self._infos
        for leaf, offset in leaves:
            reader = leaf.reader()
            segment = reader.segment().segment_id()
            if field not in self._segment_fields(reader, segment):
                continue  # a field no document of this segment has (no dialogs: no speaker)
            key = (segment, field, text)
            if key in infos:
                info = infos[key]
            else:
                if len(infos) >= TERM_INFO_CACHE:
                    infos.clear()
                info = infos[key] = term_info(reader, field, text)
                self._info_segments.add(key[0])
            if info is not None:
                found.append((reader, offset, info))
        return found

    def top(
        self, searcher: Any, terms: Sequence[WeightedTerm], limit: int, allowed: frozenset[int] | None = None
    ) -> tuple[list[tuple[int, float]], int]:
        """The `limit` best (docnum, score) pairs, best first, and how many documents matched.

        `allowed`, if given, is the set of document numbers a result may have (a filter).
        """
        scores = self.scores(searcher, terms, allowed)
        best = heapq.nsmallest(limit, ((-score, doc) for doc, score in scores.items()))
        return [(doc, -negative) for negative, doc in best], len(scores)

    def ranked(
        self, searcher: Any, terms: Sequence[WeightedTerm], allowed: frozenset[int] | None = None
    ) -> tuple[Iterator[tuple[int, float]], int]:
        """Every matching (docnum, score), best first (as `top` orders them), drawn lazily, and their number.

        A re-ranking stage that stops after the first few pays for a heap over the
        matches, not for sorting all of them.
        """
        scores = self.scores(searcher, terms, allowed)
        heap = [(-score, doc) for doc, score in scores.items()]
        heapq.heapify(heap)

        def best_first() -> Iterator[tuple[int, float]]:
            while heap:
                negative, doc = heapq.heappop(heap)
                yield doc, -negative

        return best_first(), len(heap)

    def scores(
        self, searcher: Any, terms: Sequence[WeightedTerm], allowed: frozenset[int] | None = None
    ) -> dict[int, float]:
        """The BM25 score of every live document matching any term (and in `allowed`, if given)."""
        docs = searcher.doc_count()
        if not docs:  # a new or emptied workspace: its index may have no segment at all
            return {}
        leaves = list(searcher.leaf_searchers())
        self._forget_other_segments([s.reader() for s, _ in leaves])
        scores: dict[int, float] = {}
        for term in terms:
            held = self._term_infos(leaves, term.field, term.text)
            df = term.df if term.df is not None else sum(info.doc_frequency() for _, _, info in held)
            if not df:
                continue
            idf = math.log(1 + (docs - df + 0.5) / (df + 0.5))
            weight = term.boost * idf * (self.k1 + 1)
            norm = self._length_norms(term.field, searcher.avg_field_length(term.field) or 1.0)
            for reader, offset, info in held:
                lengths = self._segment_lengths(reader, term.field)
                get = scores.get
                for ids, freqs in posting_blocks(reader, term.field, term.text, info):
                    for doc, tf in zip(ids, freqs, strict=True):
                        key = doc + offset
                        scores[key] = get(key, 0.0) + weight * tf / (tf + norm[lengths[doc]])
        for leaf, offset in leaves:
            for doc in leaf.reader().deleted_docs_set:
                scores.pop(doc + offset, None)
        if allowed is not None:
            scores = {doc: score for doc, score in scores.items() if doc in allowed}
        return scores

    def _segment_fields(self, reader: Any, segment: str) -> frozenset[str]:
        fields = self._fields.get(segment)
        if fields is None:
            fields = self._fields[segment] = frozenset(reader.indexed_field_names())
        return fields

    def _length_norms(self, field: str, avg: float) -> list[float]:
        """BM25's length norm for each of the 256 encoded lengths: the same for every term of a field."""
        norm = self._norms.get((field, avg))
        if norm is None:
            if len(self._norms) > 64:  # averages move with every commit: keep the recent ones
                self._norms.clear()
            norm = [self.k1 * ((1 - self.b) + self.b * length / avg) for length in _LENGTH_OF_BYTE]
            self._norms[field, avg] = norm
        return norm

    def _segment_lengths(self, reader: Any, field: str) -> bytes:
        """One byte per document of this segment: its length in `field`, as Whoosh encodes it."""
        key = (reader.segment().segment_id(), field)
        lengths = self._lengths.get(key)
        if lengths is None:
            raw = field_length_bytes(reader, field)  # documents past its end have length 0
            lengths = raw + bytes(max(0, reader.doc_count_all() - len(raw)))
            self._lengths[key] = lengths
        return lengths

    def _forget_other_segments(self, readers: list[Any]) -> None:
        live = {segment.segment_id() for r in readers if (segment := r.segment()) is not None}
        for key in [k for k in self._lengths if k[0] not in live]:
            del self._lengths[key]
        for segment in [segment for segment in self._fields if segment not in live]:
            del self._fields[segment]
        if not self._info_segments <= live:
            self._infos = {k: info for k, info in self._infos.items() if k[0] in live}
            self._info_segments &= live
