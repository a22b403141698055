"""Parsing Markdown, front matter, JSONL dialogs and wikilinks into chunks."""

from __future__ import annotations

import pytest

from reme_mcp.errors import ReMeError
from reme_mcp.storage.documents import (
    chunk_markdown,
    parse_dialog,
    parse_markdown,
    parse_message,
    split_front_matter,
    text_window,
    wikilinks,
)


def test_front_matter_and_body_start() -> None:
    meta, start = split_front_matter("---\nname: a\ndescription: b\nextra: [1, 2]\n---\nbody\n")
    assert meta == {"name": "a", "description": "b", "extra": [1, 2]}
    assert start == 5


def test_broken_and_hostile_front_matter_degrade_to_empty() -> None:
    assert split_front_matter("---\nname: [unclosed\n---\nbody")[0] == {}
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]\n---\n"
    assert split_front_matter(bomb)[0] == {}
    assert split_front_matter("---\n- a list\n---\nbody")[0] == {}
    assert split_front_matter("no front matter") == ({}, 0)
    assert split_front_matter("---\nname: never closed\n") == ({}, 0)


def test_markdown_chunks_by_heading_with_file_line_numbers() -> None:
    text = "---\nname: n\n---\nintro line\n\n# One\nfirst\n\n## Two\nsecond\n```\n# not a heading\n```\n"
    doc = parse_markdown(text)
    spans = [(c.start_line, c.end_line, c.text.split("\n")[0]) for c in doc.chunks]
    assert spans == [(4, 4, "intro line"), (6, 7, "# One"), (9, 13, "## Two")]


def test_long_sections_split_at_blank_lines() -> None:
    paragraphs = [("word " * 60).strip() for _ in range(20)]
    lines = "\n\n".join(paragraphs).split("\n")
    chunks = chunk_markdown(lines, 1)
    assert len(chunks) > 3
    assert all(len(c.text) < 3000 for c in chunks)
    covered = [n for c in chunks for n in range(c.start_line, c.end_line + 1)]
    assert covered == sorted(covered) and len(set(covered)) == len(covered)


def test_dialog_one_chunk_per_message_skipping_broken_lines() -> None:
    lines = [
        '{"name": "Caroline", "role": "user", "content": [{"type": "text", "text": "Hi"}], '
        '"created_at": "2023-05-08T13:56:00+08:00"}',
        '{"truncated": ',
        '"just a string"',
        '{"name": "Mel", "role": "assistant", "content": "plain string content"}',
        '{"name": "tool", "content": [{"type": "tool_result", "output": "x"}]}',
    ]
    doc = parse_dialog("\n".join(lines))
    assert [(c.start_line, c.speaker, c.text) for c in doc.chunks] == [
        (1, "Caroline", "Hi"),
        (4, "Mel", "plain string content"),
    ]
    assert doc.chunks[0].date == "2023-05-08"


def test_message_render_is_readable() -> None:
    msg = parse_message('{"name": "Caroline", "role": "user", "content": "Hi", "created_at": "2023-05-08"}')
    assert msg is not None
    assert msg.render() == "Caroline (user) [2023-05-08]: Hi"


def test_wikilinks_strip_anchors_and_aliases() -> None:
    text = "see [[daily/2026-11-28/a.md#L9-L10]] and [[digest/wiki/b.md|B]] and [[daily/2026-11-28/a.md]] [[ ]]"
    assert wikilinks(text) == ["daily/2026-11-28/a.md", "digest/wiki/b.md"]


def test_text_window_stops_before_the_budget_and_says_where_to_go_on() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 11))
    window = text_window(text, 3, None, 21, dialog=False, shown_as="a.txt")  # 7 characters a line
    assert window.lines == ["line 3", "line 4", "line 5"] and (window.first, window.last) == (3, 5)
    assert window.next_line == 6 and window.total == 10
    assert text_window(text, 3, None, 20, dialog=False, shown_as="a.txt").next_line == 5
    whole = text_window(text, None, 4, 10_000, dialog=False, shown_as="a.txt")
    assert whole.lines == ["line 1", "line 2", "line 3", "line 4"] and whole.next_line is None


def test_text_window_always_moves_on_and_numbers_dialog_lines_as_the_file_does() -> None:
    long = text_window("x" * 500 + "\nnext\n", None, None, 100, dialog=False, shown_as="a.txt")
    assert long.lines == ["x" * 100 + "…"] and long.next_line == 2
    dialog = '{"role": "user", "name": "Ann", "content": "Hi"}\nnot json\n'
    assert text_window(dialog, None, None, 1000, dialog=True, shown_as="d.jsonl").lines == [
        "1: Ann (user): Hi",
        "2: (no readable message)",
    ]
    empty = text_window("", None, None, 100, dialog=False, shown_as="e.txt")
    assert (empty.first, empty.last, empty.total, empty.lines) == (1, 0, 0, [])


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [(0, None, "lines start at 1"), (5, 2, "before start_line"), (99, None, "past the end: a.txt has 2 lines")],
)
def test_text_window_refuses_impossible_ranges(start: int, end: int | None, message: str) -> None:
    with pytest.raises(ReMeError, match=message):
        text_window("a\nb\n", start, end, 100, dialog=False, shown_as="a.txt")
