"""The index's spool refusing a write's entry leaves nothing behind (issue 50).

Proves, with a real read-only bind mount over the spool (`pending/` in the index's private
folder) under a `Memory` that keeps running: a `remember` whose paths the spool cannot take is
committed before it is answered, so it is found by search at once and `doctor` never names
the index behind while the spool still refuses writes; once it takes writes again, the next write is
batched through it as before and committed by the process on its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.reports import IN_LINE
from tests.conftest import DAY, make_reme_workspace
from tests.robust.test_robust_derived_stores import read_only, unmount, wait_for

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts")]


def test_a_spool_that_refuses_an_entry_leaves_nothing_behind(tmp_path: Path) -> None:
    memory = Memory(load_settings(workspace=str(make_reme_workspace(tmp_path / "ws")), timezone="UTC"))
    memory.remember("A first fact zqfirst.", date=DAY)  # the spool folder exists
    memory.search("zqfirst")
    spool = memory.index.directory.parent / "pending"
    assert spool.is_dir()
    read_only(spool)
    try:
        path = memory.remember("The zqcurlew probes the mud.", date=DAY).path
        assert path in memory.index.records()  # committed before the answer: no batch owed it
        assert [h.path for h in memory.search("zqcurlew").results][:1] == [path]
        behind = memory.doctor().behind
        assert "index" not in behind, behind  # (the day index may wait for its burst's batch: a second)
        assert wait_for(lambda: memory.doctor().behind == IN_LINE), memory.doctor().behind
    finally:
        unmount(spool)
    later = memory.remember("The zqgodwit feeds at low tide.", date=DAY).path
    assert wait_for(lambda: later in memory.index.records()), "the batched commit was not made"
    assert not [p for p in spool.iterdir() if not p.name.startswith(".")]  # its entry taken
    assert memory.doctor().behind == IN_LINE
