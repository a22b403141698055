"""The names reme-mcp makes are legal on Windows, whatever text they are made from."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reme_mcp.ingest.dialog import dialog_name
from reme_mcp.notes.daily import derive_name
from reme_mcp.projects.identity import readable_name
from reme_mcp.storage.file_names import legal_name, windows_problem

# Text that leans on what Windows refuses: its forbidden characters, dots, blanks, device names.
HOSTILE = st.lists(
    st.sampled_from(["<", ">", ":", '"', "/", "\\", "|", "?", "*", ".", " ", "\x00", "\x1f", "\x7f"])
    | st.sampled_from(["CON", "con", "PRN", "aux", "NUL", "COM1", "lpt9", "COM\u00b9", "CONIN$", "conout$"])
    | st.text(min_size=0, max_size=6),
    max_size=8,
).map("".join)


@pytest.mark.parametrize(
    "name",
    [
        "CON",
        "con.md",
        "Aux.tar.gz",
        "nul ",
        "COM1",
        "lpt\u00b2.txt",
        "a:b",
        "why?",
        "x*y",
        'say"hi"',
        "a|b",
        "<tag>",
        "back\\slash",
        "dot.",
        "space ",
        "",
        ".",
        "..",
        "bell\x07",
    ],
)
def test_names_windows_refuses_are_named_as_such(name: str) -> None:
    assert windows_problem(name) is not None
    assert windows_problem(legal_name(name, "note")) is None


@pytest.mark.parametrize("name", ["go-backend", "蓝鲸-731", "console", "com10", "null", "a.b", "CONX.md", "lpt"])
def test_names_windows_accepts_pass_unchanged(name: str) -> None:
    assert windows_problem(name) is None
    assert legal_name(name, "note") == name


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_every_name_made_from_text_is_legal(text: str) -> None:
    assert windows_problem(legal_name(text, "note")) is None
    assert windows_problem(f"{derive_name(text)}.md") is None
    assert windows_problem(dialog_name(text, "origin")) is None
    # A project's folder is its readable name and a short id.
    assert windows_problem(f"{readable_name(text)}-0123456789") is None
