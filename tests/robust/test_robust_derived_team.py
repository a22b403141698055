"""The team sync's record of its last sync, refused once, is written by the same process on its own (issue 50).

Proves, with real git, a bare remote on local disk and a real read-only bind mount over the
sync's state folder, through the `Memory` operations a server runs: a sync that fails (its
remote gone) while its record cannot be written is not shown by `doctor` as the earlier sync
that worked: `doctor` shows the failure and names the record behind; once the folder takes
writes again the process writes the record on its own within seconds, with no other sync,
and `doctor` says nothing is behind. A sync that works while the folder refuses writes is
caught up the same way.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.reports import IN_LINE
from reme_mcp.team.status import STATUS
from tests.conftest import DAY, make_reme_workspace
from tests.robust.test_robust_derived_stores import read_only, unmount, wait_for
from tests.team.team_git import bare_remote, git, isolate_git

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts")]


def on_disk(root: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((root / "metadata" / "reme-mcp" / "sync" / STATUS).read_text())
    return state


def test_a_sync_record_refused_once_is_written_by_the_same_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(tmp_path, monkeypatch)
    remote = bare_remote(tmp_path)
    root = make_reme_workspace(tmp_path / "ws")
    memory = Memory(load_settings(workspace=str(root), timezone="UTC"))
    memory.team_sync(init=str(remote), interactive=False)
    worked = on_disk(root)
    assert worked["error"] is None and worked["went_out"] > 0
    folder = root / "metadata" / "reme-mcp" / "sync"

    read_only(folder)
    try:
        remote.rename(tmp_path / "moved.git")  # the remote gone: this sync fails
        with pytest.raises(ReMeError):
            memory.team_sync(interactive=False)
        assert on_disk(root) == worked  # the refused record: the disk still says the last sync worked
        report = memory.doctor()
        assert isinstance(report.sync, dict) and report.sync["error"], report.sync  # ... doctor does not
        assert isinstance(report.behind, dict) and "sync" in report.behind, report.behind
    finally:
        unmount(folder)
    assert wait_for(lambda: on_disk(root)["error"] is not None), "the refused record was not written"
    assert on_disk(root)["last_sync"] == worked["last_sync"]  # the last sync that worked is kept
    assert memory.doctor().behind == IN_LINE

    (tmp_path / "moved.git").rename(remote)
    memory.remember("The zqplover runs along the tideline.", date=DAY)
    read_only(folder)
    try:
        report_of = memory.team_sync(interactive=False)
        assert report_of.pushed and on_disk(root)["error"] is not None  # pushed; the record refused
        assert "sync" in memory.doctor().behind
    finally:
        unmount(folder)
    assert wait_for(lambda: on_disk(root)["error"] is None), "the refused record was not written"
    assert on_disk(root)["went_out"] == len(report_of.went_out)
    assert memory.doctor().behind == IN_LINE


def test_a_day_index_a_merge_could_not_rebuild_is_caught_up_by_the_same_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A teammate pushes a note with plain git; the day index here refuses writes (a read-only
    bind mount over the file) when the sync merges it: the merge is kept, the sync says the day
    index is behind, and the process lists the note in it within seconds of the mount going,
    with no other call."""
    isolate_git(tmp_path, monkeypatch)
    remote = bare_remote(tmp_path)
    root = make_reme_workspace(tmp_path / "ws")
    memory = Memory(load_settings(workspace=str(root), timezone="UTC"))
    memory.remember("The zqheron waits in the shallows.", date=DAY)
    memory.team_sync(init=str(remote), interactive=False)

    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    (clone / "daily" / DAY / "zqcurlew.md").write_text(
        "---\nname: zqcurlew\ndescription: the zqcurlew probes the mud\n---\nThe zqcurlew probes the mud.\n",
        encoding="utf-8",
    )
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "a note by hand")
    git(clone, "push", "-q")

    day_index = root / "daily" / f"{DAY}.md"
    before = day_index.read_text(encoding="utf-8")
    read_only(day_index)
    try:
        report = memory.team_sync(interactive=False)
        assert (root / "daily" / DAY / "zqcurlew.md").is_file()  # merged
        assert list(report.days_behind) == [DAY], report.days_behind
        assert "day indexes behind" in report.render()
        assert day_index.read_text(encoding="utf-8") == before
        behind = memory.doctor().behind
        assert isinstance(behind, dict) and f"daily/{DAY}.md" in behind, behind
        assert memory.search("zqcurlew").results  # the note itself is searchable meanwhile
    finally:
        unmount(day_index)
    assert wait_for(lambda: "zqcurlew" in day_index.read_text(encoding="utf-8")), "the day index was not caught up"
    assert "zqheron" in day_index.read_text(encoding="utf-8")
    assert wait_for(lambda: memory.doctor().behind == IN_LINE), memory.doctor().behind  # the index takes it too
