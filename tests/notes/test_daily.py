"""Daily notes and the day index in ReMe's format."""

from __future__ import annotations

from pathlib import Path

import pytest

from reme_mcp.errors import ReMeError
from reme_mcp.notes.daily import (
    REQUEST_KEY,
    DayIndex,
    NoteInfo,
    check_note_name,
    derive_name,
)
from reme_mcp.storage.documents import split_front_matter
from reme_mcp.storage.workspace import Workspace
from tests.conftest import refresh_day_index, render_day_index


@pytest.mark.parametrize(
    "bad",
    ["", ".", "..", " x", "x ", "a/b", "a\\b", "a:b", "a*b", "a?b", 'a"b', "a<b", "a|b", "x.", "CON", "lpt1", "a\x01"],
)
def test_unsafe_names_refused(bad: str) -> None:
    with pytest.raises(ReMeError):
        check_note_name(bad)


def test_safe_names_accepted() -> None:
    for good in ["go-backend", "发布冻结", "release freeze 2", "v2.3-notes"]:
        assert check_note_name(good) == good


def test_derived_names_are_safe() -> None:
    for content in ["# Title: with <bad> chars?", "请记住，这个项目的测试口令是蓝鲸-731。", "CON", "***", "x" * 500]:
        check_note_name(derive_name(content))


def test_day_index_block_format() -> None:
    notes = [
        NoteInfo("daily/2026-11-28/b.md", {"name": "b", "description": "two\nlines", "session_id": "s", "tags": ["x"]}),
        NoteInfo("daily/2026-11-28/a.md", {"name": "a", "description": "", "schema_version": 2, "owner": "me"}),
    ]
    text = render_day_index("2026-11-28", notes, None)
    meta, _ = split_front_matter(text)
    assert meta == {"name": "2026-11-28", "description": "2 note(s) today."}
    assert "- [[daily/2026-11-28/b.md]] name: b description: two lines tags: ['x']\n" in text
    assert "- [[daily/2026-11-28/a.md]] name: a owner: me\n" in text
    # ReMe's layout: sorted keys, a blank line after the front matter, no trailing new line.
    assert text.startswith("---\ndescription: 2 note(s) today.\nname: '2026-11-28'\n---\n\n<!-- notes:auto -->\n")
    assert text.endswith("<!-- /notes:auto -->")
    assert text.count("<!-- notes:auto -->") == 1


def test_refresh_keeps_person_text_byte_for_byte(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    person = "A person's line.\n\n  indented   text  \n\n"
    after = "\nTrailing words.\n"
    (tmp_path / "daily/2026-11-28").mkdir(parents=True)
    (tmp_path / "daily/2026-11-28.md").write_text(
        f"---\nname: '2026-11-28'\ndescription: No notes today.\n---\n{person}<!-- notes:auto -->\n(none)\n"
        f"<!-- /notes:auto -->{after}"
    )
    (tmp_path / "daily/2026-11-28/a.md").write_text("---\nname: a\ndescription: d\n---\nbody\n")
    refresh_day_index(ws, "2026-11-28")
    text = (tmp_path / "daily/2026-11-28.md").read_text()
    body = text.split("---\n", 2)[2]
    assert body.startswith(person)
    assert body.endswith(after)
    assert "- [[daily/2026-11-28/a.md]] name: a description: d" in body
    assert "description: 1 note(s) today." in text


def test_missing_block_is_appended_after_body(tmp_path: Path) -> None:
    existing = "---\nname: '2026-11-28'\n---\nOnly my words."
    text = render_day_index("2026-11-28", [], existing)
    assert text.endswith("Only my words.\n\n<!-- notes:auto -->\n(none)\n<!-- /notes:auto -->")
    assert "description: No notes today." in text


def test_day_index_finds_a_note_by_request_before_content_and_never_overwrites(tmp_path: Path) -> None:
    days = DayIndex(Workspace(tmp_path))
    first = days.write_note("2026-11-28", "Deploys", {"description": "d", REQUEST_KEY: "sha256:r1"}, "Same body.")
    second = days.write_note("2026-11-28", "deploys", {"description": "d"}, "Same body.")
    assert (first, second) == ("daily/2026-11-28/Deploys.md", "daily/2026-11-28/deploys-2.md")  # a case twin is taken
    notes = days.notes("2026-11-28")
    assert [n.path for n in notes] == [first, second]
    assert days.find("2026-11-28", "sha256:r1", notes[1].body_hash) == first
    assert days.find("2026-11-28", "sha256:other", notes[1].body_hash) == first  # by body: the first holding it
    assert days.find("2026-11-28", None, "0" * 64) is None
    assert days.refresh("2026-11-28") == "daily/2026-11-28.md"
    assert days.days() == ["2026-11-28"]
    meta, _ = split_front_matter((tmp_path / second).read_text(encoding="utf-8"))
    assert meta["name"] == "deploys-2"
