"""A dialog hit that asks a question comes back with its reply, within the same snippet budget."""

from __future__ import annotations

from pathlib import Path

from reme_mcp.config import load_settings
from reme_mcp.index.question_reply import is_question
from reme_mcp.ops.memory import Memory
from tests.conftest import message, write

WHEN = "2026-11-28T10:00:00+08:00"


def _dialog(root: Path, rel: str, turns: list[tuple[str, str]]) -> None:
    lines = [
        message(f"m{i}", who, "user" if who == "Ana" else "assistant", text, WHEN)
        for i, (who, text) in enumerate(turns)
    ]
    write(root, rel, "\n".join(lines) + "\n")


def _memory(tmp_path: Path) -> Memory:
    root = tmp_path / "ws"
    _dialog(
        root,
        "session/dialog/s1.jsonl",
        [
            ("Ana", "Good morning!"),
            ("Ben", "Where did you spend the winter holidays with the quokka?"),
            ("Ana", "On Rottnest Island, last December."),
            ("Ben", "The quokka photos came out well."),
            ("Ana", "Thanks, the ferry was early."),
            ("Ben", "Did the quokka sanctuary open again？"),
            ("Ana", "是的，上周重新开放了。"),
        ],
    )
    _dialog(root, "session/dialog/s2.jsonl", [("Ben", "Anyone seen the wombat?")])
    write(
        root, "digest/notes.md", "---\nname: notes\n---\n## Asked\nIs the wombat a marsupial?\n\n## Told\nYes, it is.\n"
    )
    return Memory(load_settings(workspace=str(root)))


def _hit(memory: Memory, query: str, path: str) -> tuple[int, int, str]:
    result = memory.search(query, limit=10)
    hit = next(h for h in result.results if h.path == path)
    return hit.start_line, hit.end_line, hit.snippet


def test_a_question_hit_returns_with_the_reply_that_follows(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    start, end, snippet = _hit(memory, "winter holidays", "session/dialog/s1.jsonl")
    assert (start, end) == (2, 3)
    assert "winter holidays with the quokka?" in snippet and "Rottnest Island, last December." in snippet
    # The full-width question mark asks too; the reply is kept as written.
    start, end, snippet = _hit(memory, "quokka sanctuary", "session/dialog/s1.jsonl")
    assert (start, end) == (6, 7) and "是的，上周重新开放了。" in snippet
    assert memory.read("session/dialog/s1.jsonl", start, end).end_line == 7


def test_other_hits_stay_as_they_are(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    assert _hit(memory, "photos came out", "session/dialog/s1.jsonl")[:2] == (4, 4)  # no question
    assert _hit(memory, "wombat seen", "session/dialog/s2.jsonl")[:2] == (1, 1)  # a question on the last line
    _, end, snippet = _hit(memory, "wombat marsupial", "digest/notes.md")  # a note's section is no dialog
    assert end < 7 and "Yes, it is" not in snippet


def test_the_exchange_keeps_the_snippet_budget(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    long_reply = "On Rottnest Island, " + "with the whole family and the dog, " * 20 + "last December."
    _dialog(
        tmp_path / "ws",
        "session/dialog/s1.jsonl",
        [("Ben", "Where did you spend the winter holidays with the quokka?"), ("Ana", long_reply)],
    )
    wide = memory.search("winter holidays quokka", limit=1, max_chars=4000).results[0]
    assert (wide.start_line, wide.end_line) == (1, 2) and long_reply in wide.snippet
    tight = memory.search("winter holidays quokka", limit=1, max_chars=120).results[0]
    assert (tight.start_line, tight.end_line) == (1, 2)
    body = tight.snippet.split("\n")
    shown = "\n".join(body[2:-1])  # inside the boundary: after its preamble, before its end tag
    assert "winter holidays" in shown and len(shown.replace("…", "")) <= 120


def test_is_question() -> None:
    assert is_question("Really?") and is_question("真的吗？") and not is_question("Yes.")
