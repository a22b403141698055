"""The opt-in `forget` tool through a real MCP client over stdio: off by default; on, it asks the
person through elicitation and forgets only on their acceptance."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitRequestParams, ElicitResult

from tests.ops.forget_helpers import DAY, SECRET_FACT, Setup, hashes

pytestmark = pytest.mark.anyio
SECRET_WORD = "quokka-meridian-4471"


def client(
    s: Setup,
    *args: str,
    allow: bool = True,
    answer: ElicitResult | None = None,
    asked: list[str] | None = None,
    mode: str = "auto",
) -> Client:
    """A real stdio client of a real server; with `answer`, it declares elicitation and answers so."""
    env = {**s.env(), **({"REME_ALLOW_FORGET": "1"} if allow and not args else {})}
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp", *args, "-w", str(s.ws)], env=env)
    if answer is None:
        return Client(params, read_timeout_seconds=120, mode=mode)  # type: ignore[arg-type]

    async def elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
        (asked if asked is not None else []).append(params.message)
        return answer

    return Client(params, read_timeout_seconds=120, elicitation_callback=elicit, mode=mode)  # type: ignore[arg-type]


async def test_off_by_default_the_server_lists_exactly_five_tools(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    async with client(s, allow=False) as c:
        names = {t.name for t in (await c.list_tools()).tools}
    assert names == {"search", "read", "traverse", "daily_list", "remember"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_accepted_forgets_and_no_tool_returns_it_again(tmp_path: Path, mode: str) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    asked: list[str] = []
    accept = ElicitResult(action="accept", content={"forget": True})
    async with client(s, "serve", "--allow-forget", answer=accept, asked=asked, mode=mode) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) == {"search", "read", "traverse", "daily_list", "remember", "forget"}
        notes = tools["forget"].annotations
        assert notes is not None and notes.destructive_hint is True and notes.read_only_hint is False
        found = await c.call_tool("search", {"query": SECRET_WORD})
        assert found.structured_content["results"][0]["path"] == paths["secret"]  # type: ignore[index]

        done = await c.call_tool("forget", {"paths": [paths["secret"]]})
        assert not done.is_error, done.content
        assert len(asked) == 1 and paths["secret"] in asked[0] and paths["linker"] in asked[0]
        result = done.structured_content or {}
        assert result["status"] == "forgotten" and result["removed"] == [paths["secret"]]
        assert result["linked_from"] == {paths["secret"]: [paths["linker"]]}

        # Absent from every tool's answer.
        search = await c.call_tool("search", {"query": SECRET_WORD})
        assert search.structured_content["results"] == []  # type: ignore[index]
        read = await c.call_tool("read", {"path": paths["secret"]})
        assert read.is_error
        tree = await c.call_tool("traverse", {"path": "", "depth": 3})
        assert paths["secret"] not in json.dumps(tree.structured_content) and paths["kept"] in json.dumps(
            tree.structured_content
        )
        back = await c.call_tool("traverse", {"path": paths["linker"], "direction": "forward"})
        assert SECRET_FACT not in json.dumps(back.structured_content)
        days = await c.call_tool("daily_list", {"date": DAY})
        listed = json.dumps(days.structured_content)
        assert paths["secret"] not in listed and paths["kept"] in listed
        # remember of the same text stores it anew (no ledger, index or echo memory of it).
        again = await c.call_tool("remember", {"content": SECRET_FACT, "name": "vault-phrase", "date": DAY})
        assert again.structured_content["created"] is True  # type: ignore[index]
        assert again.structured_content["path"] == paths["secret"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("action", "mode"),
    [("decline", "auto"), ("cancel", "auto"), ("decline", "legacy")],  # legacy: the server asks mid-call
)
async def test_declined_or_cancelled_removes_nothing(tmp_path: Path, action: str, mode: str) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    before = hashes(s.ws, s.trash)
    asked: list[str] = []
    async with client(s, answer=ElicitResult(action=action), asked=asked, mode=mode) as c:  # type: ignore[arg-type]
        done = await c.call_tool("forget", {"query": SECRET_WORD, "limit": 1})
        assert not done.is_error, done.content
        assert asked and paths["secret"] in asked[0]
        assert (done.structured_content or {})["status"] == "declined"
        assert "nothing was removed" in done.content[0].text  # type: ignore[union-attr]
        still = await c.call_tool("search", {"query": SECRET_WORD})
        assert still.structured_content["results"][0]["path"] == paths["secret"]  # type: ignore[index]
    assert hashes(s.ws, s.trash) == before


async def test_accepted_with_no_means_no(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    async with client(s, answer=ElicitResult(action="accept", content={"forget": False})) as c:
        done = await c.call_tool("forget", {"paths": [paths["secret"]]})
        assert (done.structured_content or {})["status"] == "declined"
    assert (s.ws / paths["secret"]).exists()


async def test_a_client_without_elicitation_is_told_the_command_which_then_works(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    before = hashes(s.ws, s.trash)
    async with client(s) as c:  # declares no elicitation capability
        done = await c.call_tool("forget", {"paths": [paths["secret"]]})
    assert done.is_error
    said = done.content[0].text  # type: ignore[union-attr]
    assert "nothing was removed" in said and "reme-mcp forget --workspace" in said
    assert hashes(s.ws, s.trash) == before
    command = shlex.split(said[said.index("reme-mcp forget") :])
    assert command[:2] == ["reme-mcp", "forget"] and paths["secret"] in command
    ran = subprocess.run(
        [sys.executable, "-m", "reme_mcp", *command[1:], "--yes"],
        env={**s.env(), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert not (s.ws / paths["secret"]).exists() and (s.ws / paths["kept"]).exists()


async def test_a_server_running_meanwhile_stops_returning_what_the_command_forgot(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    async with client(s, allow=False) as c:
        found = await c.call_tool("search", {"query": SECRET_WORD})
        assert found.structured_content["results"][0]["path"] == paths["secret"]  # type: ignore[index]
        done = subprocess.run(
            [sys.executable, "-m", "reme_mcp", "forget", paths["secret"], "--yes", "-w", str(s.ws)],
            env=s.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        after = await c.call_tool("search", {"query": SECRET_WORD})
        assert after.structured_content["results"] == []  # type: ignore[index]
        assert (await c.call_tool("read", {"path": paths["secret"]})).is_error
        days = await c.call_tool("daily_list", {"date": DAY})
        assert paths["secret"] not in json.dumps(days.structured_content)
