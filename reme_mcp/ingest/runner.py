"""One pass over a source (backfill), the follow loop (watch), and the server's background thread."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reme_mcp.errors import ReMeError
from reme_mcp.ingest import parallel_backfill
from reme_mcp.ingest.cursors import SAVE_EVERY, CursorBook
from reme_mcp.ingest.dialog import DIALOG_DIR, DialogWriter
from reme_mcp.ingest.keep import redact_turns
from reme_mcp.ingest.model import Filters, SessionBatch, Tally
from reme_mcp.ingest.sources import Source, get_source
from reme_mcp.ingest.tombstones import Tombstones
from reme_mcp.storage.workspace import Workspace

log = logging.getLogger("reme_mcp.ingest")


class Importer:
    """Reads one source into one workspace, or with `route` each session into the workspace of
    the folder it ran in (one per project); the cursors persist between passes, in `ws`."""

    def __init__(
        self,
        ws: Workspace,
        source: Source,
        location: Path | None = None,
        env: Mapping[str, str] | None = None,
        *,
        dry_run: bool = False,
        filters: Filters | None = None,
        route: Callable[[str], Path] | None = None,
    ) -> None:
        self.ws = ws
        self.route = route
        self._writers: dict[Path, DialogWriter] = {}
        self._homes: dict[str, Path] = {}  # a session's workspace, for its batches that name no folder
        self.source = source
        self.location = location if location is not None else source.default_location(env or os.environ)
        self.dry_run = dry_run
        self.filters = filters or Filters()
        self.book = CursorBook(ws, source.name)
        self.writer = DialogWriter(ws, source.host, source.name)
        self._tombstones: dict[Path, Tombstones] = {}  # a workspace's forgotten sessions
        if dry_run or self.filters.active:
            # A dry run writes nothing, and a filtered pass must not move the cursors past what it left out.
            self.book.save = lambda location: None  # type: ignore[method-assign]

    def problem(self) -> str | None:
        return self.source.problem(self.location)

    def run_once(self, progress: Callable[[int, int], None] | None = None, processes: int = 1) -> Tally:
        """Import everything new since the cursors; raises ReMeError with one line when the source is unusable.

        With `processes` > 1, a long list of log files is shared out to that many worker
        processes (reme_mcp/ingest/parallel_backfill.py); the cursors stay with this one.
        """
        trouble = self.problem()
        if trouble:
            raise ReMeError(trouble)
        units = self.source.units(self.location)
        # A routed import stays in this process: the workers file everything in one workspace.
        if processes > 1 and len(units) >= parallel_backfill.WORTH_SHARING and self.route is None:
            tally = parallel_backfill.run_shared(self, units, processes, progress)
        else:
            tally = self.run_units(units, progress)
        self.book.save(self.location)
        return tally

    def run_units(self, units: list[Path], progress: Callable[[int, int], None] | None = None) -> Tally:
        """Import these units (log files, or the database) past their cursors, saving the cursors now and then."""
        tally = Tally()
        total, done, last_unit = len(units), 0, ""
        saved = time.monotonic()
        for batch, pending in self.source.batches(self.location, units, self.book, tally):
            tally.bytes_read += batch.bytes_read
            self._take(batch, tally)
            if pending is not None and not self.dry_run:
                self.book.set(pending.key, pending.value)
            if batch.source_path != last_unit:
                last_unit, done = batch.source_path, done + 1
                if progress:
                    progress(min(done, total), total)
            if self.book.dirty and time.monotonic() - saved > SAVE_EVERY:
                self.book.save(self.location)
                saved = time.monotonic()
        return tally

    def _take(self, batch: SessionBatch, tally: Tally) -> None:
        if not batch.turns or not self.filters.keeps_session(batch):
            return
        turns = [t for t in batch.turns if not self.filters.since or t.created_at[:10] >= self.filters.since]
        turns = redact_turns(turns)
        writer = self._writer(batch)
        target = writer.target(SessionBatch(batch.session_id, batch.source_path))
        if self._buried(writer.ws, target):
            tally.skipped["message(s) of forgotten sessions"] += len(turns)
            return
        fresh = writer.new_turns(SessionBatch(batch.session_id, batch.source_path, turns=turns), target)
        if not fresh:
            return
        tally.sessions += 1
        for turn in fresh:
            tally.add_turn(turn)
        if not self.dry_run:
            writer.append(batch, fresh, target)

    def _buried(self, ws: Workspace, target: Path) -> bool:
        """Whether a person forgot this session's dialog in the workspace it is filed in (tombstones.py)."""
        marks = self._tombstones.get(ws.root)
        if marks is None:
            marks = self._tombstones[ws.root] = Tombstones(ws)
        return marks.buried(ws.relative(target))

    def _writer(self, batch: SessionBatch) -> DialogWriter:
        """The writer of the workspace this batch's session is filed in."""
        if self.route is None:
            return self.writer
        home = self._homes.get(batch.session_id)
        if batch.project or home is None:
            home = self.route(batch.project)
            self._homes[batch.session_id] = home
        writer = self._writers.get(home)
        if writer is None:
            writer = self._writers[home] = DialogWriter(Workspace(home), self.source.host, self.source.name)
        return writer

    def watch(
        self, stop: threading.Event, interval: float = 0.5, on_pass: Callable[[Tally], None] | None = None
    ) -> None:
        """Pass after pass until `stop` is set; a pass that fails is logged and retried."""
        while not stop.is_set():
            try:
                tally = self.run_once()
            except (ReMeError, OSError) as exc:
                log.warning("reme-mcp ingest %s: %s", self.source.name, exc)
                stop.wait(max(interval, 5.0))
                continue
            if on_pass is not None:
                on_pass(tally)
            stop.wait(interval)


