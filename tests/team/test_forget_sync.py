"""Forgetting in a workspace synced through git: a bare repository on local disk, two clones,
real `reme-mcp sync`, `forget` and `search` processes. The removal reaches the other clone as git's
merge of a deletion, and the other clone, which still held the file, does not bring it back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ops.forget_helpers import DAY, SECRET_FACT, Setup, holding
from tests.team.team_git import bare_remote, git, isolate_git

SECRET_WORD = "quokka-meridian-4471"


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path, monkeypatch)


def test_a_forgotten_note_leaves_every_clone_through_sync(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = Setup(tmp_path / "amber"), Setup(tmp_path / "birch")
    birch.index = amber.index  # one user's index home, as on one machine: a folder per workspace in it
    paths = amber.build()
    amber.ok("sync", "--init", str(remote))
    birch.ok("sync", "--init", str(remote))
    assert SECRET_FACT in (birch.ws / paths["secret"]).read_text(encoding="utf-8")
    assert json.loads(birch.ok("search", SECRET_WORD, "--json"))["results"][0]["path"] == paths["secret"]
    birch_index = next(p for p in birch.index.iterdir() if holding(p, SECRET_WORD) and p.name != _key(amber))

    amber.ok("forget", paths["secret"], "--yes")
    said = amber.ok("sync")
    assert "commit:" in said and "nothing" not in said.split("commit:")[1].split("\n")[0]
    tree = git(remote, "ls-tree", "-r", "--name-only", "main")
    assert paths["secret"] not in tree and paths["kept"] in tree

    birch.ok("sync")  # birch still holds the file: git's merge of the deletion takes it away
    assert not (birch.ws / paths["secret"]).exists() and (birch.ws / paths["kept"]).exists()
    assert paths["secret"] not in (birch.ws / "daily" / f"{DAY}.md").read_text(encoding="utf-8")
    assert json.loads(birch.ok("search", SECRET_WORD, "--json"))["results"] == []
    assert holding(birch_index, SECRET_WORD) == []  # nothing of it left in birch's index either

    # Nothing brings it back: more syncs on both sides, in both orders.
    for clone in (birch, amber, birch):
        clone.ok("sync")
    assert not (amber.ws / paths["secret"]).exists() and not (birch.ws / paths["secret"]).exists()
    assert paths["secret"] not in git(remote, "ls-tree", "-r", "--name-only", "main")


def _key(s: Setup) -> str:
    from reme_mcp.index.home import workspace_key
    from reme_mcp.storage.workspace import Workspace

    return workspace_key(Workspace(s.ws))
