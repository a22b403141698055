"""Daily notes and the day index, in ReMe's format (workspace-format.md).

A daily note is `daily/<date>/<name>.md` with front matter; the day index
`daily/<date>.md` carries a machine-managed block listing the day's notes.
Text a person wrote outside that block is kept byte for byte. `DayIndex` is the
workspace's daily notes as `remember` and `daily_list` use them.
"""

from __future__ import annotations

import os
import re
import time
import unicodedata
from datetime import date as Date
from pathlib import Path
from typing import Any

import yaml

from reme_mcp import swap
from reme_mcp.day_notes import REQUEST_KEY, DayNotes, NoteInfo, day_index_line, fold_name
from reme_mcp.documents import BLOCK_END, BLOCK_START, split_front_matter
from reme_mcp.errors import ReMeError, shown
from reme_mcp.workspace import DATE_RE, Workspace

__all__ = ["BLOCK_END", "BLOCK_START", "REQUEST_KEY", "DayIndex", "NoteInfo", "day_index_line"]

_FORBIDDEN_CHARS = set('<>:"/\\|?*')
# Windows reserves these with any digit it reads as one, superscripts included, and COM0/LPT0.
_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{d}" for port in ("COM", "LPT") for d in "0123456789\u00b9\u00b2\u00b3"}
)
# Characters that break the day index's [[link]] or Markdown around it.
_LINK_BREAKING = ("#", "[", "]", "^")
MAX_NAME_CHARS = 80
# UTF-8 bytes: the file name adds "-NN.md" and the temp name ".<name>.tmp-<12 hex>" to NAME_MAX 255.
MAX_NAME_BYTES = 200


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
    elif any(unicodedata.category(ch) in ("Cf", "Zl", "Zp", "Co", "Cs", "Cn") for ch in name):
        problem = (
            "it contains an invisible, direction-changing or unassigned character (such as U+200B, U+202E, U+FEFF)"
        )
    elif any(mark in name for mark in _LINK_BREAKING):
        problem = "it contains # [ ] or ^, which break the day index's [[link]]"
    elif name.endswith("."):
        problem = "it ends with a dot"
    elif name.split(".")[0].rstrip().upper() in _DEVICE_NAMES:
        problem = "it is a Windows device name"
    elif name.startswith("."):
        problem = "it starts with a dot (hidden files are not notes)"
    elif len(name) > MAX_NAME_CHARS:
        problem = f"it is longer than {MAX_NAME_CHARS} characters"
    elif len(name.encode("utf-8")) > MAX_NAME_BYTES:
        problem = f"it is {len(name.encode('utf-8'))} bytes in UTF-8, and at most {MAX_NAME_BYTES} fit a file name"
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
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = name[:-1]
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


def read_day_notes(ws: Workspace, day: str) -> list[NoteInfo]:
    """The notes of one day, read from the files themselves, sorted by file name (day_notes.py)."""
    return DayNotes(ws).notes(day)


# The line that closes a front matter (documents.split_front_matter's rule).
_FRONT_END_LINE = re.compile(r"^(?:---|\.\.\.)[^\S\n]*$", re.MULTILINE)


def _dump(meta: dict[str, Any]) -> str:
    # ReMe writes front matter with PyYAML's safe dumper (sorted keys).
    return yaml.safe_dump(meta, default_flow_style=False, allow_unicode=True).strip()


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


def _with_description(front: str, day: str, description: str) -> str:
    """The person's front matter with only its description line brought up to date.

    Nothing else is re-serialised: comments, order, quoting and keys stay as written.
    A front matter that does not parse is left exactly as it is.
    """
    parts = front.split("\n")
    opening, inner, closing = parts[0], parts[1:-2], parts[-2]
    meta, _ = split_front_matter(front)
    if not meta and any(line.strip() and not line.lstrip().startswith("#") for line in inner):
        return front  # it does not parse: someone's text, kept whole
    if meta.get("description") == description and meta.get("name"):
        return front
    new_line = _dump({"description": description})
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
        out.append(_dump({"name": day}))
    return "\n".join([opening, *out, closing, ""])


def render_day_index(day: str, notes: list[NoteInfo], existing: str | None) -> str:
    """The day index with a fresh block, laid out as ReMe lays it out.

    A person's text outside the block, front matter included, is kept byte for byte;
    only the front matter's description line is brought up to date.
    """
    lines = [n.line for n in notes] or ["(none)"]
    block = "\n".join([BLOCK_START, *lines, BLOCK_END])
    description = f"{len(notes)} note(s) today." if notes else "No notes today."
    if existing is None:
        return f"{_fresh_front(day, description)}\n{block}"
    front, body, found = _split_raw(existing)
    front = _with_description(front, day, description) if found else _fresh_front(day, description)
    span = _block_span(body)
    if span is not None:
        body = body[: span[0]] + block + body[span[1] :]
    elif body.strip():
        body = f"{body.rstrip()}\n\n{block}"
    else:
        body = f"\n{block}"
    return front + body


