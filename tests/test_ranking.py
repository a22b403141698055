"""Ranking helpers: date words, neighbour context and de-duplication of repeated text."""

from __future__ import annotations

from dataclasses import dataclass

from reme_mcp.documents import Chunk
from reme_mcp.index.ranking import context_texts, date_words, diversify


def test_date_words() -> None:
    assert date_words("2023-05-08") == "2023 may 8"
    assert date_words("2026-12-31") == "2026 december 31"
    assert date_words("2026-13-01") == ""
    assert date_words("") == "" and date_words("not a date") == ""


def test_context_is_the_neighbours_terms_for_dialogs_only() -> None:
    chunks = [Chunk(i, i, text) for i, text in enumerate(["alpha", "bravo", "tango", "delta", "echo"], start=1)]
    contexts = context_texts(chunks, "dialog")
    assert set(contexts[2].split()) == {"alpha", "bravo", "delta", "echo"}
    assert set(contexts[0].split()) == {"bravo", "tango"}
    assert "tango" not in contexts[2].split()  # a message's own words are not its context
    assert context_texts(chunks, "daily") == [""] * 5


@dataclass(frozen=True)
class Hit:
    path: str
    start_line: int
    end_line: int
    content: str


def test_repeated_text_moves_behind_the_rest() -> None:
    hits = [
        Hit("a.md", 1, 1, "The freeze starts Friday."),
        Hit("b.md", 4, 4, "the  freeze starts friday."),
        Hit("c.md", 2, 2, "Something else."),
        Hit("a.md", 2, 2, "Neighbouring evidence."),
    ]
    assert [h.path + str(h.start_line) for h in diversify(hits, 4)] == ["a.md1", "c.md2", "a.md2", "b.md4"]
    assert len(diversify(hits, 2)) == 2
