"""The bulk writer: one new segment of a fresh index, written from postings kept in memory.

Whoosh's plain writer spends most of a build writing, not analysing: it
pickles every posting into external-sort runs and reads them back, and for
every posting it reads the document's field length back from the new segment
on disk. A `BulkWriter` keeps each term's postings in a compact array (only the
term keys are sorted, once) and the field lengths it already knows, then hands
Whoosh's own field writer the postings in order. The segment that comes out is
the one a plain writer makes of the same documents, in Whoosh's own file format
(tests/index/test_build.py compares them posting by posting).
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any

from whoosh.analysis import RegexTokenizer
from whoosh.fields import UnknownFieldError
from whoosh.formats import Existence, Frequency
from whoosh.util.numeric import length_to_byte

from reme_mcp.index.whoosh_private import SegmentBuilder, write_term_postings

__all__ = ["BulkWriter"]

# Values that repeat across a file's chunks (or the whole workspace) are analysed once.
MEMO_FIELDS = frozenset({"path", "kind", "date", "name", "description", "speaker", "when"})
MAX_MEMO = 20_000


class BulkWriter(SegmentBuilder):
    """Writes one new segment of a fresh index with its postings kept in memory.

    Only what this schema uses (checked up front): Frequency and Existence
    postings, no vectors, columns, spelling or boosts. Each value becomes term
    counts exactly as the format's ``word_values`` gives them (our analyzers
    never set a token boost, so a weight is the frequency times the field boost).
    """

    def __init__(self, ix: Any) -> None:
        for name, field in ix.schema.items():
            fmt = field.format if field.indexed else None
            odd_format = fmt is not None and (type(fmt) not in (Frequency, Existence) or fmt.field_boost <= 0)
            if odd_format or field.vector or field.column_type or field.separate_spelling():
                raise ValueError(f"the bulk writer cannot write the field {name!r} ({field!r})")
        super().__init__(ix)
        self._indexed: dict[str, Any] = {name: field for name, field in self.schema.items() if field.indexed}
        self._postings: dict[str, dict[bytes, array[int]]] = {name: {} for name in self._indexed}
        self._lengths: dict[str, bytearray] = {n: bytearray() for n, f in self._indexed.items() if f.scorable}
        self._memo: dict[tuple[str, str], tuple[list[tuple[bytes, int]], int]] = {}
        self.posting_count = 0

    def _analysed(self, name: str, field: Any, value: Any) -> tuple[list[tuple[bytes, int]], int]:
        """A value's (term bytes, frequency) pairs and its length (its token count, if scorable)."""
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a string (field {name})")
        memo = name in MEMO_FIELDS
        if memo and (found := self._memo.get((name, value))) is not None:
            return found
        analyzer = field.analyzer
        if isinstance(field.format, Existence):
            analysed = [(tbytes, 1) for tbytes, _, _, _ in field.index(value)], 0
        else:
            if type(analyzer) is RegexTokenizer and not analyzer.gaps and not analyzer.expression.groups:
                # A bare regex tokenizer yields its pattern's matches (the context field: ~60% of all postings).
                counts = Counter(analyzer.expression.findall(value))
            else:
                counts = Counter(t.text for t in analyzer(value, mode="index", boosts=True) if not t.stopped)
            length = sum(counts.values()) if field.scorable else 0
            analysed = [(text.encode("utf-8"), freq) for text, freq in counts.items()], length
        if memo:
            if len(self._memo) >= MAX_MEMO:
                self._memo.clear()
            self._memo[name, value] = analysed
        return analysed

    def add_document(self, **fields: Any) -> None:
        self.check_open()
        docnum = self.docnum
        perdoc = self.perdocwriter
        schema = self.schema
        perdoc.start_doc(docnum)
        # In sorted order like the plain writer, so the stored fields come out the same.
        for name in sorted(fields):
            if name.startswith("_"):
                raise ValueError(f"the bulk writer takes no boosts or custom stored values ({name})")
            value = fields[name]
            if name not in schema:
                raise UnknownFieldError(f"No field named {name!r} in {schema}")
            if value is None:
                continue
            field = schema[name]
            length = 0
            if field.indexed:
                terms, length = self._analysed(name, field, value)
                table = self._postings[name]
                for tbytes, freq in terms:
                    postings = table.get(tbytes)
                    if postings is None:
                        postings = table[tbytes] = array("I")
                    postings.append(docnum)
                    postings.append(freq)
                self.posting_count += len(terms)
                if length:
                    lengths = self._lengths[name]
                    if len(lengths) < docnum:
                        lengths.extend(bytes(docnum - len(lengths)))
                    lengths.append(length_to_byte(length))
            perdoc.add_field(name, field, value if field.stored else None, length)
        perdoc.finish_doc()
        self.document_added()

    def write_postings(self, writer: Any) -> None:
        """Postings to Whoosh's field writer in (field, term, document) order, with the lengths from memory."""
        for name in sorted(self._postings):
            table = self._postings[name]
            if not table:
                continue
            field = self._indexed[name]
            lengths = self._lengths.get(name)
            writer.start_field(name, field)
            for tbytes in sorted(table):
                writer.start_term(tbytes)
                write_term_postings(writer, table[tbytes], field.format, lengths)
                writer.finish_term()
            writer.finish_field()
            self._postings[name] = {}  # free this field's postings before the next one