def _fresh_front(day: str, description: str) -> str:
    return f"---\n{_dump({'name': day, 'description': description})}\n---\n"


MAX_MERGES = 50


def refresh_day_index(ws: Workspace, day: str, notes: list[NoteInfo] | None = None) -> Path:
    """Rebuild one day's index block from the notes on disk. Call under the workspace's write lock.

    People edit this file too, so it is merged, never overwritten blind (reme_mcp/swap.py):
    when what the swap took out is not what was read (someone saved meanwhile), their
    version is merged and swapped in again.
    """
    rel = f"daily/{day}.md"
    target = ws.layout_path(rel)
    notes = read_day_notes(ws, day) if notes is None else notes
    seen = swap.snapshot(target, rel)
    current = source = _decode(seen.data, rel)
    busy = seen.hot  # someone is saving it these seconds: they may be writing into what a swap takes out
    for _ in range(MAX_MERGES):
        rendered = render_day_index(day, notes, source)
        if rendered == current:
            return target
        try:
            taken, seen = swap.swap(target, rendered, seen, rel, settle=busy)
        except swap.Changed:  # saved by someone between our read and our swap
            seen = swap.snapshot(target, rel)
            current = source = _decode(seen.data, rel)
            busy = True
            continue
        old = _decode(taken, rel)
        if old == current:
            return target
        source, current, busy = old, rendered, True
    raise ReMeError(f"{rel} changed {MAX_MERGES} times while being refreshed: stop editing it and try again")


def _decode(raw: bytes | None, rel: str) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReMeError(f"day index {rel} is not UTF-8 text: fix it or move it away, then try again") from exc


def list_note_days(ws: Workspace) -> list[str]:
    """Every date that has a daily-note folder inside the workspace, newest first."""
    days = []
    try:
        for p in (ws.root / "daily").iterdir():
            if DATE_RE.match(p.name) and p.is_dir():
                try:
                    ws.layout_path(f"daily/{p.name}/x.md")
                except ReMeError:
                    continue  # a link to a folder outside: not this workspace's notes
                days.append(p.name)
    except OSError:
        return []
    return sorted(days, reverse=True)


MAX_SAME_NAME = 10_000
# Seconds between sweeps of a day's folders for temp files a killed writer left (they are
# removed once a minute old, so sweeping more often finds nothing more).
SWEEP_EVERY = 60.0


class DayIndex:
    """A workspace's daily notes and day indexes; each note's front matter is parsed once per change.

    Not locked by itself: `remember` calls `find`, `write_note` and `refresh` under the
    workspace's write lock.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._notes = DayNotes(ws)
        self._swept: dict[str, float] = {}  # day -> when its folders were last swept of dead writers' temp files

    def days(self) -> list[str]:
        """Every date with a note folder, newest first."""
        return list_note_days(self.ws)

    def notes(self, day: str) -> list[NoteInfo]:
        """The notes of one day, from the files themselves."""
        return self._notes.notes(day)

    def find(self, day: str, request_hash: str | None, digest: str) -> str | None:
        """The note of `day` that holds this request (by its hash), else this body (by its hash)."""
        return self._notes.find(day, request_hash, digest)

    def refresh(self, day: str, relist: bool = True) -> str:
        """Bring the day index's block up to date with the day's notes; its workspace-relative path.

        `relist` false: the caller holds the write lock and listed the day just now (`find`).
        """
        notes = self._notes.notes(day, recheck=False, relist=relist)
        return self.ws.relative(refresh_day_index(self.ws, day, notes))

    def write_note(self, day: str, stem: str, meta: dict[str, Any], content: str) -> str:
        """Write a new note under the first free name (stem, stem-2, ...); an existing note is never overwritten.

        A name taken by a case or Unicode-normalisation twin counts as taken: on macOS and
        Windows they are the same file.
        """
        folder = self.ws.layout_path(f"daily/{day}/x.md").parent
        if time.monotonic() - self._swept.get(day, float("-inf")) >= SWEEP_EVERY:
            self.ws.remove_stale_temp_files(folder)  # a killed writer's note ...
            self.ws.remove_stale_temp_files(folder.parent)  # ... or day index
            self._swept[day] = time.monotonic()
        if os.path.lexists(folder) and not folder.is_dir():
            raise ReMeError(f"daily/{day} is a file, not a folder: move it away so notes can be written")
        taken = self._notes.taken(day, relist=False)  # as `find` listed it; a name taken since fails O_EXCL
        for n in range(1, MAX_SAME_NAME):
            candidate = stem if n == 1 else f"{stem[: MAX_NAME_CHARS - len(str(n)) - 1]}-{n}"
            target = folder / f"{candidate}.md"
            if fold_name(target.name) in taken or os.path.lexists(target):
                continue
            try:
                self.ws.write_atomic(target, render_note({**meta, "name": candidate}, content), exclusive=True)
            except FileExistsError:
                continue
            self._notes.wrote(day, target.name)
            return f"daily/{day}/{target.name}"
        raise ReMeError(f"too many notes named {stem!r} on one day: give a different name")
