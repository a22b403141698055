"""The index's file records follow every commit, including other processes' commits and merges.

Records are read once per segment and kept (index/records.py's RecordCache). The
first test checks them through the facade, after each kind of commit by another
writer, against the records the schema derives from the files on disk; the second
is a test of RecordCache's saved file and still reads the index's own state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reme_mcp.config import load_settings
from reme_mcp.index import records as records_module
from reme_mcp.index.schema import FILE_RECORD, SCHEMA_VERSION, FileRecord, file_documents, file_record
from reme_mcp.index.store import IndexStore
from reme_mcp.ops.memory import Memory
from reme_mcp.storage.workspace import file_stamp
from tests.conftest import DAY, make_reme_workspace


def latest_searcher(memory: Memory) -> Any:
    """A searcher of the memory's index opened afresh, as another process would."""
    return IndexStore(memory.ws, memory.index.folder).searcher()


def full_read(memory: Memory) -> dict[str, FileRecord]:
    searcher = latest_searcher(memory)
    return {fields["path"]: file_record(fields) for fields in searcher.documents(kind=FILE_RECORD)}


def as_the_files_say(memory: Memory) -> dict[str, FileRecord]:
    """The oracle: each served file's record exactly as the schema derives it from the file on disk."""
    return {e.path: file_record(next(file_documents(memory.ws, e.path))) for e in memory.ws.walk()}


def test_records_follow_another_writers_commits(tmp_path: Path) -> None:
    """The reader never syncs: what it reports comes from the writer's commits alone."""
    root = make_reme_workspace(tmp_path / "ws")
    writer, reader = Memory(load_settings(str(root), "UTC")), Memory(load_settings(str(root), "UTC"))
    writer.warm_up()
    assert reader.index.records() == as_the_files_say(writer)
    note = root / "daily" / DAY / "go-backend.md"

    made = writer.remember("The walrus migration is scheduled for March.", date=DAY)
    writer.finish()
    assert made.path in reader.index.records()
    assert reader.index.records() == as_the_files_say(writer)

    note.write_text("---\nname: go-backend\n---\nNow about Rust, see [[digest/wiki/deploy.md]].\n", encoding="utf-8")
    writer.index.sync(force=True)  # re-indexed: the old record is deleted in its old segment
    record = reader.index.records()[f"daily/{DAY}/go-backend.md"]
    assert record.stamp == file_stamp(note.stat()) and record.links == ("digest/wiki/deploy.md",)
    assert reader.index.records() == as_the_files_say(writer)

    note.unlink()
    writer.index.sync(force=True)  # dropped: only a deletion, no new record
    assert f"daily/{DAY}/go-backend.md" not in reader.index.records()
    assert reader.index.records() == as_the_files_say(writer)

    for i in range(40):  # enough commits for small segments to be merged, tier after tier
        writer.remember(f"Fact number {i} about the harbour.", date="2026-11-29")
        writer.finish()
        if i % 7 == 0:
            assert reader.index.records() == as_the_files_say(writer)
    assert reader.index.records() == as_the_files_say(writer)  # one per file, no more
    assert reader.search("harbour", limit=50).total_hits == 40


def test_a_new_process_reads_the_saved_records_not_the_index(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(records_module, "SAVE_AFTER_READING", 1)
    root = make_reme_workspace(tmp_path / "ws")
    first = Memory(load_settings(str(root), "UTC"))
    first.search("warm up")
    saved = first.index.folder / f"records-v{SCHEMA_VERSION}.json"
    assert saved.is_file() and first.index.records() == full_read(first)

    reads: list[str] = []
    real = records_module.file_record

    def counted(fields: dict[str, Any]) -> FileRecord:
        reads.append(fields["path"])
        return real(fields)

    monkeypatch.setattr(records_module, "file_record", counted)
    second = Memory(load_settings(str(root), "UTC"))
    assert second.index.records() == full_read(second)
    assert reads == []  # every record came from the saved file

    made = first.remember("The lighthouse keeper retires in June.", date=DAY)
    first.finish()
    assert second.index.records() == full_read(second)
    assert made.path in reads and len(reads) == 2  # only the new segment: the note and its day index

    saved.write_text('{"segments": {"MAIN_x": [[0, 1, 2]]', encoding="utf-8")  # damaged
    third = Memory(load_settings(str(root), "UTC"))
    assert third.index.records() == full_read(third)  # read from the index instead
