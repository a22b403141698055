"""query: tokens, filters, hits of files still there, bodies and backlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reme_mcp.index import MemoryIndex
from reme_mcp.index.query import MAX_QUERY_TOKENS, query_tokens
from reme_mcp.storage.documents import parse_document
from reme_mcp.storage.workspace import Workspace
from tests.conftest import DAY, make_reme_workspace


@pytest.fixture
def index(tmp_path: Path) -> MemoryIndex:
    built = MemoryIndex(Workspace(make_reme_workspace(tmp_path / "ws")))
    built.sync()
    return built


def test_query_tokens_are_distinct_and_capped() -> None:
    assert query_tokens("Deploy deploy DEPLOY") == query_tokens("deploy")
    assert len(query_tokens("deploy")) == 1
    many = " ".join(f"word{i}" for i in range(200))
    tokens = query_tokens(many)
    assert len(tokens) == MAX_QUERY_TOKENS and len(set(tokens)) == len(tokens)


def test_filters_by_date_and_folder(index: MemoryIndex) -> None:
    tokens = query_tokens("Go backend services")
    everywhere = {h.path for h in index.search(tokens, 10)[0]}
    assert {f"daily/{DAY}/go-backend.md", "digest/personal/languages.md"} <= everywhere
    in_digest = {h.path for h in index.search(tokens, 10, path_prefix="digest/")[0]}
    assert in_digest and all(p.startswith("digest/") for p in in_digest)
    dated = {h.path for h in index.search(tokens, 10, start_date=DAY, end_date=DAY)[0]}
    assert f"daily/{DAY}/go-backend.md" in dated and "digest/personal/languages.md" not in dated
    assert index.search(tokens, 10, start_date="2030-01-01")[0] == []


def test_a_deleted_file_is_never_a_hit(index: MemoryIndex) -> None:
    (index.ws.root / "daily" / DAY / "go-backend.md").unlink()  # not synced yet
    hits, _ = index.search(query_tokens("Go backend services"), 10)
    assert hits and f"daily/{DAY}/go-backend.md" not in {h.path for h in hits}


def test_bodies_and_backlinks(index: MemoryIndex) -> None:
    linking = sorted(path for path, record in index.records().items() if f"daily/{DAY}/go-backend.md" in record.links)
    assert linking == [f"daily/{DAY}.md", "digest/personal/languages.md"]
    assert index.find_body("no-such-hash") is None
    text = (index.ws.root / "digest" / "wiki" / "deploy.md").read_text(encoding="utf-8")
    body = parse_document("digest/wiki/deploy.md", text).body_hash
    assert index.find_body(body) == "digest/wiki/deploy.md"
    (index.ws.root / "digest" / "wiki" / "deploy.md").unlink()
    assert index.find_body(body) is None  # a file that is gone is never named


def test_a_file_damaged_while_serving_is_rebuilt_and_the_search_answered(
    index: MemoryIndex, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = query_tokens("Go backend services")
    before = [h.path for h in index.search(tokens, 5)[0]]
    for segment in index.directory.glob("*.seg"):  # the files the open searcher reads from
        os.truncate(segment, segment.stat().st_size // 3)
    assert [h.path for h in index.search(tokens, 5)[0]] == before
    assert "the index is unreadable" in caplog.text
