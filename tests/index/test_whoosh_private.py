"""whoosh_private: the Whoosh internals the index relies on, checked against Whoosh's public API.

A Whoosh upgrade that changes any of them fails here first.
"""

from __future__ import annotations

import errno
import pickle
import struct
from pathlib import Path
from typing import Any

import pytest
from whoosh.fields import ID, TEXT, Schema
from whoosh.filedb.filestore import FileStorage
from whoosh.util.numeric import byte_to_length

from reme_mcp.index import whoosh_private
from reme_mcp.index.whoosh_private import DamagedIndex, abandon, is_corruption


@pytest.fixture
def ix(tmp_path: Path) -> Any:
    FileStorage(str(tmp_path)).create_index(Schema(text=TEXT(stored=True), path=ID(stored=True)))
    index = whoosh_private.open_index(tmp_path)
    words = ["alpha beta", "beta gamma gamma", "alpha " * 40, "delta"]
    for round_ in range(2):  # two segments
        writer = index.writer()
        for i, text in enumerate(words * 100):
            writer.add_document(text=text, path=f"{round_}-{i}")
        writer.commit()
    return index


def test_read_toc_is_the_latest_commit(ix: Any) -> None:
    toc = whoosh_private.read_toc(ix)
    assert toc.generation == ix.latest_generation()
    with ix.reader() as reader:
        assert [s.segment_id() for s in toc.segments] == [r.segment().segment_id() for r, _ in reader.leaf_readers()]


def test_posting_blocks_are_the_postings(ix: Any) -> None:
    with ix.searcher() as searcher:
        for reader, _ in searcher.reader().leaf_readers():
            for word in ("alpha", "beta", "gamma", "delta"):
                ids: list[int] = []
                freqs: list[float] = []
                for block_ids, block_freqs in whoosh_private.posting_blocks(reader, "text", word):
                    ids.extend(block_ids)
                    freqs.extend(block_freqs)
                matcher = reader.postings("text", word)
                assert ids == list(matcher.all_ids())
                assert freqs == [w for _, w in reader.postings("text", word).items_as("weight")]
            assert len(ids) > 64  # more than one block


def test_field_length_bytes_are_the_lengths(ix: Any) -> None:
    with ix.searcher() as searcher:
        for reader, _ in searcher.reader().leaf_readers():
            raw = whoosh_private.field_length_bytes(reader, "text")
            assert len(raw) == reader.doc_count_all()
            assert [byte_to_length(b) for b in raw] == [reader.doc_field_length(d, "text") for d in range(len(raw))]
            assert whoosh_private.field_length_bytes(reader, "path") == b""  # not scorable: no column


def test_abandon_gives_back_the_write_lock_when_cancel_fails(ix: Any) -> None:
    writer = ix.writer()
    writer.add_document(text="never committed", path="x")

    def disk_full() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    writer.fieldwriter.close = disk_full  # what a full disk does to closing the segment's files
    with pytest.raises(OSError):
        writer.cancel()  # Whoosh's own cancel: the lock stays held
    abandon(writer)
    abandon(writer)  # twice is harmless
    ix.writer(timeout=0.5).cancel()  # LockError if the lock were still held


def _raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as exc:
        return exc


@pytest.mark.parametrize(
    "error",
    [
        pickle.UnpicklingError("pickle data was truncated"),
        struct.error("unpack requires a buffer of 8 bytes"),
        EOFError("Ran out of input"),
        Exception("Block tag error b''"),
        DamagedIndex("MAIN_x.pst is 10 bytes, committed as 20"),
    ],
)
def test_storage_errors_are_corruption(error: BaseException) -> None:
    assert is_corruption(_raised(error))


@pytest.mark.parametrize(
    "error",
    [
        AttributeError("'NoneType' object has no attribute 'segment_id'"),
        KeyError("path"),
        TypeError("unsupported operand"),
        ValueError("a bug of ours"),
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EROFS, "Read-only file system"),
        OSError(errno.EINVAL, "Invalid argument"),  # not raised while decoding a file
        Exception("something else"),
    ],
)
def test_bugs_and_full_disks_are_not_corruption(error: BaseException) -> None:
    assert not is_corruption(_raised(error))


def test_a_decoder_running_out_of_bytes_is_corruption(tmp_path: Path) -> None:
    """An empty table of contents fails inside Whoosh's varint reader with a TypeError."""
    FileStorage(str(tmp_path)).create_index(Schema(text=TEXT))
    toc = next(tmp_path.glob("_MAIN_*.toc"))
    toc.write_bytes(b"")
    with pytest.raises(Exception) as raised:
        whoosh_private.open_index(tmp_path)
    assert isinstance(raised.value, TypeError) and is_corruption(raised.value)


def test_a_stored_column_deleted_under_a_reader_is_gone_not_a_bug(tmp_path: Path) -> None:
    """A folder cleared under an open index: Whoosh takes a missing column file for a column the
    segment never had, and reading stored fields fails with a TypeError that is_gone recognises."""
    FileStorage(str(tmp_path)).create_index(Schema(text=TEXT(stored=True)))
    index = whoosh_private.open_index(tmp_path)
    writer = index.writer(compound=False)  # as reme-mcp writes: a file per column
    writer.add_document(text="alpha beta")
    writer.commit()
    with index.searcher() as searcher:
        for stored in tmp_path.glob("*._stored.col"):
            stored.unlink()
        with pytest.raises(TypeError) as raised:
            searcher.stored_fields(0)
    assert whoosh_private.is_gone(raised.value)
    assert not is_corruption(raised.value)


@pytest.mark.parametrize(
    "error", [FileNotFoundError(errno.ENOENT, "gone"), NotADirectoryError(errno.ENOTDIR, "not a folder")]
)
def test_a_missing_file_or_folder_is_gone(error: BaseException) -> None:
    assert whoosh_private.is_gone(error)


def test_a_type_error_of_our_own_is_not_gone() -> None:
    nothing: Any = None
    with pytest.raises(TypeError) as raised:
        nothing[0]
    assert "'NoneType'" in str(raised.value) and not whoosh_private.is_gone(raised.value)
