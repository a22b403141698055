"""Sync never pushes a secret: a planted key in a person's note stops `reme-mcp sync` (and
`sync --init`) before anything is committed or pushed, through the real command and real git;
the bare remote's whole history is read afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_reme_workspace
from tests.team.team_git import DAY, bare_remote, git, isolate_git, sync, synced

AWS = "AKIA" + "QX7M2RZK4TB9WN3P"  # an AWS access key id's shape
NOTE = f"daily/{DAY}/deploy-keys.md"


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path, monkeypatch)


def plant(ws: Path) -> Path:
    note = ws / NOTE
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(f"---\nname: deploy-keys\n---\nThe deploy uses\nkey {AWS} for CI.\n", encoding="utf-8")
    return note


def remote_history(remote: Path) -> str:
    return git(remote, "log", "--all", "-p", check=False)


def test_sync_init_with_a_key_in_a_persons_note_pushes_nothing(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    ws = make_reme_workspace(tmp_path / "ws")
    plant(ws)
    plan = synced(ws, "--init", str(remote), "--dry-run")
    assert f"secret: {NOTE} line 5: an AWS access key id" in plan and AWS not in plan
    assert not (ws / ".git").exists()  # a dry run makes nothing
    done = sync(ws, "--init", str(remote))
    assert done.returncode != 0
    error = done.stderr.strip()
    assert len(error.splitlines()) == 1, error
    assert f"{NOTE} line 5: an AWS access key id" in error
    assert "reme-mcp scrub" in error and f"--allow {NOTE}" in error
    assert AWS not in error and AWS not in done.stdout
    assert git(remote, "rev-list", "--all") == ""  # not one commit reached the remote
    assert AWS not in remote_history(remote)
    assert git(ws, "log", "--all", "--oneline", check=False) == ""  # nor was one made here
    assert (ws / NOTE).read_text(encoding="utf-8").count(AWS) == 1  # the person's text as it was


def test_a_later_sync_with_a_new_key_pushes_nothing_and_dry_run_reports_it(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    ws = make_reme_workspace(tmp_path / "ws")
    synced(ws, "--init", str(remote))
    before = git(remote, "rev-parse", "main")
    plant(ws)
    plan = synced(ws, "--dry-run")
    assert f"secret: {NOTE} line 5: an AWS access key id" in plan
    assert AWS not in plan
    done = sync(ws)
    assert done.returncode != 0 and NOTE in done.stderr
    assert git(remote, "rev-parse", "main") == before
    assert AWS not in remote_history(remote)
    assert git(ws, "status", "--porcelain", "--", NOTE).startswith("??")  # left unstaged, uncommitted


def test_scrubbed_or_edited_the_note_syncs(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    ws = make_reme_workspace(tmp_path / "ws")
    synced(ws, "--init", str(remote))
    note = plant(ws)
    assert sync(ws).returncode != 0
    note.write_text("---\nname: deploy-keys\n---\nThe deploy key is in the vault.\n", encoding="utf-8")
    synced(ws)
    assert "deploy key is in the vault" in remote_history(remote)
    assert AWS not in remote_history(remote)


def test_a_commit_made_by_hand_with_a_key_is_not_pushed(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    ws = make_reme_workspace(tmp_path / "ws")
    synced(ws, "--init", str(remote))
    plant(ws)
    git(ws, "add", NOTE)
    git(ws, "commit", "-q", "-m", "by hand")
    (ws / NOTE).write_text("---\nname: deploy-keys\n---\nGone again.\n", encoding="utf-8")
    done = sync(ws)
    assert done.returncode != 0 and "before pushing" in done.stderr and NOTE in done.stderr
    assert AWS not in remote_history(remote)


def test_an_allowance_is_the_persons_and_is_remembered(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    ws = make_reme_workspace(tmp_path / "ws")
    synced(ws, "--init", str(remote))
    note = plant(ws)
    assert "secret:" not in synced(ws, "--dry-run", "--allow", NOTE)
    assert sync(ws).returncode != 0  # a dry run's allowance is not recorded
    synced(ws, "--allow", NOTE)
    assert AWS in remote_history(remote)  # the person chose to share it
    note.write_text(note.read_text(encoding="utf-8") + f"and {AWS[:-1]}Q too\n", encoding="utf-8")
    synced(ws)  # the allowance holds for later syncs
    other = ws / f"daily/{DAY}/other.md"
    other.write_text(f"---\nname: other\n---\nkey {AWS}\n", encoding="utf-8")
    assert sync(ws).returncode != 0  # for that one file only
    refused = sync(ws, "--allow", "../outside.md")
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
