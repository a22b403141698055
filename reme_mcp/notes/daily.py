"""Daily notes in ReMe's format (workspace-format.md): names, dates, writing a note.

A daily note is `daily/<date>/<name>.md` with front matter; the day index
`daily/<date>.md` lists the day's notes (day_index.py). `DayIndex` is the
workspace's daily notes and day indexes as `remember` and `daily_list` use them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
import unicodedata
from collections.abc import Callable
from datetime import date as Date
from pathlib import Path
from typing import Any

from reme_mcp.errors import ReMeError, os_error_line, shown
from reme_mcp.notes.day_index import DayIndexFile
from reme_mcp.notes.day_notes import REQUEST_KEY, DayNotes, NoteInfo, day_index_line, fold_name
from reme_mcp.storage.batching import CommitBatcher
from reme_mcp.storage.documents import BLOCK_END, BLOCK_START, body_hash
from reme_mcp.storage.file_names import FORBIDDEN_CHARS, is_device_name, legal_name
from reme_mcp.storage.files import open_regular
from reme_mcp.storage.workspace import DATE_RE, Workspace

__all__ = ["BLOCK_END", "BLOCK_START", "REQUEST_KEY", "DayIndex", "NoteInfo", "day_index_line"]

log = logging.getLogger("reme_mcp.notes.daily")

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
    elif any(ch in FORBIDDEN_CHARS or unicodedata.category(ch) == "Cc" for ch in name):
        problem = 'it contains one of < > : " / \\ | ? * or a control character'
    elif any(unicodedata.category(ch) in ("Cf", "Zl", "Zp", "Co", "Cs", "Cn") for ch in name):
        problem = (
            "it contains an invisible, direction-changing or unassigned character (such as U+200B, U+202E, U+FEFF)"
        )
    elif any(mark in name for mark in _LINK_BREAKING):
        problem = "it contains # [ ] or ^, which break the day index's [[link]]"
    elif name.endswith("."):
        problem = "it ends with a dot"
    elif is_device_name(name):
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
    return legal_name(name, "note")


def derive_description(content: str, limit: int = 120) -> str:
    """One line: the content's first sentence or line, cut to a readable length."""
    text = " ".join(re.sub(r"^[#>*\-\s]+", "", line) for line in content.splitlines() if line.strip())
    sentence = re.split(r"(?<=[.!?。！？])\s*", text, maxsplit=1)[0] or text
    sentence = sentence.strip()
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def render_note(meta: dict[str, Any], content: str) -> str:
    """A daily note: YAML front matter then the Markdown body."""
    import yaml  # here: a server imports this module before its first search, which writes nothing

    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{front}---\n{content.rstrip()}\n"


