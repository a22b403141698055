"""home: where a workspace's index lives, who may write it, and the index lock."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reme_mcp.config import default_index_home
from reme_mcp.errors import ReMeError
from reme_mcp.index.home import ensure_folder, index_lock, private_folder, unsafe_reason, workspace_key
from reme_mcp.workspace import Workspace


def test_the_key_is_the_workspaces_real_path(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    assert workspace_key(Workspace(tmp_path / "link")) == workspace_key(Workspace(tmp_path / "ws"))
    assert workspace_key(Workspace(tmp_path / "ws")) != workspace_key(Workspace(tmp_path))
    assert len(workspace_key(Workspace(tmp_path))) == 24


def test_the_default_home_follows_the_environment(tmp_path: Path) -> None:
    assert default_index_home({"REME_INDEX_DIR": str(tmp_path)}) == tmp_path
    assert default_index_home({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "reme-mcp" / "index"
    assert default_index_home({"XDG_CACHE_HOME": "relative"}) == Path.home() / ".cache" / "reme-mcp" / "index"


def test_folders_are_created_private(tmp_path: Path) -> None:
    ensure_folder(tmp_path / "a" / "b" / "c")
    for folder in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"):
        assert folder.stat().st_mode & 0o777 == 0o700
    assert unsafe_reason(tmp_path / "a" / "b") is None
    assert unsafe_reason(tmp_path / "missing") is None


def test_unsafe_folders_are_named(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    shared.chmod(0o770)
    assert unsafe_reason(shared) == "others may write it (mode 770)"
    (tmp_path / "link").symlink_to(shared)
    assert unsafe_reason(tmp_path / "link") == "it is a symbolic link"
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert unsafe_reason(tmp_path / "file") == "it is not a folder"
    if os.getuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        assert "owned by uid 65534" in str(unsafe_reason(theirs))


def test_an_unsafe_home_gives_a_private_temporary_folder(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o777)
    folder = private_folder(Workspace(tmp_path / "ws"), home)
    assert not folder.is_relative_to(home) and folder.is_dir() and folder.stat().st_mode & 0o777 == 0o700
    assert "others may write it" in caplog.text
    home.chmod(0o700)
    assert private_folder(Workspace(tmp_path / "ws"), home) == home / workspace_key(Workspace(tmp_path / "ws"))


def test_the_lock_is_reentrant_in_one_thread_and_exclusive_between_threads(tmp_path: Path) -> None:
    order: list[str] = []

    def other_thread() -> None:
        with index_lock(tmp_path):
            order.append("other")

    with index_lock(tmp_path), index_lock(tmp_path):
        other = threading.Thread(target=other_thread)
        other.start()
        time.sleep(0.2)
        order.append("first")
    other.join(5)
    assert order == ["first", "other"]


def test_the_lock_is_exclusive_between_processes(tmp_path: Path) -> None:
    code = (
        "import sys, time; from pathlib import Path; from reme_mcp.index.home import index_lock\n"
        "with index_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(30)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ReMeError, match="the index is busy"), index_lock(tmp_path, timeout=0.3):
            pass
    finally:
        holder.kill()
        holder.wait()
    with index_lock(tmp_path, timeout=5):  # the OS let go of the killed holder's lock
        pass