def available(source: Source, location: Path) -> Tally:
    """Everything `source` holds at `location`, read past no cursor and written nowhere."""
    tally = Tally()
    book = CursorBook(Workspace(Path(os.devnull)), source.name, load=False)
    for batch, _pending in source.batches(location, source.units(location), book, tally):
        tally.bytes_read += batch.bytes_read
        if batch.turns:
            tally.sessions += 1
            for turn in batch.turns:
                tally.add_turn(turn)
    return tally


def imported_summary(ws: Workspace, source: Source) -> tuple[int, int]:
    """Sessions and messages already imported from `source` (dialog files and their lines)."""
    folder = ws.root / DIALOG_DIR / source.host
    sessions = messages = 0
    if folder.is_dir():
        for path in folder.glob("*.jsonl"):
            sessions += 1
            try:
                with path.open("rb") as fh:
                    messages += sum(1 for line in fh if line.strip())
            except OSError:
                continue
    return sessions, messages


def start_background(
    ws: Workspace,
    names: list[str],
    after: threading.Event | None = None,
    at_most: float = 3.0,
    route: Callable[[str], Path] | None = None,
) -> threading.Event:
    """Follow the named sources in a daemon thread, started once `after` is set (tools/list
    answered), or `at_most` seconds after the start when there is nothing to wait for."""
    stop = threading.Event()
    importers: list[Importer] = []
    for name in names:
        try:
            importers.append(Importer(ws, get_source(name), route=route))
        except KeyError as exc:
            print(f"reme-mcp: --ingest: {exc.args[0]}", file=sys.stderr)

    def run() -> None:
        (after or threading.Event()).wait(at_most)
        for importer in importers:
            trouble = importer.problem()
            if trouble:
                print(f"reme-mcp: ingest: {trouble}", file=sys.stderr)
        while not stop.is_set():
            for importer in importers:
                if importer.problem() is None:
                    try:
                        importer.run_once()
                    except Exception as exc:  # a bad log must never take the server down
                        log.warning("reme-mcp ingest %s: %s", importer.source.name, exc)
            stop.wait(1.0)

    if importers:
        threading.Thread(target=run, name="reme-ingest", daemon=True).start()
    return stop


def import_slice(
    job: tuple[str, str, str, list[str], dict[str, Any], Filters, bool],
) -> tuple[Tally, dict[str, Any], int]:
    """In a worker: import one slice past the cursors it was given; nothing of the book is saved here."""

    root, name, location, paths, cursors, filters, dry_run = job
    ws = Workspace(Path(root))
    importer = Importer(ws, get_source(name), Path(location), dry_run=dry_run, filters=filters)
    importer.book = CursorBook(ws, name, load=False)
    importer.book.entries = {key: value for key, value in cursors.items() if value is not None}
    importer.book.save = lambda location: None  # type: ignore[method-assign]
    tally = importer.run_units([Path(p) for p in paths])
    moved = {key: value for key, value in importer.book.entries.items() if cursors.get(key) != value}
    return tally, moved, len(paths)


if __name__ == "__main__":
    # A share worker of a long backfill (parallel_backfill.py), started as `python -m reme_mcp.ingest.runner`.
    from reme_mcp.storage import child_process

    child_process.serve_jobs(import_slice)
