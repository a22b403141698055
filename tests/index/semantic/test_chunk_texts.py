"""What the model reads of each file the index holds, from the index's own stored fields."""

from __future__ import annotations

from pathlib import Path

from reme_mcp.index import MemoryIndex
from reme_mcp.index.semantic.chunk_texts import CONTEXT_CHARS, FileTexts, file_texts
from reme_mcp.index.store import IndexStore
from reme_mcp.storage.workspace import Workspace
from tests.conftest import message, write

WHEN = "2026-11-28T10:00:00+08:00"
LONG = ("The ferry left at dawn and " + "the sea was calm all the way across the strait " * 4).strip()


def _read(tmp_path: Path) -> dict[str, FileTexts]:
    root = tmp_path / "ws"
    turns = [
        ("Ana", "user", LONG),
        ("Ben", "assistant", "How did the lemon tart turn out?"),
        ("Ana", "user", "Super good! Everyone asked for seconds."),
    ]
    lines = [message(f"m{i}", who, role, text, WHEN) for i, (who, role, text) in enumerate(turns)]
    write(root, "session/dialog/s1.jsonl", "\n".join(lines) + "\n")
    write(root, "digest/tart.md", "---\nname: tart\n---\n## Recipe\nLemon, butter, eggs.\n\n## Oven\n180 degrees.\n")
    write(
        root,
        "daily/2026-11-28/pastry.md",
        "---\nname: pastry\ndescription: 'Why the tart\n  crust went soggy'\n---\n## Crust\nBlind-bake it first.\n\n## Filling\nLess juice.\n",
    )
    (root / "resource").mkdir()
    (root / "resource" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))  # a file, no chunks
    ws = Workspace(root)
    index = MemoryIndex(ws, home=tmp_path / "indexes")
    index.sync(force=True)
    searcher = IndexStore(ws, index.folder).own_searcher()
    try:
        read = file_texts(searcher.all_stored_fields())
    finally:
        searcher.close()
    index.close()
    return {item.path: item for item in read}


def test_a_reply_is_read_with_who_said_it_and_the_start_of_what_it_answers(tmp_path: Path) -> None:
    dialog = _read(tmp_path)["session/dialog/s1.jsonl"]
    assert dialog.content_hash
    assert [key.start_line for key in dialog.chunks] == sorted(key.start_line for key in dialog.chunks)
    first, question, reply = dialog.texts
    assert first == f"Ana: {LONG}"  # nothing before it
    assert question.startswith("Ben: How did the lemon tart turn out? (Ana: The ferry left at dawn")
    assert LONG not in question  # only the start of a long message is read with its reply
    assert len(question) <= len("Ben: How did the lemon tart turn out? ") + len("(Ana: )") + CONTEXT_CHARS
    assert reply == "Ana: Super good! Everyone asked for seconds. (Ben: How did the lemon tart turn out?)"


def test_a_note_is_read_as_written_section_by_section(tmp_path: Path) -> None:
    note = _read(tmp_path)["digest/tart.md"]
    assert note.content_hash
    assert len(note.texts) == len(note.chunks) == 2
    assert "Lemon, butter, eggs." in note.texts[0] and "(" not in note.texts[0]
    assert "180 degrees." in note.texts[1]


def test_a_note_is_read_with_its_description_once_at_its_start(tmp_path: Path) -> None:
    # The description is the note's own summary (ReMe writes one for each note): a question
    # in other words meets it more often than the body's details.
    read = _read(tmp_path)
    note = read["daily/2026-11-28/pastry.md"]
    assert note.texts[0].startswith("Why the tart crust went soggy\n") and "Blind-bake it first." in note.texts[0]
    assert "soggy" not in note.texts[1]
    assert not any("(" in text for text in note.texts)
    assert read["digest/tart.md"].texts[0].startswith("## Recipe")  # no description, nothing added
    assert all("soggy" not in text for text in read["session/dialog/s1.jsonl"].texts)
    assert read["resource/logo.png"].texts == []  # a file with no chunks is read as none
