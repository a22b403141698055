"""A project resolves the same way from every spelling of it, and never from the home folder."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from reme_mcp.projects.home import MemoryHome
from reme_mcp.projects.identity import Project, find_project, normalise_remote
from reme_mcp.projects.placement import is_plugin_folder
from tests.projects.repos import clone, git, repository, worktree


def _id(folder: Path, home: Path) -> str:
    project = find_project(folder, home)
    assert project is not None, folder
    return project.id


def test_subfolder_symlink_clone_and_worktree_are_one_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = repository(tmp_path / "app", remote=tmp_path / "remotes" / "app.git")
    link = tmp_path / "link-to-app"
    link.symlink_to(repo)
    second = clone(tmp_path / "remotes" / "app.git", tmp_path / "elsewhere" / "app-copy")
    tree = worktree(repo, tmp_path / "app-feature")
    spellings = [repo, repo / "src", link, link / "src", second, second / "src", tree, tree / "src"]
    ids = {_id(folder, home) for folder in spellings}
    assert len(ids) == 1, ids
    assert find_project(repo / "src", home).root == repo.resolve()  # type: ignore[union-attr]


def test_a_moved_repository_without_remote_finds_its_workspace_by_its_first_commit(tmp_path: Path) -> None:
    memory = MemoryHome(tmp_path / "projects", tmp_path / "personal")
    repo = repository(tmp_path / "old-place" / "notes")
    before = find_project(repo, tmp_path)
    assert before is not None and any(key.startswith("commit:") for key in before.keys)
    name, workspace = memory.workspace_of(before)
    memory.prepare(workspace, before)
    moved = tmp_path / "new-place" / "renamed"
    moved.parent.mkdir()
    shutil.move(str(repo), str(moved))
    after = find_project(moved, tmp_path)
    assert after is not None and after.root == moved.resolve()
    assert memory.workspace_of(after) == (name, workspace)


def test_a_remote_added_later_keeps_the_workspace_made_before(tmp_path: Path) -> None:
    memory = MemoryHome(tmp_path / "projects", tmp_path / "personal")
    repo = repository(tmp_path / "tool")
    first = find_project(repo, tmp_path)
    assert first is not None
    name, workspace = memory.workspace_of(first)
    memory.prepare(workspace, first)
    git(repo, "remote", "add", "origin", "git@github.com:someone/tool.git")
    later = find_project(repo, tmp_path)
    assert later is not None and later.keys[0] == "remote:github.com/someone/tool"
    assert memory.workspace_of(later) == (name, workspace)


def test_two_repositories_are_two_projects_and_a_plain_folder_is_its_own(tmp_path: Path) -> None:
    a = repository(tmp_path / "a", remote=tmp_path / "a.git")
    b = repository(tmp_path / "b", remote=tmp_path / "b.git")
    plain = tmp_path / "plain" / "deep"
    plain.mkdir(parents=True)
    ids = {_id(a, tmp_path / "h"), _id(b, tmp_path / "h"), _id(plain, tmp_path / "h")}
    assert len(ids) == 3
    project = find_project(plain, tmp_path / "h")
    assert project is not None and not project.in_repository and project.root == plain.resolve()


def test_the_home_folder_and_the_root_are_no_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repository(home)  # a repository of dotfiles at home is too wide to be a project
    assert find_project(home, home) is None
    assert find_project(Path("/"), home) is None
    inside = home / "notes"
    inside.mkdir()
    project = find_project(inside, home)
    assert project is not None and project.root == inside.resolve() and not project.in_repository


def test_every_spelling_of_a_remote_is_one() -> None:
    spellings = [
        "git@github.com:Org/Repo.git",
        "ssh://git@github.com/Org/Repo",
        "ssh://git@github.com:22/Org/Repo.git",
        "https://github.com/Org/Repo.git",
        "https://user@GitHub.com/Org/Repo/",
        "git://github.com/Org/Repo",
    ]
    assert {normalise_remote(url) for url in spellings} == {"github.com/Org/Repo"}
    assert normalise_remote("/srv/git/app.git") == normalise_remote("file:///srv/git/app")


def test_repositories_with_the_same_first_commit_are_two_projects_while_both_exist(tmp_path: Path) -> None:
    memory = MemoryHome(tmp_path / "projects", tmp_path / "personal")
    made = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        git(folder, "init", "-q")
        # Same author, message and second: the same commit, as scripted repositories often have.
        git(folder, "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init", "--date", "2026-01-01T00:00:00")
        made.append(folder)
    env_free = [find_project(folder, tmp_path / "h") for folder in made]
    assert env_free[0] is not None and env_free[1] is not None
    commits = [{k for k in p.keys if k.startswith("commit:")} for p in env_free]  # type: ignore[union-attr]
    first_name, first_ws = memory.workspace_of(env_free[0])
    memory.prepare(first_ws, env_free[0])
    if commits[0] == commits[1]:
        assert memory.workspace_of(env_free[1])[0] != first_name


def test_a_fork_with_another_remote_is_another_project(tmp_path: Path) -> None:
    memory = MemoryHome(tmp_path / "projects", tmp_path / "personal")
    upstream = repository(tmp_path / "up", remote=tmp_path / "up.git")
    fork = clone(tmp_path / "up.git", tmp_path / "fork")
    git(fork, "remote", "set-url", "origin", "git@github.com:me/fork.git")
    a, b = find_project(upstream, tmp_path / "h"), find_project(fork, tmp_path / "h")
    assert a is not None and b is not None
    name, ws = memory.workspace_of(a)
    memory.prepare(ws, a)
    assert memory.workspace_of(b)[0] != name


def test_a_plugin_folder_is_no_project_even_under_a_home_that_is_a_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    repository(home)  # dotfiles
    monkeypatch.setenv("HOME", str(home))
    cache = home / ".codex" / "plugins" / "cache" / "reme-mcp" / "1.0.0"
    checkout = repository(tmp_path / "reme-mcp-checkout")
    for folder in (cache, checkout):
        (folder / "bin").mkdir(parents=True)
        (folder / "plugin.json").write_text("{}")
        (folder / "bin" / "reme-mcp").write_text("#!/bin/sh\n")
    assert is_plugin_folder(cache, {})
    assert not is_plugin_folder(checkout, {})  # a checkout of reme-mcp is a project like any other
    assert is_plugin_folder(checkout, {"PLUGIN_ROOT": str(checkout)})


def test_threads_making_one_project_workspace_at_once_all_succeed(tmp_path: Path) -> None:
    """A tool call and ingest of one server may make a new project's workspace in the same moment:
    each records the project's keys, and none may find its own write taken by the other."""
    repo = repository(tmp_path / "app")
    project = find_project(repo, tmp_path)
    assert project is not None
    failures: list[BaseException] = []
    for round_ in range(20):
        memory = MemoryHome(tmp_path / f"projects-{round_}", tmp_path / "personal")
        _, workspace = memory.workspace_of(project)
        start = threading.Barrier(8)
        threads = [threading.Thread(target=_make, args=(start, memory, workspace, project, failures)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert memory.workspace_of(project)[1] == workspace
    assert not failures, failures[:3]


def _make(
    start: threading.Barrier, memory: MemoryHome, workspace: Path, project: Project, failures: list[BaseException]
) -> None:
    start.wait()
    try:
        memory.prepare(workspace, project)
    except BaseException as exc:
        failures.append(exc)
