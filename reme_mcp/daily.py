"""Daily notes and the day index, in ReMe's format (workspace-format.md).

A daily note is `daily/<date>/<name>.md` with front matter; the day index
`daily/<date>.md` carries a machine-managed block listing the day's notes.
Text a person wrote outside that block is kept byte for byte.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from datetime import date as Date
from pathlib import Path
from typing import Any

import yaml

from reme_mcp.documents import split_front_matter
from reme_mcp.errors import ReMeError, shown
from reme_mcp.workspace import DATE_RE, Workspace, file_stamp

BLOCK_START = "<!-- notes:auto -->"
BLOCK_END = "<!-- /notes:auto -->"
_HIDDEN_KEYS = frozenset({"name", "description", "schema_version", "session_id", "source_conversation"})
_FORBIDDEN_CHARS = set('<>:"/\\|?*')
_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(1, 10)} | {f"LPT{i}" for i in range(1, 10)}
)
MAX_NAME_CHARS = 80
# A note's front matter by path, with the change stamp it was parsed at (see read_day_notes).
NoteMetaCache = dict[str, tuple[str, dict[str, Any]]]


def parse_date(value: str, what: str = "date") -> str:
    """A YYYY-MM-DD string that names a real day."""
    if not isinstance(value, str) or not DATE_RE.match(value):
        raise ReMeError(f"{what} {shown(value)} is not a date: use YYYY-MM-DD, such as 2026-11-28")
    try:
        Date.fromisoformat(value)
    except ValueError as exc:
        raise ReMeError(f"{what} {shown(value)} is not a real day: use YYYY-MM-DD, such as 2026-11-28") from exc
    return value


def parse_range(start_date: str | None, end_date: str | None) -> tuple[str | None, str | None]:
    """An inclusive date range, either end open; the earliest date must come first."""
    start = parse_date(start_date, "start_date") if start_date else None
    end = parse_date(end_date, "end_date") if end_date else None
    if start and end and start > end:
        raise ReMeError(f"start_date {start} is after end_date {end}: give an earliest date first")
    return start, end


def check_note_name(name: str) -> str:
    """ReMe's rule for a safe file-name component; the reason in one line when it is not."""
    problem = None
    if not name:
        problem = "it is empty"
    elif name in (".", ".."):
        problem = "it is . or .."
    elif name != name.strip():
        problem = "it starts or ends with white space"
    elif any(ch in _FORBIDDEN_CHARS or unicodedata.category(ch) == "Cc" for ch in name):
        problem = 'it contains one of < > : " / \\ | ? * or a control character'
    elif name.endswith("."):
        problem = "it ends with a dot"
    elif name.split(".")[0].upper() in _DEVICE_NAMES:
        problem = "it is a Windows device name"
    elif name.startswith("."):
        problem = "it starts with a dot (hidden files are not notes)"
    elif len(name) > MAX_NAME_CHARS:
        problem = f"it is longer than {MAX_NAME_CHARS} characters"
    if problem:
        raise ReMeError(f"note name {shown(name)} is not accepted: {problem}; use a short name such as go-backend")
    return name


def derive_name(content: str) -> str:
    """A short, safe file name from the content's first words (CJK characters kept as they are)."""
    first = next((line for line in content.splitlines() if line.strip()), "note")
    first = re.sub(r"^[#>*\-\s`]+", "", first)
    words = re.findall(r"[^\W_]+", first.lower())
    name = ""
    for word in words:
        candidate = f"{name}-{word}" if name else word
        if len(candidate) > 40:
            if not name:
                name = word[:40]
            break
        name = candidate
    name = name.strip("-.") or "note"
    if name.split(".")[0].upper() in _DEVICE_NAMES:
        name = f"{name}-note"
    return name


def derive_description(content: str, limit: int = 120) -> str:
    """One line: the content's first sentence or line, cut to a readable length."""
    text = " ".join(re.sub(r"^[#>*\-\s]+", "", line) for line in content.splitlines() if line.strip())
    sentence = re.split(r"(?<=[.!?。！？])\s*", text, maxsplit=1)[0] or text
    sentence = sentence.strip()
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def render_note(meta: dict[str, Any], content: str) -> str:
    """A daily note: YAML front matter then the Markdown body."""
    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{front}---\n{content.rstrip()}\n"


