"""The index under attack and under faults, in real processes.

The index is derived state kept outside the workspace (index/home.py): a
workspace's files cannot make the server run code, a folder others can write is
not trusted, and storage faults (truncated files, a full or read-only disk, the
folder deleted) cost at most a rebuild, never an answer.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC

from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError
from reme_mcp.index.home import workspace_key
from reme_mcp.index.schema import SCHEMA_VERSION, build_schema
from reme_mcp.ops.memory import Memory
from reme_mcp.storage.workspace import Workspace
from tests.conftest import DAY, make_reme_workspace


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
    key = workspace_key(Workspace(root))
    assert sorted(p.name for p in home.iterdir()) == [key, f"{key}.lock"]  # one folder, and its lock beside it
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


# ---- paths from derived state -------------------------------------------------------------------


def test_spooled_paths_outside_the_workspace_are_never_indexed(tmp_path: Path, env: dict[str, str]) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("zqoutsidetoken lives outside the workspace\n", encoding="utf-8")
    (tmp_path / "abs-secret.txt").write_text("zqabsolutetoken lives outside too\n", encoding="utf-8")
    (root / "digest" / "escape").symlink_to(outside, target_is_directory=True)
    assert run_cli("-w", str(root), "search", "warm up", env=env).returncode == 0
    spool = Path(env["REME_INDEX_DIR"]) / workspace_key(Workspace(root)) / "pending"
    spool.mkdir(exist_ok=True)
    hostile = ["../outside/secret.txt", str(tmp_path / "abs-secret.txt"), "digest/escape/secret.txt"]
    (spool / "1-2-3").write_text("\n".join([*hostile, "digest/wiki/deploy.md"]), encoding="utf-8")
    (root / "digest" / "wiki" / "new.md").write_text("A new page makes the next sync commit.\n", encoding="utf-8")

    synced = run_cli("-w", str(root), "search", "--json", "new page", env=env)  # commits, with the spool

    assert synced.returncode == 0, synced.stderr
    assert [r["path"] for r in json.loads(synced.stdout)["results"]][:1] == ["digest/wiki/new.md"]
    refused = [line for line in synced.stderr.splitlines() if "not indexing" in line]
    assert len(refused) == len(hostile), synced.stderr
    assert not list(spool.iterdir())  # the entry was taken
    for token in ("zqoutsidetoken", "zqabsolutetoken"):
        proc = run_cli("-w", str(root), "search", "--json", token, env=env)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["results"] == []


# ---- damaged files ----------------------------------------------------------------------------


def indexed_memory(root: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Memory, str]:
    """A workspace indexed by a full build, then one remember committed (compound and separate segment files)."""
    monkeypatch.setenv("REME_INDEX_DIR", str(home))
    memory = Memory(load_settings(str(root), "UTC"))
    memory.search("warm up")
    note = memory.remember("The zqwalrus census is taken every spring.", date=DAY).path
    memory.finish()
    memory.index.close()
    return memory, note


@pytest.mark.parametrize("kind", [".trm", ".pst", "_stored.col", "_len.col", ".toc", ".seg"])
def test_a_partly_truncated_index_file_heals_in_a_fresh_process(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    memory, note = indexed_memory(root, Path(env["REME_INDEX_DIR"]), monkeypatch)
    victims = sorted(p for p in memory.index.directory.iterdir() if p.name.endswith(kind))
    assert victims, sorted(os.listdir(memory.index.directory))
    victim = max(victims, key=lambda p: p.stat().st_size)
    os.truncate(victim, victim.stat().st_size * 3 // 4)

    first = run_cli("-w", str(root), "search", "--json", "zqwalrus census", env=env)
    second = run_cli("-w", str(root), "search", "--json", "Go backend services", env=env)

    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "rebuilding the index" in first.stderr and "Traceback" not in first.stderr
    assert "rebuilding" not in second.stderr  # healed once, for good
    assert [r["path"] for r in json.loads(first.stdout)["results"]][:1] == [note]
    assert [r["path"] for r in json.loads(second.stdout)["results"]][:1] == [f"daily/{DAY}/go-backend.md"]


@pytest.mark.parametrize("kind", [".seg", ".trm", "._stored.col"])
def test_an_index_file_deleted_from_the_folder_heals_in_a_fresh_process(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """What a folder deleted file by file while a commit wrote into it leaves: a table of contents naming a
    file that is not there. Waiting does not bring it back; it is damage, and the index is built again."""
    root = make_reme_workspace(tmp_path / "ws")
    memory, note = indexed_memory(root, Path(env["REME_INDEX_DIR"]), monkeypatch)
    victims = sorted(p for p in memory.index.directory.iterdir() if p.name.endswith(kind))
    assert victims, sorted(os.listdir(memory.index.directory))
    max(victims, key=lambda p: p.stat().st_size).unlink()

    first = run_cli("-w", str(root), "search", "--json", "zqwalrus census", env=env)
    second = run_cli("-w", str(root), "search", "--json", "Go backend services", env=env)

    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "rebuilding the index" in first.stderr and "Traceback" not in first.stderr
    assert "rebuilding" not in second.stderr
    assert [r["path"] for r in json.loads(first.stdout)["results"]][:1] == [note]
    assert [r["path"] for r in json.loads(second.stdout)["results"]][:1] == [f"daily/{DAY}/go-backend.md"]


# ---- a disk that is full or read-only -----------------------------------------------------------


def mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount {' '.join(args)} is not permitted here: {done.stderr.strip()}")


@pytest.fixture
def on_tmpfs(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Memory, Path]]:
    """An indexed workspace whose Whoosh index folder is a 1 MB tmpfs (the spool stays on the disk)."""
    root = make_reme_workspace(tmp_path / "ws")
    memory, _ = indexed_memory(root, Path(env["REME_INDEX_DIR"]), monkeypatch)
    directory = memory.index.directory
    saved = tmp_path / "saved-index"
    shutil.copytree(directory, saved)
    mount("-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(directory))
    try:
        for file in saved.iterdir():
            shutil.copy2(file, directory / file.name)
        yield memory, directory
    finally:
        memory.index.close()
        subprocess.run(["umount", "-l", str(directory)], check=True)


def fill(folder: Path) -> Path:
    """Fill the file system `folder` is on; returns the filler file."""
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_full_index_disk_takes_the_note_back_and_the_next_write_succeeds_promptly(
    on_tmpfs: tuple[Memory, Path],
) -> None:
    memory, directory = on_tmpfs
    filler = fill(directory)
    day = memory.ws.root / "daily" / DAY
    before = sorted(p.name for p in day.iterdir())

    # A note no search could find is never acknowledged: it is taken back, and the error says why.
    with pytest.raises(ReMeError) as failed:
        memory.remember("The zqnarwhal tusk is a tooth.", date=DAY)
    line = str(failed.value)
    assert "\n" not in line and "the disk is full" in line and "free some space" in line, line
    assert sorted(p.name for p in day.iterdir()) == before
    assert memory.search("Go backend services").results[0].path == f"daily/{DAY}/go-backend.md"

    filler.unlink()
    began = time.monotonic()
    made = memory.remember("The zqbeluga is called the sea canary.", date=DAY)
    assert memory.search("zqbeluga").results[0].path == made.path
    assert time.monotonic() - began < 10  # Whoosh's write lock was given back (a leak waits 60 s, then fails)
    again = memory.remember("The zqnarwhal tusk is a tooth.", date=DAY)  # the refused note, stored now
    assert again.created and memory.search("zqnarwhal").results[0].path == again.path


def test_a_read_only_index_answers_and_remember_says_why(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    memory, note = indexed_memory(root, Path(env["REME_INDEX_DIR"]), monkeypatch)
    folder = memory.index.folder
    mount("--bind", "-o", "ro", str(folder), str(folder))
    try:
        assert memory.search("zqwalrus census").results[0].path == note
        (root / "digest" / "wiki" / "later.md").write_text("A zqlater page, written meanwhile.\n", encoding="utf-8")
        assert memory.search("Go backend services").results[0].path == f"daily/{DAY}/go-backend.md"
        with pytest.raises(ReMeError) as failed:
            memory.remember("The zqorca hunts in pods.", date=DAY)
        assert "read-only" in str(failed.value) and "\n" not in str(failed.value)
        assert not [p for p in (root / "daily" / DAY).iterdir() if "zqorca" in p.read_text(encoding="utf-8")]
    finally:
        memory.index.close()  # its open files would keep the mount busy
        subprocess.run(["umount", "-l", str(folder)], check=True)
    assert memory.search("zqlater").results[0].path == "digest/wiki/later.md"  # caught up once writable
    stored = memory.remember("The zqorca hunts in pods.", date=DAY).path
    assert memory.search("zqorca").results[0].path == stored


def test_an_index_home_that_cannot_be_written_still_serves_search(tmp_path: Path, env: dict[str, str]) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    home = Path(env["REME_INDEX_DIR"])
    home.mkdir(mode=0o700)
    mount("--bind", "-o", "ro", str(home), str(home))
    try:
        proc = run_cli("-w", str(root), "search", "Go backend services", env=env)
    finally:
        subprocess.run(["umount", "-l", str(home)], check=True)
    assert proc.returncode == 0, proc.stderr
    assert "go-backend" in proc.stdout
    moved = [line for line in proc.stderr.splitlines() if "indexes into" in line]
    assert len(moved) == 1 and "read-only" in moved[0], proc.stderr


# ---- the folder cleared under load ----------------------------------------------------------------

WORKER = Path(__file__).with_name("robust_worker.py")


def test_the_index_folder_deleted_under_load_costs_no_call(tmp_path: Path, env: dict[str, str]) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    assert run_cli("-w", str(root), "search", "warm up", env=env).returncode == 0
    folder = Path(env["REME_INDEX_DIR"]) / workspace_key(Workspace(root))
    start = tmp_path / "start"
    workers = []
    for w in range(3):
        ops: list[dict[str, object]] = []
        for i in range(15):
            token = f"zqload{w}x{i}"
            ops.append({"op": "remember", "args": {"content": f"Load note {token}.", "date": DAY}, "token": token})
            ops.append({"op": "search", "query": token, "expect": "$last"})
            ops.append({"op": "search", "query": "Go backend services", "expect": f"daily/{DAY}/go-backend.md"})
        plan = tmp_path / f"plan-{w}.json"
        plan.write_text(json.dumps({"start_file": str(start), "ops": ops}), encoding="utf-8")
        workers.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), str(root), str(plan)], env=env, stdout=subprocess.PIPE, text=True
            )
        )
    start.touch()
    deletions = 0
    while any(w.poll() is None for w in workers) and deletions < 6:
        time.sleep(0.3)
        shutil.rmtree(folder, ignore_errors=True)
        deletions += 1
    lines = [json.loads(line) for w in workers for line in w.communicate(timeout=300)[0].splitlines()]

    assert deletions >= 3, "the workers finished before the folder was deleted"
    assert len(lines) == 3 * 45
    assert [line for line in lines if "error" in line] == [], "\n".join(
        str(line.get("trace") or line.get("error")) for line in lines if "error" in line
    )
