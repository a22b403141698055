"""home: where a workspace's index lives, who may write it, and the index lock."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reme_mcp.config import default_index_home
from reme_mcp.errors import ReMeError
from reme_mcp.index.home import ensure_folder, index_lock, private_folder, unsafe_reason, workspace_key
from reme_mcp.storage.workspace import Workspace


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

    folder = tmp_path / "index"

    def other_thread() -> None:
        with index_lock(folder):
            order.append("other")

    with index_lock(folder), index_lock(folder):
        other = threading.Thread(target=other_thread)
        other.start()
        time.sleep(0.2)
        order.append("first")
    other.join(5)
    assert order == ["first", "other"]


HOLDER = (
    "import sys, time; from pathlib import Path; from reme_mcp.index.home import index_lock\n"
    "with index_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(30)"
)


def test_the_lock_is_exclusive_between_processes(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ReMeError, match="the index is busy"), index_lock(folder, timeout=0.3):
            pass
    finally:
        holder.kill()
        holder.wait()
    with index_lock(folder, timeout=5):  # the OS let go of the killed holder's lock
        pass


def test_deleting_the_index_folder_does_not_release_its_lock(tmp_path: Path) -> None:
    """The folder is what a person or a cache cleaner deletes; the lock beside it stays held."""
    folder = tmp_path / "index"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        folder.mkdir(exist_ok=True)
        (folder / "index-v5").mkdir()
        shutil.rmtree(folder)
        with pytest.raises(ReMeError, match="the index is busy"), index_lock(folder, timeout=0.3):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_won_on_a_file_deleted_meanwhile_is_taken_again_on_the_file_now_there(tmp_path: Path) -> None:
    """A waiter that wins the old file's lock after it was replaced would hold it beside the new file's holder."""
    folder = tmp_path / "index"
    path = tmp_path / "index.lock"
    first = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(first, fcntl.LOCK_EX)
    entered: list[str] = []
    failed: list[BaseException] = []

    def waiter() -> None:
        try:
            with index_lock(folder, timeout=1.5):
                entered.append("waiter")
        except ReMeError as exc:
            failed.append(exc)

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.2)  # the waiter has opened the first file and polls its lock
    os.unlink(path)
    second = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(second, fcntl.LOCK_EX)  # another taker holds the file now at the path
    os.close(first)  # the waiter wins the deleted file's lock
    thread.join(10)
    os.close(second)
    assert entered == [] and len(failed) == 1 and "the index is busy" in str(failed[0])
    with index_lock(folder, timeout=1):
        assert path.exists() and not folder.exists()
