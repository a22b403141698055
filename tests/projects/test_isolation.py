"""Five projects, their clones, a worktree and symlinked paths, 200 notes, through real servers:
a project's search never returns another project's note; scope all finds every one and names it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.projects.repos import clone, repository, user_env, worktree

pytestmark = pytest.mark.anyio
PROJECTS = 5
NOTES_PER_PROJECT = 40


def server(folder: Path, reme_home: Path) -> Client:
    """`reme-mcp` as a host starts it: no workspace named, in the folder the host runs in."""
    env = user_env(reme_home)
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp"], env=env, cwd=folder)
    return Client(params, read_timeout_seconds=60)


def _layout(tmp_path: Path) -> dict[int, list[Path]]:
    """Each project's spellings: its folder, a subfolder, and a clone, worktree or symlink of it."""
    spellings: dict[int, list[Path]] = {}
    for i in range(PROJECTS):
        repo = repository(tmp_path / "src" / f"proj{i}", remote=tmp_path / "remotes" / f"proj{i}.git")
        spellings[i] = [repo, repo / "src"]
    spellings[0].append(clone(tmp_path / "remotes" / "proj0.git", tmp_path / "other" / "proj0-clone"))
    spellings[1].append(clone(tmp_path / "remotes" / "proj1.git", tmp_path / "other" / "p1"))
    spellings[2].append(worktree(spellings[2][0], tmp_path / "other" / "proj2-feature"))
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "three").symlink_to(spellings[3][0])
    (tmp_path / "links" / "four-src").symlink_to(spellings[4][0] / "src")
    spellings[3].append(tmp_path / "links" / "three")
    spellings[4].append(tmp_path / "links" / "four-src")
    return spellings


def _hits(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, result.content[0].text
    return list(result.structured_content["results"])


async def test_no_project_reads_another_and_scope_all_names_every_project(tmp_path: Path) -> None:
    spellings = _layout(tmp_path)
    reme_home = tmp_path / "reme"
    names: dict[int, set[str]] = {}
    # 200 notes, each project's written from all of its spellings in turn.
    for i, folders in spellings.items():
        for s, folder in enumerate(folders):
            async with server(folder, reme_home) as client:
                for k in range(s, NOTES_PER_PROJECT, len(folders)):
                    content = f"The package manager of this repository is tool{i}x{k}; run tool{i}x{k} install first."
                    stored = await client.call_tool("remember", {"content": content})
                    assert not stored.is_error, stored.content[0].text
                    names.setdefault(i, set()).add(stored.structured_content["project"])  # type: ignore[index]
                if i == 0 and s == 0:
                    kept = {"content": "The person wants package manager answers short.", "scope": "personal"}
                    assert (await client.call_tool("remember", kept)).structured_content["project"] == "personal"  # type: ignore[index]
    assert all(len(found) == 1 for found in names.values()), names  # every spelling wrote to one project
    project_of = {i: next(iter(found)) for i, found in names.items()}
    assert len(set(project_of.values())) == PROJECTS
    assert len(list((reme_home / "projects").glob("*/daily/*/*.md"))) == PROJECTS * NOTES_PER_PROJECT

    for i, folders in spellings.items():
        for folder in folders:
            async with server(folder, reme_home) as client:
                hits = _hits(await client.call_tool("search", {"query": "package manager install", "limit": 50}))
                assert {hit["project"] for hit in hits} <= {project_of[i], "personal"}, (folder, hits[:3])
                assert sum(hit["project"] == project_of[i] for hit in hits) == NOTES_PER_PROJECT
                assert any(hit["project"] == "personal" for hit in hits)
                days = (await client.call_tool("daily_list", {})).structured_content["days"]  # type: ignore[index]
                listed = {note["project"] for day in days for note in day["notes"]}
                assert listed <= {project_of[i], "personal"}

    async with server(spellings[2][1], reme_home) as client:
        everywhere = await client.call_tool("search", {"query": "package manager install", "scope": "all", "limit": 50})
        assert everywhere.structured_content["total_hits"] >= PROJECTS * NOTES_PER_PROJECT  # type: ignore[index]
        for i in range(PROJECTS):
            token = f"tool{i}x7"
            hits = _hits(await client.call_tool("search", {"query": token, "scope": "all"}))
            assert hits and hits[0]["project"] == project_of[i] and token in hits[0]["snippet"]
            read = await client.call_tool("read", {"path": hits[0]["path"], "project": hits[0]["project"]})
            assert not read.is_error and token in read.structured_content["content"]  # type: ignore[index]
        mine = _hits(await client.call_tool("search", {"query": "tool0x7"}))
        assert mine == [] or all(hit["project"] != project_of[0] for hit in mine)


async def test_a_session_with_no_project_says_so_and_keeps_to_the_personal_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_")}
    env |= {"HOME": str(home), "REME_INDEX_DIR": os.environ["REME_INDEX_DIR"], "REME_SEMANTIC": "off"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp"], env=env, cwd=home)
    async with Client(params, read_timeout_seconds=60) as client:
        stored = await client.call_tool("remember", {"content": "The person writes Go at work."})
        assert stored.structured_content["project"] == "personal"  # type: ignore[index]
        assert stored.content[0].text.startswith("Note: no project is known")  # type: ignore[union-attr]
        found = await client.call_tool("search", {"query": "Go at work"})
        assert "no project is known" in found.structured_content["notice"]  # type: ignore[index]
    assert list((home / ".reme" / "personal" / "daily").glob("*/*.md"))
    assert not (home / ".reme" / "projects").exists()
