"""A long backfill shared out to worker processes, one slice of log files at a time.

Parsing, redacting and writing a message is pure Python, so one process uses one core;
a first import of a long history (thousands of session logs) goes faster on all of
them. Each log file belongs to exactly one dialog file, so two workers never write the
same file. The workers write dialogs and hand back their cursors and counts; only this
process keeps the cursor book, saving it as slices finish, so a killed run resumes from
the last save and the per-message ids skip whatever was written after it.
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from reme_mcp.ingest.cursors import SAVE_EVERY
from reme_mcp.ingest.model import Tally
from reme_mcp.storage import child_process

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


# The worker's module: runner.py answers jobs when run as `python -m`.
WORKER_MODULE = "reme_mcp.ingest.runner"
# Below this many log files, starting workers costs more than it saves.
WORTH_SHARING = 200
SLICE = 64


def _feed(worker: subprocess.Popen[bytes], todo: queue.SimpleQueue[Any], answers: queue.SimpleQueue[Any]) -> None:
    """Hand one worker jobs until none is left; a worker that dies answers with the error."""
    assert worker.stdin is not None and worker.stdout is not None
    while True:
        try:
            job = todo.get_nowait()
        except queue.Empty:
            return
        try:
            child_process.send(worker.stdin, job)
            answers.put(child_process.receive(worker.stdout))
        except (EOFError, OSError) as exc:
            answers.put(RuntimeError(f"an ingest worker died ({exc}); run the import again: it resumes"))
            return


def run_shared(
    importer: Sharing,
    units: list[Path],
    processes: int,
    progress: Callable[[int, int], None] | None,
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
    todo: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for job in jobs:
        todo.put(job)
    answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
    workers = [child_process.start(WORKER_MODULE) for _ in range(min(processes, len(slices)))]
    feeders = [threading.Thread(target=_feed, args=(w, todo, answers), daemon=True) for w in workers]
    try:
        for feeder in feeders:
            feeder.start()
        for _ in jobs:
            answer = answers.get()
            if isinstance(answer, BaseException):
                raise answer
            share, cursors, count = answer
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
    finally:
        for worker in workers:
            if worker.stdin is not None:
                with contextlib.suppress(OSError):
                    worker.stdin.close()  # the lifeline: the worker ends
            worker.wait()
            if worker.stdout is not None:
                worker.stdout.close()
    return tally
