"""The day index `daily/<date>.md`: its machine-managed block rendered anew, the rest kept.

The block lists the day's notes (workspace-format.md); text a person wrote outside
it, front matter included, is kept byte for byte and only the front matter's
description line is brought up to date. People edit this file too, so it is merged,
never overwritten blind (reme_mcp/storage/swap.py).

A busy day holds thousands of notes and `remember` refreshes the file once per note,
so `DayIndexFile` remembers what it last put there: when the file still holds exactly
those bytes, the next refresh neither decodes nor splits it again, and renders from the
parts it was made of.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reme_mcp.errors import ReMeError
from reme_mcp.notes.day_notes import NoteInfo
from reme_mcp.storage import swap
from reme_mcp.storage.documents import BLOCK_END, BLOCK_START, split_front_matter
from reme_mcp.storage.workspace import Workspace

MAX_MERGES = 50
# The line that closes a front matter (documents.split_front_matter's rule).
_FRONT_END_LINE = re.compile(r"^(?:---|\.\.\.)[^\S\n]*$", re.MULTILINE)
# The descriptions the block's front matter carries: PyYAML writes them as plain scalars.
_PLAIN_DESCRIPTION = re.compile(r"(?:[1-9][0-9]* note\(s\) today\.|No notes today\.)")


@dataclass(frozen=True)
class Layout:
    """A day index around its block: the parts a refresh keeps as they are."""

    front: str  # the front matter as written, delimiters included ("" when it has none)
    has_front: bool
    before: str  # the body up to the block (the separator before an appended block included)
    after: str  # the body after the block


def layout(existing: str) -> Layout:
    """Where the block goes in this text, and what is kept around it."""
    front, body, found = _split_raw(existing)
    span = _block_span(body)
    if span is not None:
        return Layout(front, found, body[: span[0]], body[span[1] :])
    if body.strip():
        return Layout(front, found, f"{body.rstrip()}\n\n", "")  # no block yet: it is appended
    return Layout(front, found, "\n", "")


def render(day: str, notes: list[NoteInfo], kept: Layout | None) -> str:
    """The day index with a fresh block, laid out as ReMe lays it out (`kept` None: a new file)."""
    lines = [n.line for n in notes] or ["(none)"]
    block = "\n".join([BLOCK_START, *lines, BLOCK_END])
    description = f"{len(notes)} note(s) today." if notes else "No notes today."
    if kept is None:
        return f"{_fresh_front(day, description)}\n{block}"
    front = _with_description(kept.front, day, description) if kept.has_front else _fresh_front(day, description)
    return front + kept.before + block + kept.after


def listed(text: str) -> list[str]:
    """The note paths a day index's block lists, in order (none when it has no block)."""
    _, body, _ = _split_raw(text)
    span = _block_span(body)
    if span is None:
        return []
    lines = body[span[0] : span[1]].split("\n")
    return [line[4 : line.index("]]")] for line in lines if line.startswith("- [[") and "]]" in line]


@dataclass(frozen=True)
class _Put:
    """What a refresh last swapped in: its bytes, its text, and the layout it was rendered from."""

    data: bytes
    text: str
    kept: Layout | None


class DayIndexFile:
    """The day index files of one workspace, refreshed under its write lock."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._put: dict[str, _Put] = {}

    def refresh(self, day: str, notes: list[NoteInfo]) -> Path:
        """Rebuild one day's block from `notes`; a save someone made meanwhile is merged in.

        When what the swap took out is not what was read (someone saved meanwhile), their
        version is merged and swapped in again.
        """
        rel = f"daily/{day}.md"
        target = self.ws.layout_path(rel)
        put = self._put.get(day)
        seen = swap.snapshot(target, rel, known=put.data if put is not None else None)
        if put is not None and seen.data == put.data:
            current: str | None = put.text
            kept = put.kept  # rendering from these parts again is what a split would give
        else:
            current, kept = _parsed(seen.data, rel)
        on_disk = seen.data
        busy = seen.hot  # someone is saving it these seconds: they may be writing into what a swap takes out
        for _ in range(MAX_MERGES):
            rendered = render(day, notes, kept)
            if rendered == current:
                return target
            data = rendered.encode("utf-8")
            try:
                taken, seen = swap.swap(target, data, seen, rel, settle=busy)
            except swap.Changed:  # saved by someone between our read and our swap
                seen = swap.snapshot(target, rel)
                current, kept = _parsed(seen.data, rel)
                on_disk, busy = seen.data, True
                continue
            self._put[day] = _Put(data, rendered, kept)
            if taken == on_disk:
                return target
            # Saved by someone after our read: ours is in place, theirs is merged and swapped in next.
            _, kept = _parsed(taken, rel)
            current, on_disk, busy = rendered, data, True
        raise ReMeError(f"{rel} changed {MAX_MERGES} times while being refreshed: stop editing it and try again")


def _parsed(raw: bytes | None, rel: str) -> tuple[str | None, Layout | None]:
    """A day index's text as read, and its layout (None and None when there is no file)."""
    if raw is None:
        return None, None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReMeError(f"day index {rel} is not UTF-8 text: fix it or move it away, then try again") from exc
    return text, layout(text)


