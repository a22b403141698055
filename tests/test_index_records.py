"""The index's file records follow every commit, including other processes' commits and merges.

Records are read once per segment and kept (records.RecordCache); these tests
check them, after each kind of commit by another writer, against a full read of
every record in the index.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reme_mcp.config import load_settings
from reme_mcp.index import records as records_module
from reme_mcp.index.schema import FILE_RECORD, SCHEMA_VERSION, FileRecord, file_record
from reme_mcp.index.store import IndexStore
from reme_mcp.memory import Memory
from reme_mcp.workspace import file_stamp
from tests.conftest import DAY, make_reme_workspace


def latest_searcher(memory: Memory) -> Any:
    """A searcher of the memory's index opened afresh, as another process would."""
    return IndexStore(memory.ws, memory.index.folder).searcher()


def full_read(memory: Memory) -> dict[str, FileRecord]:
    searcher = latest_searcher(memory)
    return {fields["path"]: file_record(fields) for fields in searcher.documents(kind=FILE_RECORD)}


def test_records_follow_another_writers_commits(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    writer, reader = Memory(load_settings(str(root), "UTC")), Memory(load_settings(str(root), "UTC"))
    writer.search("warm up")
    reader.search("warm up")
    note = root / "daily" / DAY / "go-backend.md"

    made = writer.remember("The walrus migration is scheduled for March.", date=DAY)
    assert made.path in reader.index.records()
    assert reader.index.records() == full_read(reader)

    note.write_text("---\nname: go-backend\n---\nNow about Rust.\n", encoding="utf-8")
    writer.index.sync(force=True)  # re-indexed: the old record is deleted in its old segment
    assert reader.index.records()[f"daily/{DAY}/go-backend.md"].stamp == file_stamp(note.stat())
    assert reader.index.records() == full_read(reader)

    note.unlink()
    writer.index.sync(force=True)  # dropped: only a deletion, no new record
    assert f"daily/{DAY}/go-backend.md" not in reader.index.records()
    assert reader.index.records() == full_read(reader)

    for i in range(40):  # enough commits for small segments to be merged, tier after tier
        writer.remember(f"Fact number {i} about the harbour.", date="2026-11-29")
        if i % 7 == 0:
            assert reader.index.records() == full_read(reader)
    segments = len(list(latest_searcher(reader).leaf_searchers()))
    assert segments < 20  # merges happened (40 commits)
    assert reader.index.records() == full_read(reader)
    assert set(reader.index.records()) == {entry.path for entry in reader.ws.walk()}  # one per file, no more


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
    assert second.index.records() == full_read(second)
    assert made.path in reads and len(reads) == 2  # only the new segment: the note and its day index

    saved.write_text('{"segments": {"MAIN_x": [[0, 1, 2]]', encoding="utf-8")  # damaged
    third = Memory(load_settings(str(root), "UTC"))
    assert third.index.records() == full_read(third)  # read from the index instead
