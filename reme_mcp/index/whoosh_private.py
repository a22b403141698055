"""Every use of Whoosh's private API, and the one place index corruption is recognised.

The index leans on Whoosh internals where its public API is too slow: reading a
segment's field lengths and posting blocks directly (scoring.py), writing a
segment from postings kept in memory (bulk_writer.py), and reading the table of
contents to reopen only changed segments (segments.py). All of it is here,
typed by the Protocols below, so a Whoosh upgrade is an audit of this file
(tests/index/test_whoosh_private.py and tests/index/test_scoring.py, tests/index/test_build.py
compare the results with Whoosh's own search and writer).

Corruption is told by the errors Whoosh's storage layer raises while decoding
its files (a truncated pickle, a short struct, a bad block tag, an unknown file
header), see `is_corruption`. A disk that is full or read-only is not corruption,
and neither is an AttributeError, TypeError or KeyError from anywhere else: those
are bugs, and rebuilding would hide them.
"""

from __future__ import annotations

import contextlib
import errno
import pickle
import struct
import zlib
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3LeafMatcher
from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.filetables import FileFormatError
from whoosh.formats import Existence
from whoosh.index import EmptyIndexError
from whoosh.index import IndexError as WhooshIndexError
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import TermNotFound
from whoosh.system import pack_uint
from whoosh.util.numeric import byte_to_length
from whoosh.writing import SegmentWriter

__all__ = [
    "DamagedIndex",
    "SegmentBuilder",
    "TableOfContents",
    "abandon",
    "field_length_bytes",
    "is_corruption",
    "is_gone",
    "open_index",
    "posting_blocks",
    "read_toc",
    "term_info",
    "write_term_postings",
]


class TableOfContents(Protocol):
    """What `_MAIN_<generation>.toc` holds."""

    schema: Any
    segments: list[Any]
    generation: int


class _ColumnReader(Protocol):
    _dbfile: Any
    _basepos: int
    _count: int


class _PerDocReader(Protocol):
    def _cached_reader(self, name: str, column: Any) -> _ColumnReader | None: ...


class _Toc(Protocol):
    def _read_toc(self) -> TableOfContents: ...


class _PostingsWriter(Protocol):
    """Whoosh 2.7's W3PostingsWriter block buffer, filled as its add_posting would."""

    _blocklimit: int
    _ids: Sequence[int]
    _weights: array[float]
    _values: list[bytes] | None
    _maxweight: float
    _minlength: float
    _maxlength: float

    def _write_block(self, last: bool = False) -> None: ...


# ---- reading --------------------------------------------------------------------------------


def open_index(directory: Path) -> Any:
    """Open the index without mmap: whoosh copies every mmapped sub-file into a BytesIO
    on open, so a 100k-chunk index cost ~600 MB of RSS and a 300 MB copy per reopen."""
    return FileStorage(str(directory), supports_mmap=False).open_index()


def read_toc(ix: Any) -> TableOfContents:
    """The latest commit's table of contents (schema, segments, generation)."""
    return cast(_Toc, ix)._read_toc()


def field_length_bytes(reader: Any, field: str) -> bytes:
    """A segment's length column for `field` as raw bytes (one per document; b"" if none).

    One read of the column's bytes: Whoosh's column.load() reads them one call per
    document, 0.1 s at 100k.
    """
    perdoc = cast(_PerDocReader, reader._perdoc)
    column = perdoc._cached_reader(f"_{field}_len", LENGTHS_COLUMN)
    if column is None:
        return b""
    return bytes(column._dbfile.get(column._basepos, column._count))


def term_info(reader: Any, field: str, text: str) -> Any | None:
    """A term's TermInfo in one segment (its document frequency, where its postings lie), None if absent."""
    try:
        return reader.term_info(field, text)
    except TermNotFound:
        return None


def posting_blocks(
    reader: Any, field: str, text: str, info: Any | None = None
) -> Iterator[tuple[Sequence[int], Sequence[float]]]:
    """A term's postings in one segment as (document ids, term frequencies) blocks, deletions included.

    `info`: its term_info in this segment when the caller has it, which spares the term's lookup.
    """
    if info is None:
        matcher = reader.postings(field, text)
    else:
        postfile = reader._terms._postfile
        matcher = reader.codec().postings_reader(postfile, info, reader.schema[field].format, term=(field, text))
    while isinstance(matcher, FilterMatcher):  # the deletion filter: deletions are dropped by the caller
        matcher = matcher.child
    if isinstance(matcher, W3LeafMatcher):
        leaf: Any = matcher
        while True:
            leaf._read_ids()
            leaf._read_weights()
            yield leaf._ids, leaf._weights
            if leaf._lastblock:
                return
            leaf._goto(leaf._nextoffset)
    ids, freqs = [], []
    while matcher.is_active():  # a short list Whoosh keeps inline with the term
        ids.append(matcher.id())
        freqs.append(matcher.weight())
        matcher.next()
    yield ids, freqs


# ---- writing --------------------------------------------------------------------------------


class SegmentBuilder(SegmentWriter):  # type: ignore[misc]
    """A SegmentWriter whose postings a subclass writes itself (`write_postings`), in one go.

    Whoosh's writer calls `_flush_segment` when it finalises the segment; here that hands
    over to the subclass's `write_postings(fieldwriter)` after closing the per-document writer.
    """

    def __init__(self, ix: Any) -> None:
        super().__init__(ix, _lk=False)  # a folder private to one build: no one to lock out

    def check_open(self) -> None:
        self._check_state()

    def document_added(self) -> None:
        """The document `self.docnum` is complete: count it, so the commit flushes the segment."""
        self._added = True
        self.docnum += 1

    def write_postings(self, fieldwriter: Any) -> None:
        raise NotImplementedError

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        self.write_postings(self.fieldwriter)
        self.fieldwriter.close()

    def finish(self) -> Any:
        """Write the segment (one compound file) and clean up; returns the segment."""
        segment = self._finalize_segment()
        self._finish()
        return segment


