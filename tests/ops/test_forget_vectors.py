"""Forgetting with search by meaning on: the forgotten file's vectors leave the store on disk,
and a dry run leaves the vectors byte for byte as they were (the real bundled model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reme_mcp.index.semantic.hook import extra_installed
from tests.ops.forget_helpers import Setup, hashes

pytestmark = pytest.mark.skipif(not extra_installed(), reason="the semantic extra is not installed")


def stored_paths(index_home: Path) -> set[str]:
    """The files every vector store under the index home holds vectors of."""
    held: set[str] = set()
    for meta in index_home.rglob("vectors-*.json"):
        held |= {f["path"] for f in json.loads(meta.read_text(encoding="utf-8"))["files"]}
    return held


def rows(index_home: Path) -> int:
    import numpy as np

    total = 0
    for meta in index_home.rglob("vectors-*.json"):
        total += int(np.load(meta.parent / json.loads(meta.read_text(encoding="utf-8"))["rows"]).shape[0])
    return total


def test_vectors_of_forgotten_files_are_dropped_and_a_dry_run_changes_none(tmp_path: Path) -> None:
    s = Setup(tmp_path, semantic="on")
    paths = s.build()  # its search waits until everything is embedded
    held = stored_paths(s.index)
    assert {paths["secret"], paths["dialog"], paths["kept"]} <= held  # the test can fail
    before, count = hashes(s.ws, s.index), rows(s.index)
    s.ok("forget", "--query", "vault unlock phrase", "--dry-run")
    assert hashes(s.ws, s.index) == before
    s.ok("forget", paths["secret"], paths["dialog"], "--yes")
    after = stored_paths(s.index)
    assert paths["secret"] not in after and paths["dialog"] not in after and paths["kept"] in after
    assert rows(s.index) < count
    # A question by meaning no longer reaches it.
    found = json.loads(s.ok("search", "what opens the staging vault?", "--json"))["results"]
    assert paths["secret"] not in {r["path"] for r in found}
