"""The memory operations: search, read, traverse, daily_list and remember, as plain Python.

The MCP server and the CLI are thin faces over this class; neither holds logic it lacks.
"""

from __future__ import annotations

import json
import os
from collections import deque
from pathlib import Path
from typing import Literal

from reme_mcp import boundary, exchange
from reme_mcp.config import Settings
from reme_mcp.daily import (
    NoteMetaCache,
    list_note_days,
    parse_date,
    parse_range,
    read_day_notes,
    refresh_day_index,
    render_note,
)
from reme_mcp.documents import meta_text, parse_message, split_front_matter
from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.index import ChunkHit, MemoryIndex, ranking
from reme_mcp.intake import REQUEST_KEY, NoteInput, check_input, fold_name
from reme_mcp.ledger import Ledger
from reme_mcp.models import (
    DailyListResult,
    DailyNote,
    Day,
    GraphEdge,
    GraphNode,
    ReadResult,
    RememberResult,
    SearchHit,
    SearchResult,
    TraverseResult,
    shown_query,
)
from reme_mcp.workspace import MAX_INDEXED_BYTES, PRIVATE_DIRS, Workspace, is_text_file

MAX_QUERY_CHARS = 10_000
MAX_READ_CHARS = 12_000
MAX_READ_BYTES = MAX_INDEXED_BYTES  # read holds the whole file in memory: a 100 MB log must not
MAX_FOLDER_ENTRIES = 200
MAX_NODES = 500
Direction = Literal["forward", "backward", "both"]