def _block_span(body: str) -> tuple[int, int] | None:
    """Where the machine-managed block is: its markers alone on their lines, start before end.

    Markers quoted inside a person's sentence are not the block.
    """
    start = _marker_line(body, BLOCK_START, 0)
    if start < 0:
        return None
    end = _marker_line(body, BLOCK_END, start + len(BLOCK_START))
    return None if end < 0 else (start, end + len(BLOCK_END))


def _marker_line(text: str, marker: str, at: int) -> int:
    """Where `marker` first stands alone on a line (white space around it allowed) from `at`; -1 if nowhere."""
    while (found := text.find(marker, at)) >= 0:
        line_start = text.rfind("\n", 0, found) + 1
        line_end = text.find("\n", found)
        after = text[found + len(marker) : line_end if line_end >= 0 else len(text)]
        if not text[line_start:found].strip() and not after.strip():
            return found
        at = found + len(marker)
    return -1


def _split_raw(text: str) -> tuple[str, str, bool]:
    """The front matter as written (delimiters included), the body after it, and whether one was found."""
    if not text.startswith("---"):
        return "", text, False
    first = text.find("\n")
    if first < 0 or text[:first].rstrip() != "---":
        return "", text, False
    closing = _FRONT_END_LINE.search(text, first + 1)
    if closing is None:
        return "", text, False
    cut = closing.end() + 1 if closing.end() < len(text) else len(text)
    front = text[:cut]
    return (front, text[cut:], True) if cut < len(text) or front.endswith("\n") else (front + "\n", "", True)


@functools.lru_cache(maxsize=64)
def _front_meta(front: str) -> tuple[dict[str, Any], bool]:
    """A front matter's mapping, and whether it parses (a day's front is parsed once, not once per note)."""
    parts = front.split("\n")
    meta, _ = split_front_matter(front)
    broken = not meta and any(line.strip() and not line.lstrip().startswith("#") for line in parts[1:-2])
    return meta, not broken


def _with_description(front: str, day: str, description: str) -> str:
    """The person's front matter with only its description line brought up to date.

    Nothing else is re-serialised: comments, order, quoting and keys stay as written.
    A front matter that does not parse is left exactly as it is.
    """
    meta, parses = _front_meta(front)
    if not parses:
        return front  # someone's text, kept whole
    if meta.get("description") == description and meta.get("name"):
        return front
    parts = front.split("\n")
    opening, inner, closing = parts[0], parts[1:-2], parts[-2]
    new_line = _dump_description(description)
    out: list[str] = []
    replaced = False
    skipping = False
    for line in inner:
        if skipping and (line[:1] in (" ", "\t") or not line.strip()):
            continue
        skipping = False
        if not replaced and re.match(r"description\s*:", line):
            out.append(new_line)
            replaced = skipping = True
            continue
        out.append(line)
    if not replaced:
        out.insert(0, new_line)
    if not meta.get("name"):
        out.append(_dump_name(day))
    return "\n".join([opening, *out, closing, ""])


def _fresh_front(day: str, description: str) -> str:
    return f"---\n{_dump_description(description)}\n{_dump_name(day)}\n---\n"


def _dump_description(description: str) -> str:
    """`description: ...` as PyYAML writes it; the block's own descriptions are plain scalars, written directly."""
    if _PLAIN_DESCRIPTION.fullmatch(description):
        return f"description: {description}"
    return _dump({"description": description})


@functools.lru_cache(maxsize=64)
def _dump_name(day: str) -> str:
    return _dump({"name": day})


def _dump(meta: dict[str, Any]) -> str:
    # ReMe writes front matter with PyYAML's safe dumper (sorted keys). Imported here: a server
    # imports this module before its first search, which writes nothing.
    import yaml

    return yaml.safe_dump(meta, default_flow_style=False, allow_unicode=True).strip()
