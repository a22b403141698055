"""The notes of one day, read from the files themselves, each parsed once per change.

`remember` needs a day's notes twice per call (is this request or content stored
already; what does the day index list) and `daily_list` once. A day may hold
thousands of notes, and a stat costs microseconds each: so the folder is listed
every time (a new, renamed or removed note is always seen), a note is read only
when it is new or its change stamp moved, and the stamps of the notes already
known are compared at most every RECHECK seconds (or 5x what that costs) when
the caller allows it. A note edited in place is then listed with its new front
matter by the next refresh after that. Only regular files are read, never
through a link: a note linked to a file outside would otherwise have its front
matter copied into the day index.
"""

from __future__ import annotations

import bisect
import os
import stat
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from reme_mcp.storage.documents import body_hash, split_front_matter
from reme_mcp.storage.text import nameable
from reme_mcp.storage.workspace import Workspace, file_stamp

MAX_NOTE_READ = 4 * 1024 * 1024
# The front-matter key holding a request_id's hash: a retry finds its note on disk by it.
REQUEST_KEY = "request_hash"
RECHECK = 1.0  # seconds
# Front-matter keys the day index's line leaves out (ReMe's list).
# What str.splitlines() breaks a line at.
_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_HIDDEN_KEYS = frozenset({"name", "description", "schema_version", "session_id", "source_conversation"})


@dataclass(frozen=True)
class NoteInfo:
    path: str
    meta: dict[str, Any]
    body_hash: str = ""
    line: str = field(default="", compare=False)  # its line in the day index (derived: left out)

    def __post_init__(self) -> None:
        if not self.line:  # rendered once per version of the note, not once per refresh
            object.__setattr__(self, "line", day_index_line(self.path, self.meta))


def day_index_line(path: str, meta: dict[str, Any]) -> str:
    """One note's line in the block, exactly as ReMe renders it: link, name, description, other keys.

    Values are written as ReMe writes them (`str(value)` with new lines as spaces), so
    ReMe's refresh and ours produce the same bytes and never flip-flop the file. A block
    marker inside a value is defused, so a note cannot end or open the block.
    """
    keys: list[str] = [k for k in ("name", "description") if k in meta]
    keys += [k for k in meta if k not in _HIDDEN_KEYS]
    parts = [f"- [[{path}]]"]
    for key in keys:
        value = meta[key]
        if value is not None and value != "":
            parts.append(f"{key}: {_one_line(str(value))}")
    return " ".join(parts).replace("<!--", "<!\u2011-")


def _one_line(value: str) -> str:
    """New lines as spaces, as ReMe writes them; and every other line break a reader may honour
    (a carriage return, U+2028, NEL ...), so one note's line never splits into two."""
    if value.isprintable():  # the common case: no break of any kind
        return value
    return "".join(" " if ch in _BREAKS else ch for ch in value)


