"""Documents: turning workspace files (Markdown, JSONL dialogs, plain text) into chunks, links and windows.

Pure functions over text. A chunk is the unit of search: it knows its lines
(1-based, inclusive), so a hit can point at exactly the part of the file that matched.
A window is the unit of reading: some of a file's lines, dialogs as readable messages.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from typing import Any

from reme_mcp.errors import ReMeError
from reme_mcp.storage.text import readable
from reme_mcp.storage.workspace import DATE_RE

# The day index's machine-managed block (workspace-format.md). A format marker: the day
# index writer (daily) and the indexer (which keeps the block out of search) both read it here.
BLOCK_START = "<!-- notes:auto -->"
BLOCK_END = "<!-- /notes:auto -->"
MAX_CHUNK_CHARS = 1500
# A file of a million one-word headings or messages would otherwise become a million index
# documents and hold the server for minutes; past this, neighbouring chunks are grouped so
# that every word stays searchable in a bounded number of chunks.
MAX_CHUNKS_PER_FILE = 2000
MAX_FRONT_MATTER_CHARS = 32_000
_HEADING_RE = re.compile(r"^(#{1,6})\s+\S")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
WIKILINK_RE = re.compile(r"\[\[([^\[\]\n|#]+)(?:#[^\[\]\n|]*)?(?:\|[^\[\]\n]*)?\]\]")


@dataclass
class Chunk:
    start_line: int
    end_line: int
    text: str
    speaker: str = ""
    time: str = ""
    date: str | None = None


@dataclass
class Document:
    """A parsed file: what the index stores about it."""

    meta: dict[str, Any]
    chunks: list[Chunk]
    links: list[str] = field(default_factory=list)
    body_hash: str = ""


@cache
def _no_alias_loader() -> type[Any]:
    """A safe loader that refuses anchors and aliases: they are how YAML bombs expand.

    Made on first use, as PyYAML is imported: a search on an index in sync parses no front
    matter, and a server's first search is timed from its spawn.
    """
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.events.AliasEvent):
                raise yaml.YAMLError("aliases are not accepted in front matter")
            return super().compose_node(parent, index)

    return NoAliasLoader


def json_safe(value: Any) -> Any:
    """Front-matter values as JSON can carry them (YAML gives dates and other types)."""
    if isinstance(value, dict):
        return {readable(str(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime | date):
        return str(value)  # as ReMe renders it: "2026-11-28 10:00:00", not ISO's "T"
    if isinstance(value, str):
        return readable(value)  # a YAML escape may leave a lone surrogate (text.py)
    if value is None or isinstance(value, int | float | bool):
        return value
    return readable(str(value))


def split_front_matter(text: str) -> tuple[dict[str, Any], int]:
    """The front matter of a Markdown file and the 0-based index of its first body line.

    Broken or hostile YAML gives an empty mapping and the whole file as body:
    one bad note must not stop the rest from being served.
    """
    if not text.startswith("---"):
        return {}, 0
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return {}, 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            block = "\n".join(lines[1:i]) + "\n"  # a block scalar keeps its last line break, as in ReMe
            if len(block) > MAX_FRONT_MATTER_CHARS:
                return {}, i + 1
            import yaml  # imported on first use, as in _no_alias_loader

            try:
                loaded = yaml.load(block, Loader=_no_alias_loader())
            except (yaml.YAMLError, ValueError, RecursionError):
                return {}, i + 1
            return (json_safe(loaded) if isinstance(loaded, dict) else {}), i + 1
    return {}, 0


def meta_text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return " ".join(str(value).split())


def body_hash(body: str) -> str:
    """Identity of a note's content, blind to white-space differences."""
    return hashlib.sha256(" ".join(body.split()).encode("utf-8")).hexdigest()


def wikilinks(text: str) -> list[str]:
    """Targets of `[[X]]` links, without anchors, in order of first appearance."""
    seen: dict[str, None] = {}
    for match in WIKILINK_RE.finditer(text):
        target = match.group(1).strip()
        if target:
            seen.setdefault(target, None)
    return list(seen)


def chunk_markdown(lines: list[str], first_line: int) -> list[Chunk]:
    """Split a Markdown body into heading sections, and long sections at blank lines.

    `lines` is the body; `first_line` is the 1-based file line of its first element.
    Headings inside fenced code blocks are not section breaks.
    """
    sections: list[tuple[int, int]] = []
    start = 0
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        elif not in_fence and i > start and _HEADING_RE.match(line):
            sections.append((start, i))
            start = i
    sections.append((start, len(lines)))
    chunks: list[Chunk] = []
    for begin, end in sections:
        chunks.extend(_split_long(lines, begin, end, first_line))
    return chunks


