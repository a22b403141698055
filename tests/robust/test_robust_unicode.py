"""Text Python holds and UTF-8 cannot: lone surrogates and file names that are not UTF-8.

A JSON or YAML escape ("\\ud800", half of a split emoji) in a dialog or a note's front matter,
a file or folder whose name is not UTF-8, an argument that is not UTF-8: none may stop a
reply (an MCP server that cannot write its reply stops, and the host waits for it), the
index, or the model. A message's text reads with U+FFFD in their place, a file whose name
cannot be told to a client is left out with one stderr line, and a tool argument that
holds one gets a one-line error. The files are never changed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError
from reme_mcp.ops.memory import Memory

pytestmark = pytest.mark.anyio
DAY = "2026-11-28"
# Escapes as a JSON or YAML writer leaves them: the file itself is plain ASCII.
DIALOG = (
    '{"role": "user", "name": "Ann\\ud800", "content": [{"type": "text", '
    '"text": "Our billing ledger moved to PostgreSQL \\ud800 in May zqsplit."}]}'
)
FRONT_MATTER = '---\nname: "half\\ud83d of an emoji"\ndescription: "d\\udcffe"\n---\nA note on invoices zqyaml.\n'
BAD_NAMES = [b"memory/bad\xffname.md", b"folder\xfd/inside.md", f"daily/{DAY}/n\xfe.md".encode("latin-1")]


def workspace(root: Path) -> Path:
    (root / "session" / "dialog").mkdir(parents=True)
    (root / "daily" / DAY).mkdir(parents=True)
    (root / "session" / "dialog" / "split.jsonl").write_text(DIALOG + "\n", encoding="ascii")
    (root / "daily" / DAY / "escaped.md").write_text(FRONT_MATTER, encoding="ascii")
    for raw in BAD_NAMES:
        path = os.fsencode(root) + b"/" + raw
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("A file holding zqbadname.\n")
        except OSError as exc:  # a file system that holds only UTF-8 names (EILSEQ)
            pytest.skip(f"this file system refuses a name that is not UTF-8: {exc}")
    return root


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_a_workspace_of_lone_surrogates_and_undecodable_names_is_served_over_stdio(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "-w", str(root), "--semantic", "off"], env=dict(os.environ)
    )
    async with Client(params, read_timeout_seconds=60) as client:
        with anyio.fail_after(120):  # a reply the server cannot write would never come
            found = await client.call_tool("search", {"query": "zqsplit"})
            assert not found.is_error, text_of(found)
            hit = found.structured_content["results"][0]
            assert hit["path"] == "session/dialog/split.jsonl" and "PostgreSQL \ufffd in May" in hit["snippet"]
            noted = await client.call_tool("search", {"query": "zqyaml"})
            assert "half\ufffd of an emoji" in text_of(noted) and "d\ufffde" in text_of(noted)
            assert (await client.call_tool("search", {"query": "zqbadname"})).structured_content["results"] == []
            read = await client.call_tool("read", {"path": "session/dialog/split.jsonl"})
            assert not read.is_error and "Ann\ufffd (user): Our billing ledger" in text_of(read)
            listed = await client.call_tool("daily_list", {"date": DAY})
            assert [n["path"] for n in listed.structured_content["days"][0]["notes"]] == [f"daily/{DAY}/escaped.md"]
            tree = await client.call_tool("traverse", {"path": ""})
            assert not tree.is_error
            assert sorted(n["path"] for n in tree.structured_content["nodes"]) == ["", "daily", "memory", "session"]
            kept = await client.call_tool(
                "remember", {"content": "Invoices are archived monthly zqafter.", "date": DAY}
            )
            assert not kept.is_error, text_of(kept)
            after = await client.call_tool("search", {"query": "zqafter"})
            assert after.structured_content["results"][0]["path"] == kept.structured_content["path"]
    assert all(p.read_bytes() == data for p, data in before.items())  # nothing a person wrote was changed


def test_the_cli_searches_with_an_argument_that_is_not_utf8(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [
                os.fsencode(sys.executable),
                b"-m",
                b"reme_mcp",
                b"-w",
                os.fsencode(root),
                b"search",
                *extra,
                b"\xff zqsplit",
            ],
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr.decode()
        out = done.stdout.decode("utf-8")  # valid UTF-8, whatever the files and the argument held
        assert "session/dialog/split.jsonl" in out and b"Traceback" not in done.stderr
        # Each file left out is said once, by its bytes, with what to do.
        told = [line for line in done.stderr.decode().splitlines() if "is left out of search" in line]
        assert len(told) == len(BAD_NAMES) and all("rename it" in line for line in told)
        assert any("bad\\xffname.md" in line for line in told)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m: m.read("notes/x\ud800.md"), "path"),
        (lambda m: m.traverse("daily\udcff"), "path"),
        (lambda m: m.search("invoices", path_prefix="daily\ud800"), "path"),
        (lambda m: m.remember(content="Keep \ud83d this."), "content"),
        (lambda m: m.remember(content="Keep this.", description="a\udcff"), "description"),
        (lambda m: m.remember(content="Keep this.", tags=["ok", "b\ud800"]), "a tag"),
        (lambda m: m.remember(content="Keep this.", supersedes=["daily/x\ud800.md"]), "path"),
    ],
)
def test_an_argument_holding_a_lone_surrogate_is_one_line_refused(tmp_path: Path, call: Any, field: str) -> None:
    root = workspace(tmp_path / "ws")
    memory = Memory(load_settings(workspace=str(root), semantic="off"))
    with pytest.raises(ReMeError) as info:
        call(memory)
    assert str(info.value) == f"{field} holds a lone UTF-16 surrogate (half of a split emoji?): send valid Unicode"
    assert not list((root / "daily").glob("*/keep-*.md"))  # nothing stored


def test_a_question_holding_a_lone_surrogate_is_searched(tmp_path: Path) -> None:
    memory = Memory(load_settings(workspace=str(workspace(tmp_path / "ws")), semantic="off"))
    result = memory.search("zqsplit \ud800")
    assert "\ufffd" in result.query and [h.path for h in result.results] == ["session/dialog/split.jsonl"]
    result.model_dump_json()  # what a face writes out