def day_index_line(path: str, meta: dict[str, Any]) -> str:
    """One note's line in the block, exactly as ReMe renders it: link, name, description, other keys.

    Values are written as ReMe writes them (`str(value)` with new lines as spaces), so
    ReMe's refresh and ours produce the same bytes and never flip-flop the file.
    """
    keys: list[str] = [k for k in ("name", "description") if k in meta]
    keys += [k for k in meta if k not in _HIDDEN_KEYS]
    parts = [f"- [[{path}]]"]
    for key in keys:
        value = meta[key]
        if value is not None and value != "":
            parts.append(f"{key}: {str(value).replace(chr(10), ' ')}")
    return " ".join(parts)


@dataclass(frozen=True)
class NoteInfo:
    path: str
    meta: dict[str, Any]


def read_day_notes(ws: Workspace, day: str, cache: NoteMetaCache | None = None) -> list[NoteInfo]:
    """The notes of one day, read from the files themselves, sorted by file name.

    With a `cache` (path -> (change stamp, front matter)), a note's front matter is
    parsed again only when the file changed: refreshing the day index after each
    `remember` then costs a stat per note, not a YAML parse per note.
    """
    folder = ws.root / "daily" / day
    notes: list[NoteInfo] = []
    try:
        # Every *.md, dot-files too, as ReMe lists them (our temp files end in .tmp-<hex>, not .md).
        names = sorted(p.name for p in folder.iterdir() if p.suffix == ".md")
    except OSError:
        return notes
    for name in names:
        rel = f"daily/{day}/{name}"
        try:
            # O_NONBLOCK: a FIFO named like a note must not hang the reader; it is skipped below.
            fd = os.open(folder / name, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):  # a folder, a FIFO, a device: not a note
            os.close(fd)
            continue
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as fh:
            try:
                stamp = file_stamp(st)
                cached = cache.get(rel) if cache is not None else None
                if cached is not None and cached[0] == stamp:
                    meta = cached[1]
                else:
                    meta, _ = split_front_matter(fh.read(64_000))
                    if cache is not None:
                        cache[rel] = (stamp, meta)
            except OSError:
                continue
        notes.append(NoteInfo(rel, meta))
    return notes


def render_day_index(day: str, notes: list[NoteInfo], existing: str | None) -> str:
    """The day index with a fresh block, laid out as ReMe lays it out.

    A person's text outside the block is kept as it was; the front matter keeps
    its other keys (and a name someone set), with the description brought up to date.
    """
    lines = [day_index_line(n.path, n.meta) for n in notes] or ["(none)"]
    block = "\n".join([BLOCK_START, *lines, BLOCK_END])
    description = f"{len(notes)} note(s) today." if notes else "No notes today."
    meta: dict[str, Any] = {"name": day, "description": description}
    body = f"\n{block}"
    if existing is not None:
        old_meta, body_start = split_front_matter(existing)
        meta = {**old_meta, "name": old_meta.get("name") or day, "description": description}
        old_body = "\n".join(existing.split("\n")[body_start:])
        start, end = old_body.find(BLOCK_START), old_body.find(BLOCK_END, max(0, old_body.find(BLOCK_START)))
        if start != -1 and end != -1:
            body = old_body[:start] + block + old_body[end + len(BLOCK_END) :]
        elif old_body.strip():
            body = f"{old_body.rstrip()}\n\n{block}"
    # ReMe writes front matter with PyYAML's safe dumper (sorted keys), a blank line, then the body.
    front = yaml.safe_dump(meta, default_flow_style=False, allow_unicode=True).strip()
    return f"---\n{front}\n---\n{body}"


def refresh_day_index(ws: Workspace, day: str, cache: NoteMetaCache | None = None) -> Path:
    """Rebuild one day's index block from the notes on disk. Call under the workspace's write lock."""
    target = ws.root / "daily" / f"{day}.md"
    try:
        existing: str | None = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReMeError(
            f"day index daily/{day}.md cannot be read ({exc.__class__.__name__}); fix or remove it"
        ) from exc
    rendered = render_day_index(day, read_day_notes(ws, day, cache), existing)
    if rendered != existing:
        ws.write_atomic(target, rendered)
    return target


def list_note_days(ws: Workspace) -> list[str]:
    """Every date that has a daily-note folder, newest first."""
    try:
        return sorted(
            (p.name for p in (ws.root / "daily").iterdir() if DATE_RE.match(p.name) and p.is_dir()),
            reverse=True,
        )
    except OSError:
        return []
