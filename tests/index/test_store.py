"""store: opening, healing and rebuilding the index folder, and the latest searcher."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from reme_mcp.index import store as store_module
from reme_mcp.index.home import ensure_folder
from reme_mcp.index.schema import SCHEMA_VERSION
from reme_mcp.index.store import BuildReason, IndexStore
from reme_mcp.storage.workspace import Workspace
from tests.conftest import DAY, make_reme_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(make_reme_workspace(tmp_path / "ws"))


def new_store(ws: Workspace, tmp_path: Path) -> IndexStore:
    folder = tmp_path / "index"
    ensure_folder(folder)
    return IndexStore(ws, folder)


def test_a_missing_index_is_built_quietly_and_once(
    ws: Workspace, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = new_store(ws, tmp_path)
    assert not store.exists()
    records = store.records()
    assert set(records) == {e.path for e in ws.walk()}
    assert store.exists() and store.builds == 1
    assert IndexStore(ws, store.folder).records() == records  # a second opener reuses it
    assert "no index yet" in caplog.text  # it indexed something: said once


def test_rebuild_swaps_in_a_fresh_index_and_clears_leftovers(ws: Workspace, tmp_path: Path) -> None:
    store = new_store(ws, tmp_path)
    store.records()
    leftover = store.folder / f".index-v{SCHEMA_VERSION}.building-999999"
    leftover.mkdir()
    (store.folder / "index-v1").mkdir()  # an older schema's index
    chunks = store.rebuild(BuildReason.REQUESTED)
    assert chunks > 0 and store.builds == 2
    assert not leftover.exists() and not (store.folder / "index-v1").exists()
    assert store.searcher().doc_count() == chunks + len(store.records())


def test_a_damaged_table_of_contents_is_rebuilt(
    ws: Workspace, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = new_store(ws, tmp_path)
    expected = store.records()
    store.reset()
    for toc in store.directory.glob("*.toc"):
        toc.write_bytes(os.urandom(200))
    caplog.set_level(logging.WARNING)
    fresh = IndexStore(ws, store.folder)
    assert fresh.records() == expected
    assert fresh.builds == 1 and "the index is unreadable" in caplog.text


def test_a_file_cut_short_is_caught_before_it_is_read(ws: Workspace, tmp_path: Path) -> None:
    store = new_store(ws, tmp_path)
    store.records()
    store.reset()
    segment = max(store.directory.glob("*.seg"), key=lambda p: p.stat().st_size)
    os.truncate(segment, segment.stat().st_size - 1)
    fresh = IndexStore(ws, store.folder)
    assert set(fresh.records()) == {e.path for e in ws.walk()}
    assert fresh.builds == 1


def test_a_bug_is_not_taken_for_corruption(ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = new_store(ws, tmp_path)
    store.records()
    (ws.root / "daily" / DAY / "new.md").write_text("new", encoding="utf-8")
    store.reset()

    def broken(ix: Any, held: Any) -> Any:
        raise AttributeError("'NoneType' object has no attribute 'segment_id'")

    monkeypatch.setattr(store_module, "reader_reusing", broken)
    with pytest.raises(AttributeError):
        store.searcher()
    assert store.builds == 1  # no rebuild hid it


def test_a_vanished_folder_is_built_again(ws: Workspace, tmp_path: Path) -> None:
    store = new_store(ws, tmp_path)
    before = store.records()
    shutil.rmtree(store.folder)
    assert store.records() == before
    assert store.builds == 2


def test_a_grown_size_log_is_compacted_to_the_files_still_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    monkeypatch.setattr(store_module, "MAX_SIZES_LOG", 100)  # a few entries, not 256 KB of them
    recorded: set[str] = set()
    for n in range(12):
        (folder / f"seg{n}.seg").write_bytes(b"x" * (n + 1))
        store_module.record_sizes(folder, recorded)
        if n % 2 == 0:
            (folder / f"seg{n}.seg").unlink()  # merged away, as a commit does
    log_lines = (folder / store_module.SIZES).read_text(encoding="utf-8").splitlines()
    assert len(log_lines) < 12  # rewritten, not only appended to
    kept = store_module.committed_sizes(folder)
    assert set(kept) >= {f"seg{n}.seg" for n in range(1, 12, 2)}
    assert "seg0.seg" not in kept  # merged away before the log was rewritten
    assert all(size == int(name[3:-4]) + 1 for name, size in kept.items())
    assert [p.name for p in folder.iterdir() if ".tmp" in p.name] == []
