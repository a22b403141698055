"""What the model reads of each file the index holds: its chunks in line order, each text as
the semantic stage embeds it (a dialog message with who said it and the start of the message
before it), with the file's content hash of the same generation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reme_mcp.index.schema import FILE_RECORD
from reme_mcp.index.semantic.models import language_means
from reme_mcp.index.semantic.vector_format import ChunkKey


@dataclass
class FileTexts:
    """One file's chunks and the texts the model reads of them, in line order."""

    path: str
    content_hash: str
    chunks: list[ChunkKey]
    texts: list[str]


# How much of the message a dialog message answers is read with it (_embedded_texts), in
# what is left of a window of WINDOW_TOKENS tokens ("passage: " and the model's marks
# aside), when that is at least MIN_ASIDE_TOKENS. The room is an estimate (tokens_about):
# a message it underestimates spills into a second window, as before this estimate did a
# third of bench/semantic_perf.py's dialog messages.
CONTEXT_CHARS = 100
WINDOW_TOKENS = 92
MIN_ASIDE_TOKENS = 4


def _said(fields: dict[str, Any]) -> tuple[str, str]:
    """A chunk's speaker (empty outside a dialog) and its text."""
    return " ".join(str(fields.get("speaker") or "").split()), str(fields.get("content") or "")


def _summary(fields: dict[str, Any]) -> str:
    """A file's description, as its front matter gives it (the same in each of its chunks)."""
    return " ".join(str(fields.get("description") or "").split())


def _embedded_texts(said: list[tuple[str, str]]) -> list[str]:
    """What the model reads of a file's chunks, in line order, from each one's (speaker, text).

    A dialog message is read with who said it, then the start of the message before it, in
    brackets. A question names people ("What did Caroline ..."), and a message's words rarely
    do; and a reply ("Super good! Everyone asked for seconds.") is about what it answers
    ("How did the lemon tart turn out?"). The message comes first, and the message before
    fills only what is left of the model's first window (runtime.MAX_EMBED_TOKENS, about):
    a long message is read whole in windows of its own (models/windows.py), and none of them is
    spent on the message before. On LoCoMo the model's own ranking found a question's
    evidence in its top 5 for 19% of questions from the messages alone, 46% with the
    speaker's name and 60% with the message before (docs/semantic.md).
    """
    texts: list[str] = []
    for i, (speaker, content) in enumerate(said):
        if not speaker:
            texts.append(content)
            continue
        text = f"{speaker}: {content}"
        before_speaker, before = said[i - 1] if i else ("", "")
        if before_speaker:
            aside = f"{before_speaker}: {before[:CONTEXT_CHARS].strip()}"
            room = WINDOW_TOKENS - tokens_about(text)
            if room >= MIN_ASIDE_TOKENS:
                text += f" ({aside[: len(aside) * room // max(1, tokens_about(aside))]})"
        texts.append(text)
    return texts


def tokens_about(text: str) -> int:
    """About how many tokens a text is: a CJK letter is about one, four other characters are."""
    share = language_means.cjk_share(text)
    return int(len(text) * (share + (1.0 - share) / 4))


def file_texts(docs: Iterable[dict[str, Any]]) -> list[FileTexts]:
    """Chunks grouped by file, in line order, with the content hash of the same generation."""
    files: dict[str, FileTexts] = {}
    said: dict[str, list[tuple[str, str]]] = {}
    summaries: dict[str, str] = {}
    for fields in docs:
        path = str(fields["path"])
        item = files.setdefault(path, FileTexts(path, "", [], []))
        if fields.get("kind") == FILE_RECORD:
            item.content_hash = str(fields.get("content_hash") or fields.get("stamp") or "")
            continue
        item.chunks.append(
            ChunkKey(str(fields["chunk_id"]), path, int(fields.get("start_line") or 1), str(fields.get("date") or ""))
        )
        said.setdefault(path, []).append(_said(fields))
        summaries.setdefault(path, _summary(fields))
    for item in files.values():
        order = sorted(range(len(item.chunks)), key=lambda i: item.chunks[i].start_line)
        item.texts = _embedded_texts([said[item.path][i] for i in order])
        item.chunks = [item.chunks[i] for i in order]
        # A note is read with its description first, on a line of its own: the summary ReMe
        # writes for it meets a question in other words more often than the body's details
        # (docs/semantic.md, "What is embedded"). Not a dialog: its messages have no summary.
        summary = summaries.get(item.path, "")
        dialog = any(speaker for speaker, _ in said.get(item.path, []))
        if item.texts and summary and not dialog and summary not in item.texts[0]:
            item.texts[0] = f"{summary}\n{item.texts[0]}"
    return [item for item in files.values() if item.content_hash]
