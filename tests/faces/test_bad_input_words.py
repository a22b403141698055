"""What a newcomer's mistakes get: a blank query, a mistyped workspace, a workspace path that can
never be a folder. One line that says what was wrong and what to do, a non-zero exit, nothing
created; through the real command and a real MCP client."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from reme_mcp.config import load_settings
from reme_mcp.faces.server import build_server
from tests.conftest import make_reme_workspace


def reme(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_") or k == "REME_INDEX_DIR"}
    env["REME_SEMANTIC"] = "off"
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


@pytest.mark.parametrize("query", ["", "   ", "\t"])
def test_a_blank_query_on_the_command_line_is_one_line(tmp_path: Path, query: str) -> None:
    ws = make_reme_workspace(tmp_path / "ws")
    line = one_error_line(reme("search", query, "-w", str(ws)))
    assert "the query is blank" in line and "give the words" in line


@pytest.mark.anyio
async def test_a_blank_query_through_the_search_tool_is_one_line(tmp_path: Path) -> None:
    ws = make_reme_workspace(tmp_path / "ws")
    async with Client(build_server(load_settings(str(ws), "UTC"), warm_up=False)) as client:
        result = await client.call_tool("search", {"query": "   "})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "the query is blank" in text and "\n" not in text.strip() and "No memory matched" not in text


@pytest.mark.parametrize(
    "command", [["search", "deploy"], ["read", "notes.md"], ["reindex"], ["scrub"], ["view", "--no-open"]]
)
def test_a_workspace_that_does_not_exist_is_said_and_nothing_is_made(tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "typo" / "ws"
    line = one_error_line(reme(*command, "-w", str(missing)))
    assert f"no workspace at {missing}" in line and "--workspace" in line
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("command", [["search", "deploy"], ["serve"], ["serve", "--transport", "http", "--port", "1"]])
def test_a_workspace_under_a_file_is_refused_at_start_naming_the_fix(tmp_path: Path, command: list[str]) -> None:
    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n", encoding="utf-8")
    line = one_error_line(reme(*command, "-w", str(a_file / "ws"), stdin=""))
    assert f"{a_file}, which is a file" in line and "give a path under a folder" in line
    assert "move" not in line and "serving" not in line
    assert a_file.read_text(encoding="utf-8") == "root:x:0:0\n"


def test_doctor_reports_a_workspace_that_does_not_exist_and_makes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "ws"
    done = reme("doctor", "-w", str(missing))
    assert done.returncode == 0, done.stderr
    assert f"workspace: {missing}" in done.stdout and "workspace exists: no" in done.stdout
    assert not (tmp_path / "typo").exists()
