"""Containment, the walk, atomic writes and locks."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from reme_mcp.errors import ReMeError
from reme_mcp.storage.workspace import Workspace, file_kind, path_date


@pytest.mark.parametrize(
    "bad",
    [
        "../outside.txt",
        "daily/../../outside.txt",
        "/etc/passwd",
        "~/secret",
        "..\\outside.txt",
        "C:\\Windows\\win.ini",
        "C:/Windows/win.ini",
        "\\\\server\\share\\x",
        "//server/share/x",
        "daily/\0x.md",
        "metadata/reme-mcp/index-v1/_MAIN_1.toc",
        "mem_session/state.json",
        "daily/../metadata/x",
        "a" * 5000,
    ],
)
def test_contained_path_refuses_escapes(tmp_path: Path, bad: str) -> None:
    ws = Workspace(tmp_path)
    with pytest.raises(ReMeError) as info:
        ws.contained_path(bad)
    assert "\n" not in str(info.value)


def test_contained_path_refuses_symlink_that_leaves(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "digest").mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_text("canary")
    os.symlink(outside, root / "digest" / "link.md")
    with pytest.raises(ReMeError, match="outside"):
        Workspace(root).contained_path("digest/link.md")


def test_contained_path_accepts_inside_paths(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    assert ws.contained_path("daily/2026-11-28/a.md") == tmp_path.resolve() / "daily/2026-11-28/a.md"
    assert ws.contained_path("digest/./wiki/../wiki/x.md") == tmp_path.resolve() / "digest/wiki/x.md"
    assert ws.contained_path("", allow_root=True) == tmp_path.resolve()


def test_walk_skips_private_hidden_and_loops(tmp_path: Path) -> None:
    (tmp_path / "daily/2026-11-28").mkdir(parents=True)
    (tmp_path / "daily/2026-11-28/a.md").write_text("a")
    (tmp_path / "daily/2026-11-28/.a.md.tmp-abc123").write_text("half")
    (tmp_path / "metadata").mkdir()
    (tmp_path / "metadata/x.md").write_text("x")
    (tmp_path / "mem_session").mkdir()
    (tmp_path / "mem_session/y.md").write_text("y")
    os.symlink(tmp_path / "daily", tmp_path / "daily/loop")
    paths = sorted(e.path for e in Workspace(tmp_path).walk())
    assert paths == ["daily/2026-11-28/a.md"]


def test_write_atomic_exclusive_never_overwrites(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    target = tmp_path / "daily/2026-11-28/a.md"
    ws.write_atomic(target, "first")
    with pytest.raises(FileExistsError):
        ws.write_atomic(target, "second", exclusive=True)
    assert target.read_text() == "first"
    assert [p.name for p in target.parent.iterdir()] == ["a.md"]  # no temp file left behind


def test_nothing_created_until_first_write(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "later")
    assert list(ws.walk()) == []
    assert not (tmp_path / "later").exists()


@pytest.mark.parametrize(
    ("path", "kind", "day"),
    [
        ("daily/2026-11-28/a.md", "daily", "2026-11-28"),
        ("daily/2026-11-28.md", "day_index", "2026-11-28"),
        ("digest/wiki/x.md", "digest", None),
        ("session/dialog/s.jsonl", "dialog", None),
        ("session/claude_code/s.jsonl", "transcript", None),
        ("resource/2026-11-01/a.pdf", "resource", "2026-11-01"),
        ("notes.md", "note", None),
    ],
)
def test_kinds_and_dates(path: str, kind: str, day: str | None) -> None:
    assert file_kind(path) == kind
    assert path_date(path) == day


def test_lock_excludes_threads_of_one_process(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    counter = tmp_path / "counter.txt"
    counter.write_text("0", encoding="utf-8")

    def bump() -> None:
        for _ in range(25):
            with ws.lock("write"):
                value = int(counter.read_text(encoding="utf-8"))
                time.sleep(0.0005)  # a lost update shows if two threads are ever inside at once
                counter.write_text(str(value + 1), encoding="utf-8")

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text(encoding="utf-8") == "200"