class Memory:
    """A ReMe workspace's memory: the five operations over its files and index."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.ws = Workspace(settings.workspace)
        self.ledger = Ledger(self.ws)
        self.index = MemoryIndex(self.ws, max_scan_interval=settings.sync_interval)
        self._note_meta: NoteMetaCache = {}

    # ---- search ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 5,
        start_date: str | None = None,
        end_date: str | None = None,
        path_prefix: str | None = None,
        max_chars: int = 4000,
    ) -> SearchResult:
        """Find memory evidence for a free-text query, best first."""
        if not 1 <= limit <= 50:
            raise ReMeError(f"limit {limit} is out of range: use 1 to 50")
        if max_chars < 100:
            raise ReMeError(f"max_chars {max_chars} is too small: use at least 100")
        start, end = parse_range(start_date, end_date)
        prefix = self._prefix(path_prefix) if path_prefix else None
        text = query[:MAX_QUERY_CHARS]
        if not self.ws.root.is_dir():
            return SearchResult(query=shown_query(query), results=[], total_hits=0, truncated=False)
        self.index.sync()
        tokens = self.index.query_tokens(text)  # analysed once: for the query and for the snippets
        hits, total = self.index.search(tokens, limit, start, end, prefix, ranking.phrase_pairs(text))
        hits = [exchange.with_reply(hit, self.index.following) for hit in hits]
        share = max(80, max_chars // max(1, len(hits)))
        results: list[SearchHit] = []
        truncated = False
        for hit in hits:
            snippet, cut = make_snippet(hit, tokens, share)
            truncated |= cut
            results.append(
                SearchHit(
                    path=hit.path,
                    start_line=hit.start_line,
                    end_line=hit.end_line,
                    score=round(hit.score, 4),
                    name=boundary.escape(hit.name) or None,
                    description=boundary.escape(hit.description) or None,
                    date=hit.date,
                    snippet=boundary.wrap(snippet, "search"),
                )
            )
        return SearchResult(
            query=shown_query(query), results=results, total_hits=max(total, len(results)), truncated=truncated
        )

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
        max_chars: int = MAX_READ_CHARS,
    ) -> ReadResult:
        """A file, or some of its lines; JSONL dialogs read as one readable message per line."""
        full = self.ws.contained_path(path)
        rel = self.ws.relative(full)
        if full.is_dir():
            raise ReMeError(f"{rel} is a folder: use traverse to list it, or read one of its files")
        if not full.is_file():
            raise ReMeError(f"{rel} does not exist: search or traverse to find a file's path")
        if max_chars < 100:
            raise ReMeError(f"max_chars {max_chars} is too small: use at least 100")
        if start_line is not None and start_line < 1:
            raise ReMeError(f"start_line {start_line} is out of range: lines start at 1")
        if end_line is not None and end_line < (start_line or 1):
            raise ReMeError(f"end_line {end_line} is before start_line {start_line or 1}: give end_line >= start_line")
        try:
            size = full.stat().st_size
            if size > MAX_READ_BYTES:
                raise ReMeError(
                    f"{rel} is {size // (1024 * 1024)} MB: files over {MAX_READ_BYTES // (1024 * 1024)} MB are not read; "
                    "split it into smaller files to make it readable"
                )
            raw = full.read_bytes()
        except OSError as exc:
            raise ReMeError(f"{rel} cannot be read ({exc.strerror or exc.__class__.__name__})") from exc
        if not is_text_file(full, raw[:4096]):
            raise ReMeError(f"{rel} is a binary file ({len(raw)} bytes): only text files can be read")
        text = raw.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        first = start_line or 1
        if total == 0:
            first = 1
        elif first > total:
            raise ReMeError(f"start_line {first} is past the end: {rel} has {total} lines")
        last = min(end_line or total, total)
        is_dialog = rel.endswith(".jsonl")
        out: list[str] = []
        size = 0
        next_line = None
        for number in range(first, last + 1):
            line = lines[number - 1]
            if is_dialog:
                message = parse_message(line)
                line = f"{number}: {message.render()}" if message else f"{number}: (no readable message)"
            if size + len(line) + 1 > max_chars and out:
                next_line = number
                break
            if len(line) > max_chars:
                line = line[:max_chars] + "…"
            out.append(line)
            size += len(line) + 1
        returned_last = first + len(out) - 1 if out else 0
        meta = None
        if rel.endswith((".md", ".markdown")):
            found, _ = split_front_matter(text)
            meta = json.loads(boundary.escape(json.dumps(found, ensure_ascii=False))) if found else None
        return ReadResult(
            path=rel,
            start_line=first,
            end_line=returned_last,
            total_lines=total,
            content=boundary.wrap("\n".join(out), "read"),
            metadata=meta,
            truncated=next_line is not None,
            next_line=next_line,
        )

    # ---- traverse ----------------------------------------------------------------------------

    def traverse(self, path: str = "", depth: int = 1, direction: str = "forward") -> TraverseResult:
        """Follow wikilinks from or to a file, or list a folder, down to `depth`."""
        if not 1 <= depth <= 3:
            raise ReMeError(f"depth {depth} is out of range: use 1, 2 or 3")
        if direction not in ("forward", "backward", "both"):
            raise ReMeError(f"direction {direction!r} is not known: use forward, backward or both")
        full = self.ws.contained_path(path, allow_root=True)
        rel = self.ws.relative(full) if full != self.ws.root else ""
        if full.is_dir() or (rel == "" and not full.exists()):
            return self._traverse_folder(full, rel, depth)
        if not full.is_file():
            raise ReMeError(f"{rel} does not exist: traverse a folder (or the root, path '') to find files")
        return self._traverse_links(rel, depth, direction)  # type: ignore[arg-type]

    def _node(self, path: str, depth: int) -> GraphNode:
        record = self.index.records().get(path)
        # A link target is a string from a file: only a path the walk would serve may be looked up.
        exists = record is not None or self.ws.entry(path) is not None
        return GraphNode(
            path=path,
            kind="file",
            depth=depth,
            name=boundary.escape(record.name) if record and record.name else None,
            description=boundary.escape(record.description) if record and record.description else None,
            exists=exists,
        )

    def _traverse_links(self, start: str, depth: int, direction: Direction) -> TraverseResult:
        self.index.sync()
        records = self.index.records()
        nodes = {start: self._node(start, 0)}
        edges: list[GraphEdge] = []
        seen_edges: set[tuple[str, str]] = set()  # a set: `in` over the edge models was quadratic
        queue = deque([(start, 0)])
        omitted = 0
        while queue:
            current, level = queue.popleft()
            if level >= depth:
                continue
            neighbours: list[tuple[str, GraphEdge]] = []
            if direction in ("forward", "both"):
                record = records.get(current)
                for target in record.links if record else ():
                    neighbours.append((target, GraphEdge(source=current, target=target, kind="link")))
            if direction in ("backward", "both"):
                for source in self.index.backlinks(current):
                    neighbours.append((source, GraphEdge(source=source, target=current, kind="link")))
            for other, edge in neighbours:
                if len(nodes) >= MAX_NODES and other not in nodes:
                    omitted += 1
                    continue
                key = (edge.source, edge.target)
                if key not in seen_edges:
                    seen_edges.add(key)
                    edges.append(edge)
                if other not in nodes:
                    nodes[other] = self._node(other, level + 1)
                    if nodes[other].exists:
                        queue.append((other, level + 1))
        return TraverseResult(path=start, direction=direction, nodes=list(nodes.values()), edges=edges, omitted=omitted)

    def _traverse_folder(self, folder: Path, rel: str, depth: int) -> TraverseResult:
        records = self.index.records() if self.ws.root.is_dir() else {}
        nodes = [GraphNode(path=rel, kind="folder", depth=0)]
        edges: list[GraphEdge] = []
        omitted = 0
        queue = deque([(folder, rel, 0)])
        while queue:
            current, current_rel, level = queue.popleft()
            if level >= depth:
                continue
            try:
                entries = sorted(
                    (e for e in current.iterdir() if not e.name.startswith(".")),
                    key=lambda e: (not e.is_dir(), e.name),
                )
            except OSError:
                continue
            if current == self.ws.root:
                entries = [e for e in entries if e.name not in PRIVATE_DIRS]
            for i, entry in enumerate(entries):
                if i >= MAX_FOLDER_ENTRIES or len(nodes) >= MAX_NODES:
                    omitted += len(entries) - i
                    break
                child = f"{current_rel}/{entry.name}" if current_rel else entry.name
                try:
                    inside = entry.resolve().is_relative_to(self.ws.root)
                except (OSError, RuntimeError):
                    inside = False
                if not inside:
                    continue
                if entry.is_dir():
                    nodes.append(GraphNode(path=child, kind="folder", depth=level + 1))
                    queue.append((entry, child, level + 1))
                else:
                    record = records.get(child)
                    nodes.append(
                        GraphNode(
                            path=child,
                            kind="file",
                            depth=level + 1,
                            name=boundary.escape(record.name) if record and record.name else None,
                            description=boundary.escape(record.description) if record and record.description else None,
                        )
                    )
                edges.append(GraphEdge(source=current_rel, target=child, kind="contains"))
        return TraverseResult(path=rel, nodes=nodes, edges=edges, omitted=omitted)

    # ---- daily_list --------------------------------------------------------------------------

    def daily_list(
        self,
        date: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        limit: int = 7,
    ) -> DailyListResult:
        """The days that have notes, newest first, read from the notes themselves."""
        if not 1 <= limit <= 366:
            raise ReMeError(f"limit {limit} is out of range: use 1 to 366")
        if date is not None and (start_date or end_date):
            raise ReMeError("give either date or start_date/end_date, not both")
        if date is not None:
            day = parse_date(date) if date else self.settings.today().isoformat()
            days = [day]
        else:
            start, end = parse_range(start_date, end_date)
            days = [d for d in list_note_days(self.ws) if (not start or d >= start) and (not end or d <= end)]
        out: list[Day] = []
        for day in days:
            notes = [
                DailyNote(
                    path=n.path,
                    name=boundary.escape(meta_text(n.meta, "name")) or None,
                    description=boundary.escape(meta_text(n.meta, "description")) or None,
                    session_id=meta_text(n.meta, "session_id") or None,
                )
                for n in read_day_notes(self.ws, day, self._note_meta)
            ]
            if notes or date is not None:
                out.append(Day(date=day, notes=notes))
            if len(out) >= limit:
                break
        return DailyListResult(days=out)

    # ---- remember ----------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        name: str | None = None,
        description: str | None = None,
        date: str | None = None,
        tags: list[str] | None = None,
        request_id: str | None = None,
    ) -> RememberResult:
        """Store a durable fact as a ReMe daily note; searchable before this returns.

        The note file is the commit point: it carries the request's hash, and its body is
        the content, so a retry finds it on disk whatever later step failed (day index,
        ledger, index commit) and completes those steps instead of writing a second note.
        """
        note = check_input(
            content,
            name,
            description,
            date or self.settings.today().isoformat(),
            tags,
            request_id,
            self.settings.max_note_chars,
        )
        try:
            return self._remember(note)
        except OSError as exc:
            raise ReMeError(os_error_line(exc, "remember")) from exc

    def _remember(self, note: NoteInput) -> RememberResult:
        day = note.day
        folder = self.ws.layout_path(f"daily/{day}/x.md").parent
        # The new note is indexed after the write lock is released: the lock covers only the
        # duplicate checks and the file writes, so concurrent writers queue for milliseconds,
        # and their index commits are shared (index.write_files_shared).
        with self.ws.lock("write"):
            previous = self._stored(note)
            if previous is not None:
                prev_day = previous.split("/")[1]
                day_index = self._finish(previous, prev_day, note, after_write=False)
                return RememberResult(path=previous, created=False, duplicate_of=previous, day_index=day_index)
            self.ws.remove_stale_temp_files(folder)  # a killed writer's note ...
            self.ws.remove_stale_temp_files(folder.parent)  # ... or day index
            meta: dict[str, object] = {"name": note.stem, "description": note.description}
            if note.tags:
                meta["tags"] = note.tags
            if note.request_hash:
                meta[REQUEST_KEY] = note.request_hash
            target = self._write_unique(folder, note.stem, meta, note.content)
            rel = f"daily/{day}/{target.name}"
            day_index = self._finish(rel, day, note, after_write=True)
        try:
            self.index.write_files_shared([rel, day_index])
        except OSError as exc:
            raise ReMeError(
                f"stored {rel}, but the search index could not be updated ({os_error_line(exc, 'indexing')}); "
                "the note is indexed by the next search that can write the index"
            ) from exc
        return RememberResult(path=rel, created=True, duplicate_of=None, day_index=day_index)

    def _stored(self, note: NoteInput) -> str | None:
        """The note already holding this request or content: on disk first, then the ledger and index."""
        for info in read_day_notes(self.ws, note.day, self._note_meta):
            if note.request_hash and info.meta.get(REQUEST_KEY) == note.request_hash:
                return info.path
        for info in read_day_notes(self.ws, note.day, self._note_meta):
            if info.body_hash == note.digest:
                return info.path
        found = self.ledger.request(note.request_hash) if note.request_hash else None
        found = found or self.ledger.body(note.digest)
        if found is None:
            indexed = self.index.find_body(note.digest)
            found = indexed if indexed and indexed.startswith("daily/") and self.ws.entry(indexed) else None
        return found

    def _finish(self, rel: str, day: str, note: NoteInput, *, after_write: bool) -> str:
        """The steps after the note: day index and ledger; a failure names the stored note."""
        try:
            day_index = self.ws.relative(refresh_day_index(self.ws, day, self._note_meta))
            self.ledger.record_request(note.request_hash, rel)
            self.ledger.record_body(note.digest, rel)
        except (OSError, ReMeError) as exc:
            cause = os_error_line(exc, "refreshing the day index") if isinstance(exc, OSError) else str(exc)
            raise ReMeError(
                f"{'stored' if after_write else 'already stored'} {rel}, but {cause}; "
                "call remember again with the same request_id or content to finish (nothing is stored twice)"
            ) from exc
        return day_index

    def _write_unique(self, folder: Path, stem: str, meta: dict[str, object], content: str) -> Path:
        """Write under the first free name (stem, stem-2, ...): an existing note is never overwritten.

        A name taken by a case or Unicode-normalisation twin counts as taken: on macOS and
        Windows they are the same file.
        """
        try:
            taken = {fold_name(p.name) for p in folder.iterdir()}
        except FileNotFoundError:
            taken = set()
        except NotADirectoryError as exc:
            raise ReMeError(
                f"daily/{folder.name} is a file, not a folder: move it away so notes can be written"
            ) from exc
        for n in range(1, 10_000):
            candidate = stem if n == 1 else f"{stem[: 80 - len(str(n)) - 1]}-{n}"
            target = folder / f"{candidate}.md"
            if fold_name(target.name) in taken or os.path.lexists(target):
                continue
            try:
                self.ws.write_atomic(target, render_note({**meta, "name": candidate}, content), exclusive=True)
            except FileExistsError:
                continue
            return target
        raise ReMeError(f"too many notes named {stem!r} on one day: give a different name")


def make_snippet(hit: ChunkHit, tokens: list[str], budget: int) -> tuple[str, bool]:
    """The chunk's text cut to `budget` characters around the first query term it contains."""
    text = hit.content
    if len(text) <= budget:
        return text, False
    lowered = text.lower()
    positions = [p for t in tokens if (p := lowered.find(t.lower())) >= 0]
    anchor = min(positions) if positions else 0
    start = max(0, min(anchor - budget // 4, len(text) - budget))
    piece = text[start : start + budget]
    return ("…" if start else "") + piece + ("…" if start + budget < len(text) else ""), True


__all__ = ["Memory", "make_snippet"]
