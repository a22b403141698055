"""The index under attack and under faults, in real processes.

The index is derived state kept outside the workspace (index/home.py): a
workspace's files cannot make the server run code, a folder others can write is
not trusted, and storage faults (truncated files, a full or read-only disk, the
folder deleted) cost at most a rebuild, never an answer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC

from reme_mcp.index.home import workspace_key
from reme_mcp.index.schema import SCHEMA_VERSION, build_schema
from reme_mcp.workspace import Workspace
from tests.conftest import make_reme_workspace


class _Payload:
    """Unpickling this runs a shell command: what a hostile table of contents carries."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (self.command,)


def plant_hostile_index(folder: Path, canary: Path) -> None:
    """A Whoosh index whose newest table of contents runs `touch canary` when opened."""
    folder.mkdir(parents=True, exist_ok=True)
    storage = FileStorage(str(folder))
    storage.create_index(build_schema())
    TOC(build_schema(), _Payload(f"touch {canary}"), 99).write(storage, "MAIN")
    assert any(name.startswith("_MAIN_99") for name in os.listdir(folder))


def run_cli(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "index-home"
    return {**os.environ, "REME_INDEX_DIR": str(home)}


def test_the_planted_index_runs_its_payload_when_whoosh_opens_it(tmp_path: Path) -> None:
    """The attack is real: opening the planted folder with Whoosh runs the command."""
    canary = tmp_path / "canary"
    plant_hostile_index(tmp_path / "planted", canary)
    code = f"from whoosh.filedb.filestore import FileStorage as F\ntry: F({str(tmp_path / 'planted')!r}).open_index()\nexcept Exception: pass"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert canary.exists()


def test_a_hostile_index_in_the_workspace_is_never_opened(tmp_path: Path, env: dict[str, str]) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    canary = tmp_path / "canary"
    stale = root / "metadata" / "reme-mcp" / f"index-v{SCHEMA_VERSION}"
    plant_hostile_index(stale, canary)
    before = sorted(os.listdir(stale))

    proc = run_cli("-w", str(root), "search", "Go backend services", env=env)

    assert proc.returncode == 0, proc.stderr
    assert "go-backend" in proc.stdout
    assert not canary.exists()
    assert sorted(os.listdir(stale)) == before  # a person's folder: never deleted or changed
    assert (Path(env["REME_INDEX_DIR"]) / workspace_key(Workspace(root)) / f"index-v{SCHEMA_VERSION}").is_dir()


def test_an_index_folder_others_can_write_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    canary = tmp_path / "canary"
    folder = Path(env["REME_INDEX_DIR"]) / workspace_key(Workspace(root))
    plant_hostile_index(folder / f"index-v{SCHEMA_VERSION}", canary)
    folder.chmod(0o777)

    proc = run_cli("-w", str(root), "search", "Go backend services", env=env)

    assert proc.returncode == 0, proc.stderr
    assert "go-backend" in proc.stdout
    assert not canary.exists()
    refusals = [line for line in proc.stderr.splitlines() if "not using the index folder" in line]
    assert len(refusals) == 1 and "others may write it (mode 777)" in refusals[0]


def test_every_path_to_one_workspace_shares_one_index(tmp_path: Path, env: dict[str, str]) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    link = tmp_path / "link-to-ws"
    link.symlink_to(root)
    for path in (root, link):
        proc = run_cli("-w", str(path), "search", "release freeze", env=env)
        assert proc.returncode == 0 and "release-freeze" in proc.stdout, proc.stderr
    home = Path(env["REME_INDEX_DIR"])
    assert [p.name for p in home.iterdir()] == [workspace_key(Workspace(root))]
    assert (home.stat().st_mode & 0o777) == 0o700
    assert ((home / workspace_key(Workspace(root))).stat().st_mode & 0o777) == 0o700


def test_a_read_only_workspace_with_no_index_can_be_searched(tmp_path: Path, env: dict[str, str]) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    shutil.rmtree(root / "metadata", ignore_errors=True)
    mounted = subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(root)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot make a read-only bind mount here: {mounted.stderr.strip()}")
    try:
        proc = run_cli("-w", str(root), "search", "Go backend services", env=env)
        assert proc.returncode == 0, proc.stderr
        assert "go-backend" in proc.stdout
        assert not (root / "metadata").exists()
    finally:
        subprocess.run(["umount", str(root)], check=True)