def _split_long(lines: list[str], begin: int, end: int, first_line: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    piece_start = begin
    size = 0
    for i in range(begin, end):
        size += len(lines[i]) + 1
        boundary = i + 1 == end or (size >= MAX_CHUNK_CHARS and (not lines[i].strip() or size >= 3 * MAX_CHUNK_CHARS))
        if boundary:
            _append_chunk(chunks, lines, piece_start, i + 1, first_line)
            piece_start, size = i + 1, 0
    return chunks


def _append_chunk(chunks: list[Chunk], lines: list[str], begin: int, end: int, first_line: int) -> None:
    # Trim blank lines so a chunk's line range is exactly its text.
    while begin < end and not lines[begin].strip():
        begin += 1
    while end > begin and not lines[end - 1].strip():
        end -= 1
    if begin < end:
        text = "\n".join(lines[begin:end])
        chunks.append(Chunk(first_line + begin, first_line + end - 1, text))


def parse_markdown(text: str) -> Document:
    meta, body_start = split_front_matter(text)
    lines = text.split("\n")
    body_lines = lines[body_start:]
    chunks = chunk_markdown(body_lines, body_start + 1)
    note_date = meta_text(meta, "date")[:10]
    for chunk in chunks:
        chunk.date = note_date if DATE_RE.match(note_date) else None
    body = "\n".join(body_lines)
    return Document(meta=meta, chunks=chunks, links=wikilinks(text), body_hash=body_hash(body))


@dataclass(frozen=True)
class Message:
    """One message of a dialog, as a person would read it."""

    role: str
    name: str
    time: str
    text: str

    def render(self) -> str:
        who = self.name if not self.role or self.name == self.role else f"{self.name} ({self.role})"
        when = f" [{self.time}]" if self.time else ""
        return f"{who or 'unknown'}{when}: {self.text}"


def parse_message(line: str) -> Message | None:
    """An AgentScope message from one JSONL line; None for malformed or empty lines."""
    line = line.strip()
    if not line:
        return None
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    content = obj.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = [
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text")
        ]
        text = "\n".join(parts)
    else:
        text = ""
    if not text.strip():
        return None
    # A JSON escape may leave a lone surrogate (text.py).
    role = readable(str(obj.get("role") or ""))
    name = readable(str(obj.get("name") or role))
    time = readable(str(obj.get("created_at") or obj.get("timestamp") or ""))
    return Message(role=role, name=name, time=time, text=readable(" ".join(text.split())))


def parse_dialog(text: str) -> Document:
    """One chunk per message, on its own file line; broken lines are skipped."""
    chunks: list[Chunk] = []
    links: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        message = parse_message(line)
        if message is None:
            continue
        day = message.time[:10]
        chunks.append(
            Chunk(
                number,
                number,
                message.text,
                speaker=message.name,
                time=message.time,
                date=day if DATE_RE.match(day) else None,
            )
        )
        links.extend(wikilinks(message.text))
    return Document(meta={}, chunks=chunks, links=list(dict.fromkeys(links)))


def parse_plain(text: str) -> Document:
    lines = text.split("\n")
    chunks: list[Chunk] = []
    for begin, end in [(0, len(lines))]:
        chunks.extend(_split_long(lines, begin, end, 1))
    return Document(meta={}, chunks=chunks, links=wikilinks(text))


def parse_document(path: str, text: str) -> Document:
    """Parse a file's text by its format, in at most MAX_CHUNKS_PER_FILE chunks."""
    lower = path.lower()
    if lower.endswith((".md", ".markdown")):
        document = parse_markdown(text)
    elif lower.endswith(".jsonl"):
        document = parse_dialog(text)
    else:
        document = parse_plain(text)
    document.chunks = group_chunks(document.chunks, MAX_CHUNKS_PER_FILE)
    return document


def group_chunks(chunks: list[Chunk], limit: int) -> list[Chunk]:
    """Neighbouring chunks joined into at most `limit`, each keeping its first chunk's speaker and time."""
    if len(chunks) <= limit:
        return chunks
    size = -(-len(chunks) // limit)
    grouped = []
    for at in range(0, len(chunks), size):
        group = chunks[at : at + size]
        first = group[0]
        grouped.append(
            Chunk(
                first.start_line,
                group[-1].end_line,
                "\n".join(c.text for c in group),
                speaker=first.speaker,
                time=first.time,
                date=first.date,
            )
        )
    return grouped


def is_dialog(path: str) -> bool:
    return path.lower().endswith(".jsonl")


def is_markdown(path: str) -> bool:
    return path.lower().endswith((".md", ".markdown"))


@dataclass(frozen=True)
class TextWindow:
    """Some of a file's lines, as `read` returns them."""

    first: int  # the first line asked for (1 for an empty file)
    last: int  # the last line returned, 0 when none was
    total: int  # lines in the file
    lines: list[str]
    next_line: int | None  # where to go on when the budget cut the window short


def check_line_range(start_line: int | None, end_line: int | None) -> None:
    """A 1-based, inclusive line range, either end open."""
    if start_line is not None and start_line < 1:
        raise ReMeError(f"start_line {start_line} is out of range: lines start at 1")
    if end_line is not None and end_line < (start_line or 1):
        raise ReMeError(f"end_line {end_line} is before start_line {start_line or 1}: give end_line >= start_line")


def _shown_line(number: int, line: str, dialog: bool) -> str:
    if not dialog:
        return line
    message = parse_message(line)
    return f"{number}: {message.render()}" if message else f"{number}: (no readable message)"


def text_window(
    text: str, start_line: int | None, end_line: int | None, max_chars: int, *, dialog: bool, shown_as: str
) -> TextWindow:
    """Lines start_line..end_line of `text`, stopping before `max_chars` would be passed.

    A dialog line becomes `<number>: <speaker> [time]: text`, with the file's own line number.
    At least one line is always returned (cut to the budget), so a reader always moves on.
    """
    check_line_range(start_line, end_line)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    first = start_line or 1
    if total == 0:
        first = 1
    elif first > total:
        raise ReMeError(f"start_line {first} is past the end: {shown_as} has {total} lines")
    out: list[str] = []
    size = 0
    for number in range(first, min(end_line or total, total) + 1):
        line = _shown_line(number, lines[number - 1], dialog)
        if out and size + len(line) + 1 > max_chars:
            return TextWindow(first, first + len(out) - 1, total, out, number)
        if len(line) > max_chars:
            line = line[:max_chars] + "…"
        out.append(line)
        size += len(line) + 1
    return TextWindow(first, first + len(out) - 1 if out else 0, total, out, None)
