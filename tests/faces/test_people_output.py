"""What a person reads: real paths and no model preamble on the command line, `read` taking every
reference an answer shows, `doctor` as text, counts in the right number, and a terminal start
that says what this command is; through the real `reme-mcp` command and a real MCP client."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client

from reme_mcp.config import load_settings
from reme_mcp.faces.server import build_server
from tests.conftest import DAY, make_reme_workspace, write

NOTE = f"daily/{DAY}/部署说明.md"
PREAMBLE = "untrusted historical data"


def reme(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_") or k == "REME_INDEX_DIR"}
    env |= {"REME_SEMANTIC": "off", "REME_TIMEZONE": "UTC"}
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_reme_workspace(tmp_path / "ws")
    write(root, NOTE, "---\nname: 部署\n---\nThe zqharbor deploy runs from the blue runner.\n")
    return root


def test_search_on_the_command_line_shows_real_paths_and_no_preamble(ws: Path) -> None:
    done = reme("search", "zqharbor", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    assert f"{NOTE}#L4-L4" in done.stdout
    assert "[file " not in done.stdout and PREAMBLE not in done.stdout and "<reme-context" not in done.stdout
    assert "1 of 1 hit for 'zqharbor':" in done.stdout
    assert "zqharbor deploy runs from the blue runner" in done.stdout


def test_read_takes_every_reference_an_answer_shows(ws: Path) -> None:
    from reme_mcp.safety.boundary import shown_path

    reference = shown_path(NOTE)
    assert reference.startswith("[file ")  # what the model's answer shows for this path
    for given in (NOTE, reference, f"{NOTE}#L4-L4"):
        done = reme("read", given, "-w", str(ws))
        assert done.returncode == 0, (given, done.stderr)
        assert done.stdout.startswith(f"{NOTE}: lines ") and "blue runner" in done.stdout
        assert PREAMBLE not in done.stdout
    assert reme("read", f"{NOTE}#L4-L4", "-w", str(ws)).stdout.startswith(f"{NOTE}: lines 4-4 of 4")
    gone = reme("read", "[file 000000000000]", "-w", str(ws))
    assert gone.returncode != 0 and len(gone.stderr.strip().splitlines()) == 1


@pytest.mark.anyio
async def test_the_read_tool_takes_the_reference_its_search_answer_shows(ws: Path) -> None:
    async with Client(build_server(load_settings(str(ws), "UTC", semantic="off"), warm_up=False)) as client:
        found = await client.call_tool("search", {"query": "zqharbor"})
        text = found.content[0].text  # type: ignore[union-attr]
        reference = text.split("1. ", 1)[1].split("#L", 1)[0]
        assert reference.startswith("[file "), text  # the model still gets the guarded form
        for given in (reference, f"{reference}#L4-L4"):
            read = await client.call_tool("read", {"path": given})
            assert not read.is_error, read.content
            assert read.structured_content is not None and read.structured_content["path"] == NOTE


@pytest.mark.anyio
async def test_doctor_reads_as_text_with_words_not_a_python_dict(ws: Path) -> None:
    async with Client(build_server(load_settings(str(ws), "UTC", semantic="off"), warm_up=False)) as client:
        refused = await client.call_tool("remember", {"content": "token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"})
        assert refused.is_error
    done = reme("doctor", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    assert "{" not in done.stdout and "True" not in done.stdout and "': " not in done.stdout, done.stdout
    assert "(s)" not in done.stdout
    assert "secrets refused:\n  total: 1\n  by kind:\n    a GitHub token: 1" in done.stdout
    assert "files by kind:" in done.stdout and "workspace exists: yes" in done.stdout
    helped = reme("doctor", "--help")
    assert "Serve" not in helped.stdout and "Report the project and workspace" in helped.stdout


def test_counts_are_in_the_right_number(ws: Path) -> None:
    note = ws / NOTE
    note.write_text(note.read_text(encoding="utf-8") + "key AKIAQX7M2RZK4TB9WN3P\n", encoding="utf-8")
    done = reme("scrub", "--dry-run", "-w", str(ws))
    assert "1 finding:" in done.stdout and "(s)" not in done.stdout
    assert f"  {NOTE}:5:" in done.stdout  # the real path, for the person to edit


def test_a_bare_start_in_a_terminal_says_what_it_is_and_a_pipe_stays_silent(ws: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_") or k == "REME_INDEX_DIR"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "-w", str(ws)], stdin=follower, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    os.close(follower)
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 30)
        assert ready, "nothing said in a terminal"
        line = proc.stderr.readline().decode()
        assert "an MCP server" in line and "reme-mcp search" in line and "reme-mcp config" in line
        time.sleep(0.5)
        assert proc.poll() is None  # and it still serves
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        os.close(leader)
    piped = reme("-w", str(ws), stdin="")
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr


@pytest.mark.integration
def test_the_page_counts_in_the_right_number(tmp_path: Path) -> None:
    import httpx2 as httpx

    from tests.faces.view_server import view_process

    root = tmp_path / "one"
    write(root, f"daily/{DAY}/only.md", "---\nname: only\n---\nThe one note.\n")
    with view_process(root) as running:
        answer = httpx.get(running.url, follow_redirects=False, timeout=30)
        name, cookie = answer.headers["set-cookie"].split(";", 1)[0].split("=", 1)
        page = httpx.get(running.base + "/", cookies={name: cookie}, timeout=30).text
    assert "1 note or session on 1 day." in page, page[:2000]


def test_a_terminal_is_never_told_anything_by_memory_text(ws: Path) -> None:
    write(ws, f"daily/{DAY}/bell\x1b[2J.md", "---\nname: bell\n---\nzqtitle \x1b]0;pwned\x07 and \u202eevil\n")
    done = reme("search", "zqtitle", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    assert "bell\\u001b[2J.md" in done.stdout and "zqtitle" in done.stdout
