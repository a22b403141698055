"""sync: which files are compared with the index, and that every kind of change is committed."""

from __future__ import annotations

from pathlib import Path

from reme_mcp.index import MemoryIndex
from reme_mcp.index.schema import FileRecord
from reme_mcp.index.sync import stale
from reme_mcp.workspace import FileEntry, Workspace
from tests.conftest import DAY, make_reme_workspace


def _record(path: str, stamp: str) -> FileRecord:
    return FileRecord(path, stamp, "", "", ())


def test_stale_names_new_changed_and_gone_files() -> None:
    files = {"a.md": FileEntry("a.md", "1", 1), "b.md": FileEntry("b.md", "2", 1), "c.md": FileEntry("c.md", "3", 1)}
    records = {"a.md": _record("a.md", "1"), "b.md": _record("b.md", "old"), "gone.md": _record("gone.md", "9")}
    assert sorted(stale(files, records)) == ["b.md", "c.md", "gone.md"]
    assert sorted(stale(files, records, only={"a.md", "b.md", "gone.md", "never.md"})) == ["b.md", "gone.md"]
    assert stale(files, {p: _record(p, e.stamp) for p, e in files.items()}) == []


def test_each_change_is_committed_once(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    index = MemoryIndex(Workspace(root), max_scan_interval=0.0)
    assert index.sync() == 0  # the first sync builds the index: nothing left to re-index
    note = root / "daily" / DAY / "go-backend.md"
    note.write_text("---\nname: go-backend\n---\nNow about Rust.\n", encoding="utf-8")
    (root / "digest" / "wiki" / "new.md").write_text("A new page.\n", encoding="utf-8")
    (root / "digest" / "wiki" / "deploy.md").unlink()
    assert index.sync() == 3
    assert index.sync() == 0
    records = index.records()
    assert "digest/wiki/new.md" in records and "digest/wiki/deploy.md" not in records
    assert set(records) == {e.path for e in Workspace(root).walk()}


def test_another_processes_commit_is_not_indexed_again(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    ws = Workspace(root)
    first, second = MemoryIndex(ws, max_scan_interval=0.0), MemoryIndex(Workspace(root), max_scan_interval=0.0)
    first.sync()
    second.sync()
    (root / "digest" / "wiki" / "new.md").write_text("A new page.\n", encoding="utf-8")
    assert first.sync() == 1
    assert second.sync() == 0  # the records of first's commit already match the file
