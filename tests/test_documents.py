"""Parsing Markdown, front matter, JSONL dialogs and wikilinks into chunks."""

from __future__ import annotations

from reme_mcp.documents import (
    chunk_markdown,
    parse_dialog,
    parse_markdown,
    parse_message,
    split_front_matter,
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