def running(pid: int) -> bool:
    """Whether a process with this id exists (another may have been given a dead one's id: then its
    mark waits for the next warm-up after that one ends)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process
        return True
    return True


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
# A note written within BURST seconds of the last one on its day leaves the day index to a
# batch (reme_mcp/storage/batching.py): each refresh rewrites and fsyncs the whole file, and a burst
# of notes then rewrites it a few times a second instead of once per note. The file lags
# the burst by MAX_LAG seconds at most, is brought up to date when the server ends, and by
# the next process's warm-up (`catch_up`) if this one dies first.
BURST = 0.5
MAX_LAG = 1.0
DUE_FOLDER = "days-due"
MARK_RE = re.compile(r"(\d{4}-\d{2}-\d{2})\.([1-9]\d{0,6})")  # a day and a process id
# Seconds between sweeps of a day's folders for temp files a killed writer left (they are
# removed once a minute old, so sweeping more often finds nothing more).
SWEEP_EVERY = 60.0


class DayIndex:
    """A workspace's daily notes and day indexes; each note's front matter is parsed once per change.

    Not locked by itself: `remember` calls `find`, `write_note` and the refreshes under the
    workspace's write lock; the batch of day indexes left for later takes the lock itself.
    """

    def __init__(self, ws: Workspace, refreshed: Callable[[list[str]], None] = lambda paths: None) -> None:
        self.ws = ws
        self._refreshed = refreshed  # told of the day indexes a batch refreshed (the search index takes them)
        self._notes = DayNotes(ws)
        self._index_files = DayIndexFile(ws)
        self._swept: dict[str, float] = {}  # day -> when its folders were last swept of dead writers' temp files
        self._written: dict[str, float] = {}  # day -> when a note was last written on it
        self._due: set[str] = set()  # days whose index the batch refreshes
        self._failing: str | None = None  # why the batch's last refresh failed, until one succeeds
        self._batch = CommitBatcher(
            self._refresh_due,
            lambda: len(self._due),
            idle=BURST,
            max_age=MAX_LAG,
            doing="refreshing the day index",
            meanwhile="the notes are stored, and their day index is refreshed with the next batch",
        )

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
        refreshed = self._index_files.refresh(day, notes)
        if day in self._due:
            self._due.discard(day)
            with contextlib.suppress(OSError):
                os.unlink(self._marker(day, os.getpid()))
        return self.ws.relative(refreshed)

    def refresh_after_write(self, day: str) -> tuple[str, str | None]:
        """The day index after `write_note` on `day`: refreshed now, or by the batch in a burst of notes
        (refresh_or_owe); its path, and why it is behind (None when it is not)."""
        now = time.monotonic()
        recent = now - self._written.get(day, float("-inf")) < BURST
        self._written[day] = now
        if not recent and day not in self._due:
            return self.refresh_or_owe(day, relist=False)
        self._owe(day)
        return f"daily/{day}.md", self._failing

    def refresh_or_owe(self, day: str, relist: bool = True) -> tuple[str, str | None]:
        """Refresh the day index now; when it cannot be (a full disk, a read-only folder), the batch
        owes it and catches it up as soon as it can be written, in this process. The day index is
        derived: the note is stored either way. Its path, and why it is behind (None when it is not)."""
        try:
            return self.refresh(day, relist=relist), None
        except OSError as exc:
            cause = os_error_line(exc, "refreshing the day index")
        except ReMeError as exc:
            cause = str(exc)
        self._owe(day)
        return f"daily/{day}.md", cause

    def _owe(self, day: str) -> None:
        """Leave the day's index to the batch; call under the write lock."""
        if day not in self._due:
            # Left behind for the next process's warm-up should this one die before its batch; on
            # a full disk there is none, and this process still catches the day up.
            with contextlib.suppress(OSError):
                self.ws.write_atomic(self._marker(day, os.getpid()), "", durable=False)
            self._due.add(day)
        self._batch.wrote()

    def unwrite(self, rel: str) -> None:
        """Take back a note `write_note` just wrote that was never acknowledged (it could not be made
        searchable); call under the write lock. Only this process's own new file is removed."""
        day, name = rel.split("/")[1:]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(Path(self._notes.folder(day)) / name)
        self._notes.unwrote(day, name)

    def flush(self) -> list[str]:
        """Refresh the day indexes the batch still owes, then every day this process wrote (the server
        is ending): a batch that gave a day up (its index busy or broken then) is tried once more.
        Returns the day indexes refreshed, for the search index to take."""
        self._batch.flush()
        refreshed: list[str] = []
        if not self._written:
            return refreshed
        with self.ws.lock("write"):
            for day in sorted(self._written):
                try:
                    refreshed.append(self.refresh(day))
                except (OSError, ReMeError) as exc:  # the mark stays: the next warm-up tries again
                    log.warning("reme-mcp: day index of %s not refreshed: %s", day, exc)
        return refreshed

    def sweep(self) -> int:
        """Remove the temp files dead writers left in daily/ and the days' folders; returns how many."""
        daily = self.ws.root / "daily"
        folders = [daily, *(Path(self._notes.folder(day)) for day in self.days())]
        return sum(self.ws.remove_stale_temp_files(f) for f in folders if f.is_dir() and not f.is_symlink())

    def catch_up(self) -> int:
        """Refresh the day indexes a process that died before its batch left behind, and those whose
        day's folder changed after them; returns how many.

        Each process marks the days it owes a refresh (`<date>.<pid>` in the state folder) and
        removes the mark once it has refreshed them. A mark of a process that is gone is done
        here and removed; a running one's is done too (a refresh of an index that is up to
        date writes nothing) and left to it.
        """
        folder = self.ws.state_dir / DUE_FOLDER
        marked = folder.is_dir() and not folder.is_symlink()
        # Only a day index that exists, of a day that has notes: a mark is a file anyone could
        # have put there, and a missing day index is left to the day's next note, as ReMe leaves it.
        # A process killed between writing a note and marking its day left no mark: that day's
        # folder changed after its day index was last written.
        days = set(self.days())
        behind = {day for day in days if self._behind(day)}
        if not marked and not behind:
            return 0  # nothing owed: no lock taken, nothing written
        with self.ws.lock("write"):
            marks: dict[str, list[int]] = {day: [] for day in behind}
            names = os.listdir(self.ws.state_folder(DUE_FOLDER)) if marked else []
            for name in names:
                found = MARK_RE.fullmatch(name)
                if found and DATE_RE.match(found[1]):
                    marks.setdefault(found[1], []).append(int(found[2]))
            marks = {day: pids for day, pids in marks.items() if day in days and self._index_exists(day)}
            for day, pids in sorted(marks.items()):
                self.refresh(day)
                for pid in pids:
                    if not running(pid):
                        with contextlib.suppress(OSError):
                            os.unlink(self._marker(day, pid))
        return len(marks)

    def _behind(self, day: str) -> bool:
        """Whether the day's folder changed (a note added or removed) after its day index was written."""
        try:
            index = self.ws.layout_path(f"daily/{day}.md").stat()
            folder = self.ws.layout_path(f"daily/{day}/x.md").parent.stat()
        except (OSError, ReMeError):
            return False
        return folder.st_mtime_ns > index.st_mtime_ns

    def _index_exists(self, day: str) -> bool:
        try:
            return self.ws.layout_path(f"daily/{day}.md").is_file()
        except ReMeError:
            return False

    def _marker(self, day: str, pid: int) -> Path:
        """Where a process marks a day it owes a refresh; call under the write lock."""
        return self.ws.state_folder(DUE_FOLDER) / f"{day}.{pid}"

    def _refresh_due(self) -> None:
        failed: OSError | None = None
        done: list[str] = []
        with self.ws.lock("write"):
            for day in sorted(self._due):
                try:
                    done.append(self.refresh(day))
                except OSError as exc:  # the day stays due: the batch tries again in a moment
                    failed = failed or exc
                except ReMeError as exc:  # a person's file that does not parse: their next note tries again
                    self._due.discard(day)
                    log.warning("reme-mcp: %s", exc)
        if done:
            with contextlib.suppress(OSError):  # the index counts them as waiting, and commits them once it can
                self._refreshed(done)
        self._failing = None if failed is None else os_error_line(failed, "refreshing the day index")
        if failed is not None:
            raise failed  # the batch says it once and retries (reme_mcp/storage/batching.py)

    def _check_index(self, day: str) -> None:
        """Refuse, before any note is written, a day index no refresh could ever write: one that
        leads outside, is a link or is not a file (a full disk, by contrast, passes)."""
        rel = f"daily/{day}.md"
        index = self.ws.layout_path(rel)
        if os.path.islink(index) or (os.path.lexists(index) and not index.is_file()):
            open_regular(index, rel).close()  # raises the one-line reason

    def write_note(self, day: str, stem: str, meta: dict[str, Any], content: str) -> str:
        """Write a new note under the first free name (stem, stem-2, ...); an existing note is never overwritten.

        A name taken by a case or Unicode-normalisation twin counts as taken: on macOS and
        Windows they are the same file.
        """
        folder = Path(self._notes.folder(day))
        self._check_index(day)
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
            front = {**meta, "name": candidate}
            try:
                written = self.ws.write_atomic(target, render_note(front, content), exclusive=True)
            except FileExistsError:
                continue
            # As the file reads back: PyYAML's safe dump of plain strings and lists loads as they were.
            self._notes.wrote(day, target.name, front, body_hash(content), written)
            return f"daily/{day}/{target.name}"
        raise ReMeError(f"too many notes named {stem!r} on one day: give a different name")
