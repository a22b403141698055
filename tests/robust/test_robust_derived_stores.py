"""Each derived store whose update fails once is back in line within seconds, in the same process (issue 50).

Proves, with real read-only bind mounts over a `Memory` that keeps running: the search index's
batched commit refused after the write was acknowledged (`doctor` says files are not indexed),
then committed by the process on its own once the folder is writable, with no search to
trigger it; and the request ledger's record refused, then written by the process on its own.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.ops.intake import check_input
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.reports import IN_LINE
from tests.conftest import DAY, make_reme_workspace
from tests.robust.test_robust_disk import mount

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts")]

WITHIN = 5.0  # seconds: the batch retries every second once a write failed (storage/batching.py)


def read_only(folder: Path) -> None:
    mount("--bind", str(folder), str(folder))
    mount("-o", "remount,bind,ro", str(folder))


def unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], check=True)


def wait_for(done: Callable[[], bool], seconds: float = WITHIN) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.05)
    return False


def test_an_index_commit_refused_once_is_caught_up_without_a_search(tmp_path: Path) -> None:
    memory = Memory(load_settings(workspace=str(make_reme_workspace(tmp_path / "ws")), timezone="UTC"))
    memory.search("Go backend services")  # the index is built
    directory = memory.index.directory
    path = memory.remember("The zqheron waits in the shallows.", date=DAY).path
    read_only(directory)  # before the batch commits it (storage/batching.py: half a second after the write)
    try:
        assert not wait_for(lambda: path in memory.index.records(), 2.0)  # the batch met the read-only folder
        behind = memory.doctor().behind
        assert isinstance(behind, dict) and "index" in behind, behind
    finally:
        memory.index.close()  # its open files would keep the mount busy
        unmount(directory)
    assert wait_for(lambda: path in memory.index.records()), "the refused commit was not made again"
    assert memory.doctor().behind == IN_LINE


def test_a_ledger_record_refused_once_is_written_by_the_same_process(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    memory = Memory(load_settings(workspace=str(root), timezone="UTC"))
    memory.remember("A first fact zqfirst.", date=DAY, request_id="first")  # the ledger's folders exist
    requests = root / "metadata" / "reme-mcp" / "requests"
    read_only(requests)
    try:
        stored = memory.remember("The zqegret stands still.", date=DAY, request_id="egret")
        assert stored.created  # the ledger is derived: the note is stored and acknowledged
        assert memory.ledger.owed == 1
        again = memory.remember("The zqegret stands still.", date=DAY, request_id="egret")
        assert again.duplicate_of == stored.path  # found on disk meanwhile
    finally:
        unmount(requests)
    assert wait_for(lambda: memory.ledger.owed == 0), "the owed record was not written"
    fresh = Memory(load_settings(workspace=str(root), timezone="UTC"))  # another process's view: the record
    note = check_input("The zqegret stands still.", None, None, DAY, None, "egret", 100_000)
    assert fresh.ledger.request(note.request_hash or "") == stored.path
