"""sync: which files are compared with the index, and that every kind of change is committed."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from reme_mcp.index import MemoryIndex
from reme_mcp.index import writer as writer_module
from reme_mcp.index.query import query_tokens
from reme_mcp.index.schema import FileRecord
from reme_mcp.index.sync import BULK_AT, stale
from reme_mcp.storage.workspace import FileEntry, Workspace
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


def _notes(root: Path, count: int) -> None:
    for k in range(count):
        (root / "digest" / "wiki" / f"page-{k}.md").write_text(f"Page {k} is about zqpage{k}.\n", encoding="utf-8")


def test_a_workspace_restored_in_place_is_not_indexed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cp -a` back (new inodes, same times) is unchanged; new times on the same bytes (a checkout, an
    extracted archive) only restamp the records; no file is parsed again either way."""
    root = make_reme_workspace(tmp_path / "ws")
    _notes(root, 30)
    index = MemoryIndex(Workspace(root), max_scan_interval=0.0)
    index.sync()
    backup = tmp_path / "backup"
    subprocess.run(["cp", "-a", str(root), str(backup)], check=True)
    shutil.rmtree(root)
    subprocess.run(["cp", "-a", str(backup), str(root)], check=True)

    def parsed_again(*args: object) -> None:
        raise AssertionError(f"a file was parsed again: {args[1:]}")

    monkeypatch.setattr(writer_module, "file_documents", parsed_again)
    assert index.sync() == 0  # same mtimes and sizes: nothing to do
    later = time.time() + 100
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (later, later))
    files = sum(1 for _ in Workspace(root).walk())
    assert index.sync() == files  # every record restamped, in one commit
    assert index.sync() == 0
    assert {r.stamp for r in index.records().values()} <= {e.stamp for e in Workspace(root).walk()}
    assert [hit.path for hit in index.search(query_tokens("zqpage7"), limit=3)[0]] == ["digest/wiki/page-7.md"]


def test_most_files_really_changed_are_built_whole(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    _notes(root, BULK_AT + 20)
    index = MemoryIndex(Workspace(root), max_scan_interval=0.0)
    index.sync()
    for k in range(BULK_AT + 20):
        (root / "digest" / "wiki" / f"page-{k}.md").write_text(f"Page {k} now says zqnew{k}.\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="reme_mcp.index"):
        index.sync()
    assert any("most files changed" in r.getMessage() for r in caplog.records), caplog.text
    assert [hit.path for hit in index.search(query_tokens("zqnew5"), limit=3)[0]] == ["digest/wiki/page-5.md"]
    assert not index.search(query_tokens("zqpage5"), limit=3)[0]
