"""What changed, by kind: the words of a commit message and of the sync's report."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from reme_mcp.notes.day_index import layout

_NOTE = re.compile(r"^daily/\d{4}-\d{2}-\d{2}/[^/]+\.md$")
_DAY_INDEX = re.compile(r"^daily/(\d{4}-\d{2}-\d{2})\.md$")
_DAY_FOLDER = re.compile(r"^daily/(\d{4}-\d{2}-\d{2})/")
MAX_LISTED = 40


@dataclass(frozen=True)
class Change:
    status: str  # A (added), M (modified), D (deleted)
    path: str


def kind(path: str) -> str:
    if _NOTE.match(path):
        return "note"
    if _DAY_INDEX.match(path):
        return "day index"
    for prefix, name in (("digest/", "digest"), ("session/", "dialog"), ("resource/", "resource")):
        if path.startswith(prefix):
            return name
    return "file"


def day_of(path: str) -> str | None:
    """The date a note or day index belongs to."""
    found = _DAY_INDEX.match(path) or _DAY_FOLDER.match(path)
    return found[1] if found else None


def parse_name_status(out: str) -> list[Change]:
    """`git diff --name-status -z --no-renames` output."""
    parts = out.split("\0")
    changes = []
    for status, path in zip(parts[0::2], parts[1::2], strict=False):
        if status and path:
            changes.append(Change(status[0], path))
    return changes


def person_edited(before: str | None, after: str | None) -> bool:
    """Whether a day index changed outside its automatic block and description (a person's text)."""
    if before is None or after is None:
        return False
    a, b = layout(before), layout(after)
    return (a.before, a.after) != (b.before, b.after) or _without_description(a.front) != _without_description(b.front)


def _without_description(front: str) -> str:
    return re.sub(r"(?m)^description:.*\n", "", front)


def summary(changes: list[Change], person_days: int = 0) -> str:
    """One line: '3 new notes, 1 digest, 2 day indexes, a person's edits to 2 files, 1 removed'."""
    if not changes:
        return "nothing"
    added = Counter(kind(c.path) for c in changes if c.status == "A")
    edited = [c for c in changes if c.status == "M" and kind(c.path) != "day index"]
    days = sum(1 for c in changes if c.status != "D" and kind(c.path) == "day index")
    removed = sum(1 for c in changes if c.status == "D")
    words = [_count(n, "new " + k if k == "note" else k) for k, n in sorted(added.items()) if k != "day index"]
    if days:
        words.append(_count(days, "day index", "day indexes"))
    edits = len(edited) + person_days
    if edits:
        words.append(f"a person's edits to {_count(edits, 'file')}")
    if removed:
        words.append(f"{removed} removed")
    return ", ".join(words)


def listing(changes: list[Change]) -> str:
    """The body of a commit message: one path a line, with its status."""
    lines = [f"{c.status} {c.path}" for c in changes[:MAX_LISTED]]
    if len(changes) > MAX_LISTED:
        lines.append(f"... and {len(changes) - MAX_LISTED} more")
    return "\n".join(lines)


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else plural or singular + 's'}"
