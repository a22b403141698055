"""The memory operations: search, read, traverse, daily_list and remember, as plain Python.

The MCP server and the CLI are thin faces over this class: they translate arguments
and results, and reach nothing behind it (not its workspace, index or ledger). The
upkeep they need (warming up, rebuilding the index, the doctor's report) is here too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from reme_mcp.config import Settings
from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.index import Found, MemoryIndex
from reme_mcp.index.semantic.hook import wanted
from reme_mcp.notes.daily import DayIndex, parse_date, parse_range
from reme_mcp.notes.ledger import Ledger
from reme_mcp.ops import doctor, echo, refusals, team_sync, traverse
from reme_mcp.ops.intake import NoteInput, NoteRequest, SecretRefused, check_input, check_supersedes
from reme_mcp.ops.limits import (
    DAILY_LIMIT,
    DIRECTIONS,
    MAX_QUERY_CHARS,
    READ_MAX_CHARS,
    SEARCH_LIMIT,
    SEARCH_MAX_CHARS,
    TRAVERSE_DEPTH,
    check_query,
)
from reme_mcp.ops.references import resolve_reference
from reme_mcp.ops.reports import DoctorReport, ReindexResult
from reme_mcp.ops.results import (
    DailyListResult,
    DailyNote,
    Day,
    ReadResult,
    RememberResult,
    SearchResult,
    TraverseResult,
    escaped_front_matter,
)
from reme_mcp.ops.search_result import search_result
from reme_mcp.ops.versions import may_replace as replacements
from reme_mcp.safety import boundary
from reme_mcp.safety.boundary import escaped
from reme_mcp.storage.documents import is_dialog, is_markdown, meta_text, text_window
from reme_mcp.storage.text import readable
from reme_mcp.storage.workspace import MAX_INDEXED_BYTES, Workspace
from reme_mcp.team.status import SyncStatus

if TYPE_CHECKING:
    from reme_mcp.team.background import BackgroundSync
    from reme_mcp.team.run import SyncReport

log = logging.getLogger("reme_mcp")
# read holds the whole file in memory: no larger file than the index would take.
MAX_READ_BYTES = MAX_INDEXED_BYTES


class Memory:
    """One ReMe workspace's memory: the five operations over its files and index (a session's
    several workspaces are a `SessionMemory`; the library's entry point is this class)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.ws = Workspace(settings.workspace)
        self.ledger = Ledger(self.ws)
        chosen = settings.semantic_model
        self.index = MemoryIndex(
            self.ws,
            max_scan_interval=settings.sync_interval,
            home=settings.index_home,
            commit_in_child=settings.commit_in_child,
            semantic=wanted(settings.semantic, chosen),
            semantic_model=chosen,
            models_home=settings.models_home,
        )
        self.days = DayIndex(self.ws, refreshed=self.index.written)
        self._team: BackgroundSync | None = None
        self.sync_status = SyncStatus(self.ws)  # the last team sync, owed to the disk when refused

    # ---- search ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = SEARCH_LIMIT.default,
        start_date: str | None = None,
        end_date: str | None = None,
        path_prefix: str | None = None,
        max_chars: int = SEARCH_MAX_CHARS.default,
    ) -> SearchResult:
        """Find memory evidence for a free-text query, best first."""
        query = check_query(readable(query))  # an argument that is not UTF-8 (text.py)
        where = self.ready_to_find(limit, start_date, end_date, path_prefix, max_chars)
        found = self.index.find(query[:MAX_QUERY_CHARS], limit, *where, max_chars) if where else Found([], 0)
        return search_result(query, found)

    def ready_to_find(
        self, limit: int, start_date: str | None, end_date: str | None, path_prefix: str | None, max_chars: int
    ) -> tuple[str | None, str | None, str | None] | None:
        """A search's arguments checked, as (start, end, path prefix), and the index synced with
        the files; None when there is no workspace yet (nothing to find)."""
        SEARCH_LIMIT.check("limit", limit)
        SEARCH_MAX_CHARS.check("max_chars", max_chars)
        start, end = parse_range(start_date, end_date)
        prefix = self._prefix(path_prefix) if path_prefix else None
        if not self.ws.root.is_dir():
            return None
        self.index.sync()
        return start, end, prefix

    def _prefix(self, prefix: str) -> str:
        """A folder filter, checked like any path (no escapes, no private folders)."""
        self.ws.contained_path(prefix.rstrip("/"))
        return prefix.strip()

    # ---- read --------------------------------------------------------------------------------

    def read(
        self,
        path: str,
        start_line: int | None = None,
        end_line: int | None = None,
        max_chars: int = READ_MAX_CHARS.default,
    ) -> ReadResult:
        """A file, or some of its lines; JSONL dialogs read as one readable message per line."""
        READ_MAX_CHARS.check("max_chars", max_chars)
        path, start_line, end_line = resolve_reference(path, start_line, end_line, [self.ws])
        rel, text = self.ws.read_text(path, MAX_READ_BYTES)
        window = text_window(text, start_line, end_line, max_chars, dialog=is_dialog(rel), shown_as=rel)
        return ReadResult(
            path=rel,
            start_line=window.first,
            end_line=window.last,
            total_lines=window.total,
            content=boundary.wrap("\n".join(window.lines), "read"),
            metadata=escaped_front_matter(text) if is_markdown(rel) else None,
            truncated=window.next_line is not None,
            next_line=window.next_line,
            superseded_by=self._replacements([rel])[rel] if is_markdown(rel) else [],
        )

    # ---- traverse ----------------------------------------------------------------------------

    def traverse(
        self, path: str = "", depth: int = TRAVERSE_DEPTH.default, direction: str = "forward"
    ) -> TraverseResult:
        """Follow wikilinks from or to a file, or list a folder, down to `depth`."""
        TRAVERSE_DEPTH.check("depth", depth)
        if direction not in DIRECTIONS:
            raise ReMeError(f"direction {direction!r} is not known: use forward, backward or both")
        full = self.ws.contained_path(path, allow_root=True)
        rel = self.ws.relative(full) if full != self.ws.root else ""
        if full.is_dir() or (rel == "" and not full.exists()):
            records = self.index.records() if self.ws.root.is_dir() else {}
            return traverse.folder_tree(self.ws, full, rel, depth, records)
        if not full.is_file():
            raise ReMeError(f"{rel} does not exist: traverse a folder (or the root, path '') to find files")
        self.index.sync()
        return traverse.link_graph(rel, depth, direction, self.index.records(), self._served)

    def _served(self, path: str) -> bool:
        """Whether the walk would serve this path: a link target is a string from a file, never trusted."""
        return self.ws.entry(path) is not None

    # ---- daily_list --------------------------------------------------------------------------

    def daily_list(
        self,
        date: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        limit: int = DAILY_LIMIT.default,
    ) -> DailyListResult:
        """The days that have notes, newest first, read from the notes themselves."""
        DAILY_LIMIT.check("limit", limit)
        if date is not None and (start_date or end_date):
            raise ReMeError("give either date or start_date/end_date, not both")
        out: list[Day] = []
        for day in self._days(date, start_date, end_date):
            notes = self._day_notes(day)
            if notes or date is not None:
                out.append(Day(date=day, notes=notes))
            if len(out) >= limit:
                break
        return DailyListResult(days=out)

    def _day_notes(self, day: str) -> list[DailyNote]:
        found = self.days.notes(day)
        replaced = self._replacements(n.path for n in found)
        return [
            DailyNote(
                path=n.path,
                name=escaped(meta_text(n.meta, "name")),
                description=escaped(meta_text(n.meta, "description")),
                session_id=meta_text(n.meta, "session_id") or None,
                superseded_by=replaced[n.path],
            )
            for n in found
        ]

    def _replacements(self, paths: Iterable[str]) -> dict[str, list[str]]:
        """For each path, the notes that supersede it, as the index knows them (none without an index)."""
        wanted = list(paths)
        if not wanted or not self.index.ready():
            return {path: [] for path in wanted}
        return self.index.superseded_by(wanted)

    def _days(self, date: str | None, start_date: str | None, end_date: str | None) -> list[str]:
        """One asked-for day ("" is today), or the days with notes in a range, newest first."""
        if date is not None:
            return [parse_date(date) if date else self.settings.today().isoformat()]
        start, end = parse_range(start_date, end_date)
        return [d for d in self.days.days() if (not start or d >= start) and (not end or d <= end)]

    # ---- remember ----------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        name: str | None = None,
        description: str | None = None,
        date: str | None = None,
        tags: list[str] | None = None,
        request_id: str | None = None,
        supersedes: list[str] | None = None,
    ) -> RememberResult:
        """Store a durable fact as a ReMe daily note; searchable before this returns.

        The note file is the commit point: it carries the request's hash, and its body is
        the content, so a retry finds it on disk whatever later step failed (day index,
        ledger, index commit) and completes those steps instead of writing a second note.

        `supersedes`: the notes this one replaces (a correction, a newer value, a retraction);
        they are named in its front matter and never touched. Content that only echoes a note
        already kept (recalled text stored back) is not stored again (echo.py).
        """
        return self.keep(self.intake(NoteRequest(content, name, description, date, tags, request_id, supersedes)))

    def intake(self, request: NoteRequest) -> NoteInput:
        """The note `remember` would store, checked once (one-line ReMeError); a refused secret is
        counted by kind (refusals.py)."""
        day = request.date or self.settings.today().isoformat()
        try:
            note = check_input(
                request.content,
                request.name,
                request.description,
                day,
                request.tags,
                request.request_id,
                self.settings.max_note_chars,
            )
        except SecretRefused as exc:
            refusals.record(self.index.directory.parent, exc.kind)
            raise
        supersedes = check_supersedes(self.ws, request.supersedes or [])
        return dataclasses.replace(note, supersedes=supersedes, recalled=echo.looks_recalled(request.content))

    def keep(self, note: NoteInput) -> RememberResult:
        """Write a note `intake` checked: searchable before this returns, exactly once."""
        try:
            return self._remember(note)
        except OSError as exc:
            raise ReMeError(os_error_line(exc, "remember")) from exc

    def _remember(self, note: NoteInput) -> RememberResult:
        # The echo's search runs before the lock: it must not hold up other writers.
        echoed = echo.kept_already(self.index, note) if note.recalled else None
        named = replacements.may_replace(self.index, note) if echoed is None else []
        # The lock covers only the duplicate checks and the file writes, so concurrent writers
        # queue for milliseconds; the index commit is batched (reme_mcp/storage/batching.py), and every
        # search after this returns commits what waits before it reads.
        with self.ws.lock("write"):
            previous = self._stored(note)
            if previous is not None:
                day_index, behind = self._finish(previous, previous.split("/")[1], note, after_write=False)
                added = replacements.link_supersedes(self.ws, self.index, previous, note)
                return RememberResult(
                    path=previous, created=False, duplicate_of=previous, day_index=day_index, day_index_behind=behind
                ).linked(added)
            if echoed is not None:
                return echoed
            rel = self.days.write_note(note.day, note.stem, note.front_matter(), note.content)
            try:  # acknowledged only once searchable: a note that cannot be is taken back, and the error says why
                self.index.written([rel, f"daily/{note.day}.md"])
            except OSError:
                self.days.unwrite(rel)
                raise
            day_index, behind = self._finish(rel, note.day, note, after_write=True)
        done = RememberResult(path=rel, created=True, duplicate_of=None, day_index=day_index, day_index_behind=behind)
        return done.naming(named)

    def _stored(self, note: NoteInput) -> str | None:
        """The note already holding this request or content: on disk first, then the ledger and index."""
        found = self.days.find(note.day, note.request_hash, note.digest)
        if found is None and note.request_hash:
            found = self.ledger.request(note.request_hash)
        found = found or self.ledger.body(note.digest)
        if found is None:
            indexed = self.index.find_body(note.digest)
            found = indexed if indexed and indexed.startswith("daily/") and self.ws.entry(indexed) else None
        return found

    def _finish(self, rel: str, day: str, note: NoteInput, *, after_write: bool) -> tuple[str, str | None]:
        """The derived steps after the note, day index and ledger, each caught up later when it cannot be
        written now (a full disk); the day index's path, and why it is behind (None when it is not)."""
        done = self.days.refresh_after_write(day) if after_write else self.days.refresh_or_owe(day)
        self.ledger.record(note.request_hash, note.digest, rel)
        return done

    # ---- upkeep ------------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Open and sync the index and sweep a killed writer's leftovers, so the first call is fast;
        with search by meaning on, load its model and embed what changed, in the background."""
        if self.ws.root.is_dir():
            self.index.sync(force=True)
            self.ledger.sweep()
            self.days.sweep()
            with contextlib.suppress(OSError, ReMeError):  # a read-only workspace: a remember says why
                self.days.catch_up()
        if self.index.semantic is not None:
            # The first question would otherwise wait for the model (about 0.6 s) and find only
            # what was embedded before this start.
            self.index.semantic.changed()

    def embed_waiting(
        self, budget: float, progress: Callable[[int, int], None] | None = None
    ) -> tuple[int, int] | None:
        """With search by meaning on, embed what the index holds and the stage has not embedded
        yet, for at most `budget` seconds (a one-off command's first search would otherwise
        find only what a server embedded before); `progress(embedded, chunks)` as it goes.
        The chunks embedded and the index's chunks when it stopped; None when the stage is off."""
        hook = self.index.semantic
        if hook is None or not self.ws.root.is_dir():
            return None
        self.index.sync()
        return hook.embed_waiting(self.index.state().chunks, budget, progress)

    def finish(self) -> None:
        """Finish what waits for a batch (reme_mcp/storage/batching.py): day indexes, index commits; before exiting."""
        if self._team is not None:
            self._team.stop()
        refreshed = self.days.flush()
        with contextlib.suppress(OSError):  # a day index not indexed now is by the next search's sync
            self.index.written(refreshed)
        self.index.flush()

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> ReindexResult:
        """Rebuild the index from the files; `progress(done, total)` is told of each file."""
        if not self.ws.root.is_dir():
            raise ReMeError(f"no workspace at {self.ws.root}: nothing to index")
        files = 0

        def counted(done: int, total: int) -> None:
            nonlocal files
            files = done
            if progress is not None:
                progress(done, total)

        chunks = self.index.rebuild(progress=counted)
        return ReindexResult(files=files, chunks=chunks, directory=str(self.index.directory))

    def doctor(self) -> DoctorReport:
        """The workspace, its files by kind, the index's state and the configuration; changes nothing."""
        return doctor.report(self.settings, self.ws, self.index, self.sync_status)

    def team_sync(
        self, dry_run: bool = False, init: str | None = None, interactive: bool = True, allow: tuple[str, ...] = ()
    ) -> SyncReport:
        """Sync the workspace through its git remote (reme_mcp/team/), then catch the index up (ops/team_sync.py)."""
        parts = (self.days, self.index, self.ledger, self.sync_status)
        return team_sync.run(self.ws, parts, dry_run, init, interactive, allow)

    def sync_in_background(self, every: float, idle: Callable[[], bool]) -> None:
        """Sync every `every` seconds while serving, whenever `idle()` (no tool call being answered)."""
        from reme_mcp.team.background import BackgroundSync

        self._team = BackgroundSync(lambda: self.team_sync(interactive=False), every, idle)
        self._team.start()

    def follow(self, sources: Collection[str]) -> threading.Event:
        """Import these hosts' session logs into memory in the background; set the event to stop."""
        from reme_mcp.ingest.runner import start_background

        return start_background(self.ws, list(sources), at_most=0.0)


__all__ = ["Memory"]