class _Day:
    """What is known of one day's folder: its names, and its notes in order with their lookups."""

    def __init__(self) -> None:
        self.names: frozenset[str] = frozenset()  # every entry of the folder, as last listed
        self.stamp: tuple[int, int, int] | None = None  # the folder's (inode, mtime, ctime) as last seen
        self.listed = float("-inf")  # when the folder was last listed
        self.folded: set[str] = set()  # ... case- and normalisation-folded
        self.notes: dict[str, tuple[str, NoteInfo]] = {}  # by file name: (stamp, note)
        self.order: list[str] = []  # the notes' file names, sorted ...
        self.listing: list[NoteInfo] = []  # ... and the notes in that order
        self.by_request: dict[str, str] = {}  # request hash -> the first file name holding it
        self.by_body: dict[str, str] = {}  # body hash -> the first file name holding it
        self.checked = float("-inf")  # when every known note's stamp was last compared
        self.cost = 0.0  # what that comparison took
        self._stale = False  # whether the lookups miss a forgotten note's successor

    def put(self, name: str, note: tuple[str, NoteInfo]) -> None:
        old = self.notes.get(name)
        if old is note:
            return
        if old is not None:
            self.forget(name)
        self.notes[name] = note
        at = bisect.bisect_left(self.order, name)
        self.order.insert(at, name)
        self.listing.insert(at, note[1])
        if not self._stale:
            self._look_up(name, note[1])

    def forget(self, name: str) -> None:
        if self.notes.pop(name, None) is not None:
            at = bisect.bisect_left(self.order, name)
            del self.order[at]
            del self.listing[at]
            self._stale = True  # it may have been the first holder of its hashes: looked up afresh

    def find(self, request_hash: str | None, digest: str) -> str | None:
        if self._stale:
            self.by_request.clear()
            self.by_body.clear()
            for name, note in zip(self.order, self.listing, strict=True):
                self._look_up(name, note)
            self._stale = False
        held = (self.by_request.get(request_hash) if request_hash else None) or self.by_body.get(digest)
        return self.notes[held][1].path if held is not None else None

    def _look_up(self, name: str, note: NoteInfo) -> None:
        request = note.meta.get(REQUEST_KEY)
        for key, lookup in (
            (request if isinstance(request, str) else "", self.by_request),
            (note.body_hash, self.by_body),
        ):
            if key and (key not in lookup or name < lookup[key]):
                lookup[key] = name


