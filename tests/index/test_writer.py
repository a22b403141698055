"""writer: commits, the shared spool, and paths from derived state checked before they are read."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from reme_mcp.index import MemoryIndex
from reme_mcp.index.query import query_tokens
from reme_mcp.storage.workspace import Workspace
from tests.conftest import DAY, make_reme_workspace


@pytest.fixture
def index(tmp_path: Path) -> MemoryIndex:
    built = MemoryIndex(Workspace(make_reme_workspace(tmp_path / "ws")))
    built.sync()
    return built


def _found(index: MemoryIndex, text: str) -> list[str]:
    return [hit.path for hit in index.search(query_tokens(text), 5)[0]]


def test_written_files_are_indexed_and_gone_ones_dropped(index: MemoryIndex) -> None:
    root = index.ws.root
    (root / "digest" / "wiki" / "kelp.md").write_text("Kelp forests grow fast.\n", encoding="utf-8")
    (root / "digest" / "wiki" / "deploy.md").unlink()
    index.written(["digest/wiki/kelp.md", "digest/wiki/deploy.md"])
    index.flush()
    assert _found(index, "kelp forests") == ["digest/wiki/kelp.md"]
    assert "digest/wiki/deploy.md" not in index.records()


def test_paths_leading_outside_are_dropped_never_read(
    index: MemoryIndex, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "secret.md").write_text("zqsecret outside\n", encoding="utf-8")
    index.written(["../secret.md", str(tmp_path / "secret.md"), "metadata/x.md"])
    index.flush()
    assert _found(index, "zqsecret") == []
    assert caplog.text.count("not indexing") == 3


def test_writers_share_commits_and_pick_up_a_dead_writers_spool(index: MemoryIndex) -> None:
    root = index.ws.root
    (index.folder / "pending").mkdir(exist_ok=True)
    (root / "digest" / "wiki" / "orphan.md").write_text("An orphaned zqorphan page.\n", encoding="utf-8")
    (index.folder / "pending" / "1-1-1").write_text("digest/wiki/orphan.md", encoding="utf-8")  # its writer died
    paths = [f"daily/{DAY}/shared-{i}.md" for i in range(6)]
    for i, path in enumerate(paths):
        (root / path).write_text(f"Shared note zqshared{i}.\n", encoding="utf-8")
    threads = [threading.Thread(target=index.written, args=([p],)) for p in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    index.sync()  # what every search does first: it commits whatever is spooled, by any process
    for i, path in enumerate(paths):
        assert _found(index, f"zqshared{i}") == [path]
    assert _found(index, "zqorphan") == ["digest/wiki/orphan.md"]
    assert list((index.folder / "pending").iterdir()) == []