_LENGTH_OF_BYTE = [0, *(byte_to_length(b) for b in range(1, 256))]
_VALUES = [pack_uint(freq) for freq in range(256)]


def write_term_postings(fieldwriter: Any, postings: array[int], fmt: Any, lengths: bytearray | None) -> None:
    """One term's postings (docnum, frequency, docnum, ...) into the field writer's open term.

    Fills the postings writer's block buffer as `add_posting` would, one posting at a
    time (ids, float32 weights, value bytes, min/max length, max weight), writes each
    full block but the last and leaves the last to `finish_term`: Whoosh writes a block
    only when a next posting comes, so a full last block is written there too.
    """
    postwriter = cast(_PostingsWriter, fieldwriter._postwriter)
    step = 2 * postwriter._blocklimit
    boost = fmt.field_boost
    existence = isinstance(fmt, Existence)
    for start in range(0, len(postings), step):
        if start:
            postwriter._write_block()
        ids = postings[start : start + step : 2]
        freqs = postings[start + 1 : start + step : 2]
        postwriter._ids = ids
        postwriter._weights = array("f", [f * boost for f in freqs])
        postwriter._maxweight = max(freqs) * boost  # boost > 0 (the bulk writer checks): the largest weight
        if not existence:
            postwriter._values = [_VALUES[f] if f < 256 else pack_uint(f) for f in freqs]
        if lengths is not None:
            # add_posting skips a zero length; a document with a posting here always has one.
            block_lengths = [_LENGTH_OF_BYTE[lengths[doc]] for doc in ids]
            postwriter._minlength = min(block_lengths)
            postwriter._maxlength = max(block_lengths)


def unlocked_writer(ix: Any, **options: Any) -> Any:
    """Whoosh's writer without Whoosh's own lock file: every writer of ours already holds the
    index lock (storage.locks, which works on every OS), and Whoosh picks its lock by `os.name`,
    importing `fcntl` wherever that is not Windows, so a process without it could not write."""
    return ix.writer(_lk=False, **options)


def abandon(writer: Any) -> None:
    """Cancel a writer whose commit failed: never raises, and never keeps the index's write lock.

    Whoosh's cancel() closes the segment's files first; after a failed commit (a full
    disk) closing them fails again and the write lock stayed held, so every later
    writer waited for it and failed.
    """
    with contextlib.suppress(Exception):
        writer.cancel()
    if writer.is_closed:
        return
    with contextlib.suppress(Exception):
        writer._tempstorage.destroy()
    lock = writer.writelock
    if lock is not None:
        with contextlib.suppress(Exception):
            lock.release()
    writer.is_closed = True


# ---- corruption -----------------------------------------------------------------------------


class DamagedIndex(Exception):
    """An index file is not what was committed (store.py compares sizes before opening)."""


# Raised by the decoding of a damaged file, whatever part of it is damaged (WhooshIndexError:
# a table of contents with a bad header, version or architecture).
_STORAGE_ERRORS = (
    DamagedIndex,
    pickle.UnpicklingError,
    struct.error,
    EOFError,
    zlib.error,
    FileFormatError,
    WhooshIndexError,
)
# Whoosh's byte-level readers: a ValueError or TypeError raised in them (ord() of the empty
# read past a truncated file's end, say; a column's header byte that is no struct code, which
# struct.calcsize refuses with a UnicodeEncodeError) is a file that ended early, not a bug of ours.
_DECODERS = (
    "whoosh/filedb/structfile.py",
    "whoosh/util/varints.py",
    "whoosh/filedb/filetables.py",
    "whoosh/columns.py",
)
_PER_DOC_READER = "whoosh/codec/whoosh3.py"


def is_corruption(exc: BaseException) -> bool:
    """Whether `exc`, raised while reading the index, means its files are damaged (rebuild them)."""
    if isinstance(exc, _STORAGE_ERRORS):
        return True
    if type(exc) is Exception and str(exc).startswith("Block tag error"):  # whoosh3's posting blocks
        return True
    if isinstance(exc, OSError):
        # EINVAL: a seek or read past the end of a truncated file. Others (full or read-only
        # disk, permissions, a vanished folder) say nothing about the files' contents.
        return exc.errno == errno.EINVAL and _raised_in_decoder(exc)
    if isinstance(exc, (ValueError, TypeError, IndexError)):
        return _raised_in_decoder(exc)
    return False


def is_gone(exc: BaseException) -> bool:
    """Whether `exc`, raised while reading or writing the index, means one of its files is not there:
    the folder was cleared (by a person, a cleaner) or swapped for a rebuild since it was opened.

    Whoosh says so in several ways. A segment's value column whose file is missing is taken for a
    column the segment never had (its reader is None), and reading it fails with a TypeError."""
    if isinstance(exc, (FileNotFoundError, NotADirectoryError, EmptyIndexError)):
        return True
    return isinstance(exc, TypeError) and "'NoneType'" in str(exc) and _last_frame_in(exc).endswith(_PER_DOC_READER)


def _raised_in_decoder(exc: BaseException) -> bool:
    return _last_frame_in(exc).endswith(_DECODERS)


def _last_frame_in(exc: BaseException) -> str:
    """The file of the innermost frame of `exc`'s traceback, with forward slashes."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.replace("\\", "/")