class DayNotes:
    """A workspace's daily notes by day, each parsed once per change of its file.

    A listing is compared with the last one as sets, so a day of thousands of notes
    costs one listdir and the new names, not a Python step per note.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._days: dict[str, _Day] = {}
        self._places: dict[str, tuple[str, int]] = {}  # day -> its folder as checked, and that folder's inode

    def notes(self, day: str, recheck: bool = True, relist: bool = True) -> list[NoteInfo]:
        """The notes of `day`, sorted by file name. With `recheck` false, notes already known are
        taken as they were read unless RECHECK seconds have passed (a new note is always read);
        with `relist` false, the folder is not listed again (a caller holding the write lock
        that just listed it, and told `wrote` of its own note)."""
        known = self._known(day, relist)
        started = time.monotonic()
        if recheck or started - known.checked >= max(RECHECK, 5 * known.cost):
            folder = self.folder(day)
            for name in [n for n in known.names if _is_note(n)]:
                fresh = self._read(folder, day, name, known.notes.get(name))
                if fresh is None:
                    known.forget(name)
                else:
                    known.put(name, fresh)
            known.checked, known.cost = time.monotonic(), time.monotonic() - started
        return list(known.listing)

    def find(self, day: str, request_hash: str | None, digest: str) -> str | None:
        """The note of `day` holding this request (by its hash), else this body (by its hash); first by
        file name. Notes known already are taken as read (a stamp moved in place changes no hash)."""
        return self._known(day, relist=True).find(request_hash, digest)

    def taken(self, day: str, relist: bool = True) -> set[str]:
        """Every name in the day's folder, folded (fold_name): a twin of one is taken too."""
        return self._known(day, relist).folded

    def wrote(self, day: str, name: str, meta: dict[str, Any], digest: str, written: os.stat_result) -> None:
        """The caller just wrote this note, with this front matter and body hash: known without
        listing the folder or reading the note again."""
        known = self._known(day, relist=False)
        known.names = known.names | {name}
        known.folded.add(fold_name(name))
        # The folder moved by our write: not listed again for it (a change someone else made
        # in the same millisecond is listed within RECHECK seconds, see _listed).
        known.stamp = self._located(day)[1]
        if name not in known.notes:
            known.put(name, (file_stamp(written), NoteInfo(f"daily/{day}/{name}", meta, digest)))

    def unwrote(self, day: str, name: str) -> None:
        """The caller removed the note it just wrote: forgotten now, not when the folder is next
        listed (its mtime may not have moved within the clock's tick)."""
        known = self._known(day, relist=False)
        known.forget(name)
        known.names = known.names - {name}
        known.folded = {fold_name(n) for n in known.names}

    def folder(self, day: str) -> str:
        """The day's note folder, checked to lead nowhere outside the workspace (Workspace.layout_path)."""
        return self._located(day)[0]

    def _known(self, day: str, relist: bool) -> _Day:
        return self._listed(day) if relist or day not in self._days else self._days[day]

    def _located(self, day: str) -> tuple[str, tuple[int, int, int] | None]:
        """The day's folder and its stamp. The check that it leads nowhere outside resolves every
        link on the way, so it is made again only when the folder is another one (its inode)."""
        placed = self._places.get(day)
        if placed is not None:
            stamp = _folder_stamp(placed[0])
            if stamp is not None and stamp[0] == placed[1]:
                return placed[0], stamp
        folder = str(self.ws.layout_path(f"daily/{day}/x.md").parent)
        stamp = _folder_stamp(folder)
        if stamp is not None:
            self._places[day] = (folder, stamp[0])
        return folder, stamp

    def _listed(self, day: str) -> _Day:
        """The day as its folder lists now: new notes read, vanished ones forgotten."""
        known = self._days.setdefault(day, _Day())
        folder, stamp = self._located(day)
        # An entry added, removed or renamed moves the folder's mtime: a folder that has not moved
        # is listed again only every RECHECK seconds (a day of thousands of notes costs a
        # millisecond or more to list, and a remember would list it every time).
        now = time.monotonic()
        if stamp is not None and stamp == known.stamp and now - known.listed < RECHECK:
            return known
        try:
            names = frozenset(os.listdir(folder))
        except OSError:  # no folder yet (or not a folder: writing a note there says so)
            names = frozenset()
        known.stamp, known.listed = stamp, now
        if names == known.names:
            return known
        gone = known.names - names
        for name in gone:
            known.forget(name)
        if gone:  # twins fold to one name: fold what is left again
            known.folded = {fold_name(name) for name in names}
        for name in names - known.names:
            known.folded.add(fold_name(name))
            # Every *.md, dot-files too, as ReMe lists them (temp files end in .tmp-<hex>).
            if _is_note(name):
                fresh = self._read(folder, day, name, None)
                if fresh is not None:
                    known.put(name, fresh)
        known.names = names
        return known

    @staticmethod
    def _read(folder: str, day: str, name: str, old: tuple[str, NoteInfo] | None) -> tuple[str, NoteInfo] | None:
        path = os.path.join(folder, name)
        if old is not None:
            try:
                st = os.lstat(path)
            except OSError:
                return None
            if stat.S_ISREG(st.st_mode) and file_stamp(st) == old[0]:
                return old
        try:
            # O_NONBLOCK: a FIFO named like a note must not hang the reader; O_NOFOLLOW: no links.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            # Checked before fdopen, which refuses a folder's descriptor with an error naming only its number.
            opened: os.stat_result | None = os.fstat(fd)
        except OSError:
            opened = None
        if opened is None or not stat.S_ISREG(opened.st_mode) or opened.st_size > MAX_NOTE_READ:
            os.close(fd)
            return None
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace", newline="") as fh:
            try:
                text = fh.read()
            except OSError:
                return None
        meta, body_start = split_front_matter(text)
        digest = body_hash("\n".join(text.split("\n")[body_start:]))
        return file_stamp(opened), NoteInfo(f"daily/{day}/{name}", meta, digest)


def _folder_stamp(folder: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def fold_name(name: str) -> str:
    """Names that differ only by case or Unicode normalisation are one file on macOS and Windows."""
    return unicodedata.normalize("NFC", name).casefold()


def _is_note(name: str) -> bool:
    """A name with the suffix .md, as pathlib reads suffixes (".md" alone has none). A name that
    is not UTF-8 is no note a client can be told of (storage/text.py); it still takes its name."""
    return name.endswith(".md") and name.rfind(".") > 0 and nameable(name)
