"""Which files a person's selection names: paths, a search, a date range, ingested sessions.

The union of what each part names, in the order given, each file once. A day index is never
forgotten itself: it lists notes (its block is rebuilt when they go) and may hold a person's
own text, which they edit by hand. A selection reads the workspace it is given and nothing
else, so the same selection serves any workspace (a project's, the personal one).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError, shown
from reme_mcp.ingest.dialog import DIALOG_DIR, dialog_name
from reme_mcp.ingest.sources import SOURCES
from reme_mcp.notes.daily import parse_date
from reme_mcp.ops.forget.results import Skipped
from reme_mcp.ops.limits import SEARCH_LIMIT
from reme_mcp.storage.workspace import Workspace, file_kind, path_date

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

DAY_INDEX_WHY = "a day index: it is rebuilt when its notes go; forget the notes, edit your own text in it by hand"
SPANS_WHY = "has messages outside the date range: forget it by its path or --session"
# A dialog larger than this is not read for its dates (the index would not hold it either).
MAX_DIALOG_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Selection:
    """What to forget; every part is optional, and the files named are their union.

    - `paths`: workspace-relative files, or folders (every memory file under them);
    - `query` (with `limit`): the files `search` returns for it, as it returns them;
    - `since` / `until` (YYYY-MM-DD, inclusive): daily notes of those days, dialogs whose every
      dated message falls in them, and files whose path carries such a date (resource/<date>/);
    - `sessions`: ingested sessions as `HOST:ID` (a source such as claude-code, and the
      host's session id), or a dialog's path.
    """

    paths: tuple[str, ...] = ()
    query: str | None = None
    limit: int = SEARCH_LIMIT.default
    since: str | None = None
    until: str | None = None
    sessions: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.paths or (self.query or "").strip() or self.since or self.until or self.sessions)


def selected(memory: Memory, selection: Selection) -> tuple[list[str], list[Skipped]]:
    """The files the selection names, in order, and those it names but that are not forgotten."""
    if selection.empty:
        raise ReMeError("nothing selected: give paths, a query, a date range (since/until) or a session")
    ws = memory.ws
    named: list[str] = []
    skipped: list[Skipped] = []
    for raw in selection.paths:
        named += by_path(ws, raw)
    if (selection.query or "").strip():
        SEARCH_LIMIT.check("limit", selection.limit)
        found = memory.search(selection.query or "", limit=selection.limit)
        named += [hit.path for hit in found.results]
    if selection.since or selection.until:
        dated, spanning = by_dates(ws, selection.since, selection.until)
        named += dated
        skipped += [Skipped(path=p, why=SPANS_WHY) for p in spanning]
    for spec in selection.sessions:
        named += by_session(ws, spec)
    kept: list[str] = []
    for path in dict.fromkeys(named):
        if file_kind(path) == "day_index":
            skipped.append(Skipped(path=path, why=DAY_INDEX_WHY))
        else:
            kept.append(path)
    return kept, skipped


def by_path(ws: Workspace, raw: str) -> list[str]:
    """A file, or every memory file under a folder; a path that is neither is a one-line error."""
    full = ws.contained_path(raw)
    rel = ws.relative(full)
    if full.is_dir():
        return sorted(entry.path for entry in ws.walk(full))
    if ws.entry(rel) is None:
        raise ReMeError(f"{shown(rel)} is not a memory file in {ws.root}: pass a path that search or read returned")
    return [rel]


def by_dates(ws: Workspace, since: str | None, until: str | None) -> tuple[list[str], list[str]]:
    """Files wholly inside the date range, and dialogs that are only partly inside it."""
    low = parse_date(since, "since") if since else "0000-00-00"
    high = parse_date(until, "until") if until else "9999-99-99"
    if low > high:
        raise ReMeError(f"since {low} is after until {high}: give the earlier day first")
    inside: list[str] = []
    spanning: list[str] = []
    for entry in sorted(ws.walk(), key=lambda e: e.path):
        kind = file_kind(entry.path)
        if kind in ("dialog", "transcript"):
            days = set(_message_days(ws, entry.path)) if entry.size <= MAX_DIALOG_BYTES else set()
            within = {d for d in days if low <= d <= high}
            if within and within == days:
                inside.append(entry.path)
            elif within:
                spanning.append(entry.path)
            continue
        day = path_date(entry.path)
        if kind != "day_index" and day is not None and low <= day <= high:
            inside.append(entry.path)
    return inside, spanning


def _message_days(ws: Workspace, rel: str) -> Iterator[str]:
    """The day of each dated message of a JSONL dialog (broken lines skipped)."""
    try:
        data = (ws.root / rel).read_bytes()
    except OSError:
        return
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        when = record.get("created_at") or record.get("timestamp") if isinstance(record, dict) else None
        if isinstance(when, str) and len(when) >= 10:
            yield when[:10]


def by_session(ws: Workspace, spec: str) -> list[str]:
    """The dialog files of one ingested session (`HOST:ID`), or a dialog's path."""
    if spec.endswith(".jsonl") or "/" in spec:
        return by_path(ws, spec)
    host, sep, session_id = spec.partition(":")
    if not sep or not host.strip() or not session_id.strip():
        raise ReMeError(f"session {shown(spec)} is not HOST:ID: give e.g. claude-code:<session id>, or a dialog's path")
    source = SOURCES.get(host.strip().lower())
    folder = ws.root / DIALOG_DIR / (source.host if source is not None else host.strip())
    # The file is named after the id and a hash of where its log was (dialog.dialog_name).
    stem = dialog_name(session_id, "").rsplit("-", 1)[0]
    candidates = sorted(folder.glob(f"{stem}-*.jsonl")) if folder.is_dir() else []
    found = [ws.relative(path) for path in candidates if session_id in _session_ids(path)]
    if not found:
        raise ReMeError(
            f"no imported dialog of session {shown(session_id)} from {shown(host)} in {ws.root}: "
            "pass the dialog's path (search or traverse session/dialog/ shows them)"
        )
    return found


def _session_ids(path: Path) -> set[str]:
    """The session ids a dialog's lines carry in their metadata (dialog.message_line)."""
    ids: set[str] = set()
    try:
        with path.open("rb") as fh:
            for line in fh:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                meta = record.get("metadata") if isinstance(record, dict) else None
                if isinstance(meta, dict) and isinstance(meta.get("session_id"), str):
                    ids.add(meta["session_id"])
    except OSError:
        pass
    return ids
