"""The client's MCP roots name the project: asked with roots/list, asked again after
notifications/roots/list_changed, through a real server process and the SDK's own client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types

from tests.projects.repos import repository, user_env

pytestmark = pytest.mark.anyio


async def test_roots_decide_the_project_and_a_change_of_roots_is_followed(tmp_path: Path) -> None:
    a = repository(tmp_path / "alpha", remote=tmp_path / "alpha.git")
    b = repository(tmp_path / "beta", remote=tmp_path / "beta.git")
    elsewhere = tmp_path / "not-a-project-of-these"
    elsewhere.mkdir()
    roots = [a / "src"]
    asked: list[list[str]] = []

    async def list_roots(context: Any) -> types.ListRootsResult:
        uris = [f"file://{folder}" for folder in roots]
        asked.append(uris)
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in uris])  # type: ignore[arg-type]

    env = user_env(tmp_path / "reme")
    # Started in a folder of its own, as some hosts start servers: the roots, not the folder, decide.
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp"], env=env, cwd=elsewhere)
    client = Client(params, read_timeout_seconds=60, list_roots_callback=list_roots, mode="legacy")  # type: ignore[arg-type]
    async with client as c:
        stored = await c.call_tool("remember", {"content": "Alpha's release train leaves on Tuesdays."})
        assert stored.structured_content["project"].startswith("alpha-"), stored.structured_content  # type: ignore[index]
        assert asked, "the server never asked for the roots"
        found = await c.call_tool("search", {"query": "release train Tuesdays"})
        assert [hit["project"] for hit in found.structured_content["results"]][:1] == [  # type: ignore[index]
            stored.structured_content["project"]  # type: ignore[index]
        ]
        roots[:] = [b]
        await c.send_roots_list_changed()
        moved = await c.call_tool("search", {"query": "release train Tuesdays"})
        assert moved.structured_content["results"] == [], moved.structured_content  # type: ignore[index]
        kept = await c.call_tool("remember", {"content": "Beta's release train leaves on Fridays."})
        assert kept.structured_content["project"].startswith("beta-")  # type: ignore[index]
        assert len(asked) >= 2
    # A new session whose first call is a search (the stdio front answers such a call early when it
    # can): the roots still decide, so it is left to the SDK, which asks for them.
    roots[:] = [a]
    asked.clear()
    async with Client(params, read_timeout_seconds=60, list_roots_callback=list_roots, mode="legacy") as c:  # type: ignore[arg-type]
        first = await c.call_tool("search", {"query": "release train"})
        assert asked and {hit["project"][:6] for hit in first.structured_content["results"]} == {"alpha-"}  # type: ignore[index]
