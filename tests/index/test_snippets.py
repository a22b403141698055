"""Snippets (reme_mcp/index/snippets.py): the cut is centred where the analyzer says the query matched."""

from __future__ import annotations

from pathlib import Path

from reme_mcp.config import load_settings
from reme_mcp.index.snippets import first_match, snippet
from reme_mcp.ops.memory import Memory
from tests.conftest import write

FILLER = "Nothing of interest is said in this sentence at all. " * 40


def test_accented_words_are_found_as_the_analyzer_folds_them(tmp_path: Path) -> None:
    """The query "Café résumé" analyses to cafe and resum: the snippet must show café ... résumé."""
    root = tmp_path / "ws"
    write(root, "digest/cv.md", f"# CV\n\n{FILLER}Her café résumé lists three jobs.\n")
    result = Memory(load_settings(str(root), "UTC")).search("Café résumé", max_chars=200)
    assert result.results[0].path == "digest/cv.md"
    assert result.truncated
    assert "café résumé" in result.results[0].snippet


def test_first_match_is_the_first_analysed_token_among_the_terms() -> None:
    text = "Deploying on Friday. The deployment of ＡＢＣ and getHTTPResponse."
    assert first_match(text, {"deploy"}) == 0  # stemmed: deploying -> deploy
    assert first_match(text, {"abc"}) == text.index("ＡＢＣ")  # width-folded, offsets of the original
    assert first_match(text, {"respons"}) == text.index("Response")  # an identifier's part
    assert first_match(text, {"nowhere"}) is None
    assert first_match("我们决定把数据库迁移", {"迁移"}) == 8  # a CJK bigram


def test_cut_keeps_a_quarter_of_the_budget_before_the_match_and_marks_both_ends() -> None:
    text = "a " * 200 + "needle " + "b " * 200
    cut, was_cut = snippet(text, {"needl"}, 100)
    assert was_cut and cut.startswith("…") and cut.endswith("…")
    assert len(cut) == 102 and cut.index("needle") == 1 + 25


def test_no_match_or_short_text_keeps_the_start() -> None:
    text = "x " * 100
    assert snippet(text, {"needl"}, 50) == (text[:50] + "…", True)
    assert snippet("short text", {"needl"}, 50) == ("short text", False)
    assert snippet(text, set(), 50)[0].startswith("x x")


def test_a_match_past_the_scanned_prefix_keeps_the_start() -> None:
    from reme_mcp.index.snippets import MAX_SCAN_CHARS

    text = "filler " * (MAX_SCAN_CHARS // 7 + 10) + "needle"
    assert snippet(text, {"needl"}, 100)[0].startswith("filler")
    near = "filler " * 100 + "needle " + "filler " * 100
    assert "needle" in snippet(near, {"needl"}, 100)[0]
