"""What the memory page shows, through its operations (reme_mcp.ops.page.timeline, note_view,
search_view) on real workspaces, and how a note's Markdown becomes HTML (faces/view/markdown.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError
from reme_mcp.faces.view.markdown import render_markdown
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.page.note_view import MAX_SHOWN_CHARS, note_view
from reme_mcp.ops.page.search_view import search_page
from reme_mcp.ops.page.timeline import TimelineReader, weekly
from tests.faces.view_server import CHAIN, message, seed, write


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    return Memory(load_settings(str(seed(tmp_path / "ws")), "UTC"))


def test_the_timeline_is_newest_first_with_sessions_per_host(memory: Memory) -> None:
    found = TimelineReader(memory).read()
    assert [d.date for d in found.days] == ["2026-12-01", "2026-11-25", "2026-11-20"]
    first = found.days[0]
    assert [n.path for n in first.notes] == ["daily/2026-12-01/deploy-window.md", CHAIN[2]]
    assert [(h.host, [s.path for s in h.sessions]) for h in first.hosts] == [
        ("codex", ["session/dialog/codex/s-codex-1.jsonl"])
    ]
    assert [h.host for h in found.days[1].hosts] == ["claude-code"]
    old = next(n for n in found.days[2].notes if n.path == CHAIN[0])
    assert old.superseded_by == [CHAIN[2]]
    assert found.per_day == {"2026-12-01": 3, "2026-11-25": 3, "2026-11-20": 1}
    assert found.total == 7 and found.older is None


def test_the_timeline_pages_by_whole_days(memory: Memory) -> None:
    reader = TimelineReader(memory)
    first = reader.read(max_entries=3)
    assert [d.date for d in first.days] == ["2026-12-01"] and first.older == "2026-12-01"
    rest = reader.read(before=first.older, max_entries=3)
    assert [d.date for d in rest.days] == ["2026-11-25"] and rest.older == "2026-11-25"
    assert [d.date for d in reader.read(before=rest.older).days] == ["2026-11-20"]
    with pytest.raises(ReMeError, match="before"):
        reader.read(before="yesterday")


def test_a_dialog_is_dated_by_its_first_message_and_redated_when_it_changes(memory: Memory) -> None:
    reader = TimelineReader(memory)
    dialog = "session/dialog/hermes/s-h.jsonl"
    write(memory.ws.root, dialog, message("hello", "2026-10-02T08:00:00+00:00") + "\n")
    assert reader.read().per_day["2026-10-02"] == 1
    write(memory.ws.root, dialog, message("hello again", "2026-10-05T08:00:00+00:00") + "\n")
    os.utime(memory.ws.root / dialog, (1_800_000_000, 1_800_000_000))
    memory.index.sync(force=True)
    per_day = reader.read().per_day
    assert "2026-10-02" not in per_day and per_day["2026-10-05"] == 1
    undated = "session/dialog/undated.jsonl"  # ReMe's own folder; no date inside: the file's day
    write(memory.ws.root, undated, '{"content": "no time"}\n')
    os.utime(memory.ws.root / undated, (1_790_000_000, 1_790_000_000))  # 2026-09-21 UTC
    memory.index.sync(force=True)
    day = next(d for d in reader.read(max_entries=1000).days if d.date == "2026-09-21")
    assert [h.host for h in day.hosts] == ["reme"]


def test_weeks_start_on_monday() -> None:
    assert weekly({"2026-11-30": 2, "2026-12-06": 1, "2026-12-07": 4}) == {"2026-11-30": 3, "2026-12-07": 4}


def test_a_note_knows_its_versions_links_and_session(memory: Memory) -> None:
    middle = note_view(memory, CHAIN[1])
    assert middle.supersedes == [CHAIN[0]] and middle.superseded_by == [CHAIN[2]]
    assert middle.front_matter["name"] == "port-v2" and "9090" in middle.body and "---" not in middle.body
    last = note_view(memory, CHAIN[2])
    assert last.superseded_by == [] and last.session == "session/dialog/codex/s-codex-1.jsonl"
    assert [x.path for x in last.links_out] == [CHAIN[1]]
    linked = note_view(memory, "digest/wiki/deploy.md")
    assert [x.path for x in linked.links_in] == ["daily/2026-12-01/deploy-window.md"]
    dialog = note_view(memory, "session/dialog/codex/s-codex-1.jsonl")
    assert dialog.messages is not None and [m.text for m in dialog.messages][1] == "Port 7070 after the cut-over."


def test_a_note_names_newer_versions_the_search_tool_would(memory: Memory) -> None:
    write(memory.ws.root, "daily/2026-12-02/oncall.md", "---\nname: oncall\n---\nThe on-call rotation lead is Alice.\n")
    write(
        memory.ws.root, "daily/2026-12-04/oncall-2.md", "---\nname: oncall-2\n---\nThe on-call rotation lead is Bob.\n"
    )
    assert note_view(memory, "daily/2026-12-02/oncall.md").possibly_outdated_by == ["daily/2026-12-04/oncall-2.md"]
    assert note_view(memory, "daily/2026-12-04/oncall-2.md").possibly_outdated_by == []
    # The search tool marks the same pair when a query does not name either value.
    hits = memory.search("on-call rotation lead", limit=10).results
    assert next(h.possibly_outdated_by for h in hits if h.path == "daily/2026-12-02/oncall.md") == [
        "daily/2026-12-04/oncall-2.md"
    ]


def test_a_huge_note_is_cut_and_private_or_outside_paths_are_refused(memory: Memory) -> None:
    write(memory.ws.root, "daily/2026-12-03/huge.md", "x" * (MAX_SHOWN_CHARS + 10))
    huge = note_view(memory, "daily/2026-12-03/huge.md")
    assert huge.cut and len(huge.body) == MAX_SHOWN_CHARS
    for bad in ("../outside.md", "metadata/reme-mcp/x", "daily/2026-01-01/missing.md"):
        with pytest.raises(ReMeError):
            note_view(memory, bad)


def test_search_page_is_the_search_tool_with_plain_snippets(memory: Memory) -> None:
    page = search_page(memory, "billing port", limit=10)
    tool = memory.search("billing port", limit=10, max_chars=12_000)
    assert [h.path for h in page.results] == [h.path for h in tool.results]
    assert all("reme-context" not in h.snippet for h in page.results)
    assert {h.path for h in search_page(memory, "billing", kind="dialog").results} <= {
        "session/dialog/codex/s-codex-1.jsonl",
        "session/dialog/claude-code/s-claude-1.jsonl",
    }
    with pytest.raises(ReMeError, match="kind"):
        search_page(memory, "billing", kind="secrets")


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[a](javascript:alert(1))",
        "[a](JaVaScRiPt:alert(1))",
        "[a](  javascript:alert(1) )",
        "[a](jav&#x09;ascript:alert(1))",
        "[a](vbscript:msgbox(1))",
        "[a](data:text/html;base64,PHNjcmlwdD4=)",
        "<javascript:alert(1)>",
        "[a][r]\n\n[r]: javascript:alert(1)",
        '<a href="https://x.example" onclick="alert(1)">x</a>',
        "![i](https://tracker.example/pixel.png)",
        '<svg onload="alert(1)"></svg>',
    ],
)
def test_markdown_renders_inert(markdown: str) -> None:
    html = render_markdown(markdown)
    assert "<script" not in html and "<img" not in html and "<svg" not in html and '<a href="https://x' not in html
    assert not re.search(r"<[a-z][^>]*\son[a-z]+=", html)  # no event attribute on any real tag
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all(h.startswith(("/note?path=", "https://", "http://", "#")) for h in hrefs), hrefs


def test_markdown_links_open_notes_or_the_web_without_referrer() -> None:
    html = render_markdown("[[daily/2026-12-01/a b.md#L2-L3]] [[x.md|label]] [w](https://example.org) [n](digest/a.md)")
    assert 'href="/note?path=daily/2026-12-01/a%20b.md" class="wikilink">daily/2026-12-01/a b.md#L2-L3</a>' in html
    assert '<a href="/note?path=x.md" class="wikilink">label</a>' in html
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">w</a>' in html
    assert '<a href="/note?path=digest/a.md">n</a>' in html
    assert "<pre><code>[[not a link]]\n</code></pre>" in render_markdown("    [[not a link]]")
