"""Per-project memory through a real host (issue 47): what every host route's test runs and asserts.

One install of the host, then new sessions in different folders, each its own host process
and so its own reme-mcp server, which must find the session's project by itself:

  repo A         remember a fact (the project's) and a preference (scope personal)
  repo A         a new session finds the fact, from A's workspace
  A/src/deep     a subfolder of A: the same project, finds the fact
  second clone   another clone of A's remote: the same project, finds the fact
  A's worktree   a `git worktree` of A: the same project, finds the fact
  repo B         never finds A's fact; finds the personal preference
  the home folder  no project is known, and every answer says so

Everything asserted is what the host sent back to the model as each tool's result (the text
reme-mcp answered), plus where the notes landed on disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hosts.script import Script, planned_prompt, planned_results
from tests.projects.repos import clone, repository, worktree

FACT = "The release codename of this project is heron-4471."
FACT_MARK = "heron-4471"
FACT_QUERY = "release codename"
PREFERENCE = "Personal preference: write every answer in British English with metric units."
PREFERENCE_MARK = "metric units"
PREFERENCE_QUERY = "British English metric units"
NO_PROJECT = "no project is known"

Session = Callable[[Path, str], None]
"""Runs one new host session in a folder with the user's words."""


@dataclass(frozen=True)
class Repos:
    a: Path
    a_sub: Path
    a_clone: Path
    a_worktree: Path
    b: Path


def make_repos(root: Path) -> Repos:
    """Two real repositories; A pushed to a bare remote on disk, cloned a second time and
    given a worktree."""
    code = root / "code"
    remote = code / "remotes" / "alpha.git"
    a = repository(code / "alpha", remote=remote)
    a_sub = a / "src" / "deep"
    a_sub.mkdir(parents=True)
    return Repos(
        a=a,
        a_sub=a_sub,
        a_clone=clone(remote, code / "alpha-second"),
        a_worktree=worktree(a, code / "alpha-worktree"),
        b=repository(code / "beta"),
    )


def answered(result: str) -> dict[str, Any]:
    """reme-mcp's structured result, as the host gave it to the model.

    Claude Code and Codex both give the model a tool's structured content (the JSON of the
    result, `project` and `notice` fields included) in place of its rendered text; Codex puts
    a header (`Wall time: ...` and `Output:` lines) above it."""
    body = result.split("\nOutput:\n", 1)[1] if result.startswith("Wall time:") else result
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    assert isinstance(data, dict), f"the host did not pass reme-mcp's structured result on: {result[:500]}"
    return data


def projects_holding(result: str, mark: str) -> set[str]:
    """The `project` of each search hit (or of the stored note) whose text holds `mark`."""
    data = answered(result)
    hits = data.get("results", [data])
    return {str(hit.get("project")) for hit in hits if mark in json.dumps(hit, ensure_ascii=False)}


def notice(result: str) -> str:
    """What the result says about the project being unknown ("" when it says nothing)."""
    return str(answered(result).get("notice") or "")


def searched(result: str, query: str) -> bool:
    """Whether a result is search's answer to `query` (hits or none), not an error hiding them."""
    data = answered(result)
    return data.get("query") == query and isinstance(data.get("results"), list)


def _search(query: str) -> tuple[str, dict[str, object]]:
    return ("search", {"query": query})


def check_project_memory(run: Session, script: Script, repos: Repos, home: Path) -> dict[str, list[str]]:
    """Runs the sessions above through `run` and asserts each one's tool results; `home` is the
    HOME the host runs with (reme-mcp keeps its memory under HOME/.reme). Returns each
    session's results, for the record."""
    reme = home / ".reme"
    seen: dict[str, list[str]] = {}

    def session(tag: str, folder: Path, *calls: tuple[str, dict[str, object]]) -> list[str]:
        run(folder, planned_prompt(tag, *calls))
        seen[tag] = planned_results(script, tag)
        return seen[tag]

    fact, preference = session(
        "a-remember",
        repos.a,
        ("remember", {"content": FACT, "name": "release-codename"}),
        ("remember", {"content": PREFERENCE, "name": "answer-style", "scope": "personal"}),
    )
    workspaces = sorted(path.name for path in (reme / "projects").glob("*-*") if path.is_dir())
    assert len(workspaces) == 1 and workspaces[0].startswith("alpha-"), (workspaces, fact)
    alpha = workspaces[0]
    # remember's answer names where the note went: A's project, and the personal memory.
    assert projects_holding(fact, "release-codename") == {alpha}, fact
    assert list((reme / "projects" / alpha).glob("daily/*/release-codename.md")), "A's fact is not in A's workspace"
    assert projects_holding(preference, "answer-style") == {"personal"}, preference
    assert list((reme / "personal").glob("daily/*/answer-style.md")), "the preference is not in the personal workspace"
    assert not notice(fact) and not notice(preference), fact + preference

    for tag, folder in (
        ("a-again", repos.a),
        ("a-subfolder", repos.a_sub),
        ("a-clone", repos.a_clone),
        ("a-worktree", repos.a_worktree),
    ):
        (found,) = session(tag, folder, _search(FACT_QUERY))
        assert projects_holding(found, FACT_MARK) == {alpha}, f"session {tag} in {folder}: {found}"
        assert not notice(found), found

    in_b, preference_in_b = session("b", repos.b, _search(FACT_QUERY), _search(PREFERENCE_QUERY))
    assert searched(in_b, FACT_QUERY) and FACT_MARK not in in_b, f"A's fact reached B's session: {in_b}"
    assert projects_holding(preference_in_b, PREFERENCE_MARK) == {"personal"}, preference_in_b
    assert not notice(in_b) and not notice(preference_in_b), in_b + preference_in_b
    # Reads make no workspace: B has none until it remembers something.
    assert sorted(path.name for path in (reme / "projects").glob("*-*") if path.is_dir()) == [alpha]

    fact_at_home, preference_at_home = session("home", home, _search(FACT_QUERY), _search(PREFERENCE_QUERY))
    for result in (fact_at_home, preference_at_home):
        assert notice(result).startswith(NO_PROJECT), result
    assert searched(fact_at_home, FACT_QUERY) and FACT_MARK not in fact_at_home, fact_at_home
    assert projects_holding(preference_at_home, PREFERENCE_MARK) == {"personal"}, preference_at_home
    for tag, results in seen.items():
        print(f"session {tag}:", *(json.dumps(answered(result))[:400] for result in results), sep="\n  ")
    return seen
