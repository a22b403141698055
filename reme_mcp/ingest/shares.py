"""A long backfill shared out to worker processes, one slice of log files at a time.

Parsing, redacting and writing a message is pure Python, so one process uses one core;
a first import of a long history (thousands of session logs) goes faster on all of
them. Each log file belongs to exactly one dialog file, so two workers never write the
same file. The workers write dialogs and hand back their cursors and counts; only this
process keeps the cursor book, saving it as slices finish, so a killed run resumes from
the last save and the per-message ids skip whatever was written after it.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from reme_mcp.ingest.cursors import SAVE_EVERY
from reme_mcp.ingest.model import Tally

if TYPE_CHECKING:
    from reme_mcp.ingest.cursors import CursorBook
    from reme_mcp.ingest.model import Filters
    from reme_mcp.ingest.sources import Source
    from reme_mcp.storage.workspace import Workspace


class Sharing(Protocol):
    """What of an importer a shared pass reads (the importer itself lives in runner.py, which calls this)."""

    ws: Workspace
    source: Source
    location: Path
    book: CursorBook
    filters: Filters
    dry_run: bool


Worker = Callable[[tuple[str, str, str, list[str], dict[str, Any], "Filters", bool]], tuple[Tally, dict[str, Any], int]]

# Below this many log files, starting workers costs more than it saves.
WORTH_SHARING = 200
SLICE = 64


def run_shared(
    importer: Sharing,
    units: list[Path],
    processes: int,
    progress: Callable[[int, int], None] | None,
    worker: Worker,
) -> Tally:
    """Import `units` with `processes` workers; the importer's cursor book gets every cursor they moved."""
    slices = [units[at : at + SLICE] for at in range(0, len(units), SLICE)]
    jobs = [
        (
            str(importer.ws.root),
            importer.source.name,
            str(importer.location),
            [str(p) for p in part],
            {str(p): importer.book.get(str(p)) for p in part},
            importer.filters,
            importer.dry_run,
        )
        for part in slices
    ]
    tally, done = Tally(), 0
    saved = time.monotonic()
    # spawn, not fork: the server runs threads, and a forked copy of a lock held elsewhere never opens.
    with multiprocessing.get_context("spawn").Pool(min(processes, len(slices))) as pool:
        for share, cursors, count in pool.imap_unordered(worker, jobs):
            tally.merge(share)
            if not importer.dry_run:
                for key, value in cursors.items():
                    importer.book.set(key, value)
            done += count
            if progress:
                progress(done, len(units))
            if importer.book.dirty and time.monotonic() - saved > SAVE_EVERY:
                importer.book.save(importer.location)
                saved = time.monotonic()
    return tally
