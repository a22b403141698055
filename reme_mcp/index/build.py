"""The full build: every workspace file into a fresh index, several times faster than a plain Whoosh writer.

Each segment is written by a `BulkWriter` (bulk_writer.py), which keeps its
postings in memory instead of pickling every one through external-sort runs.
A segment is flushed every `segment_postings` postings, which bounds memory.
With more than one core the files are shared out to worker processes (fresh
interpreters, never forks: the server is multi-threaded), each writing its own
segments from a run of the walk, and one commit lists them all in walk order,
so even the document numbers are a plain build's. A worker dies with its parent;
a failed build stops them all.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index

from reme_mcp.index.bulk_writer import BulkWriter
from reme_mcp.index.schema import FILE_RECORD, build_schema, file_documents
from reme_mcp.index.whoosh_private import unlocked_writer
from reme_mcp.storage import child_process
from reme_mcp.storage.workspace import FileEntry, Workspace

__all__ = ["build_index"]

# Postings per segment (~25 bytes each in memory, terms included: a worker peaks
# near 160 MB); 100k chunks (~16M postings) end as 4 segments with 2 workers.
SEGMENT_POSTINGS = 5_000_000
# Below this much text (about a second of work), starting workers costs more than it saves.
MIN_PARALLEL_BYTES = 512 * 1024
# Two workers meet the target on 2 cores; each holds its own postings and writes its
# own segments, so more would multiply both.
MAX_PROCESSES = 2
# ---- building shares of the files -------------------------------------------------------------


def _build_share(
    root: Path,
    paths: Sequence[str],
    directory: Path,
    share: int,
    segment_postings: int,
    on_file: Callable[[], None],
) -> tuple[list[Any], int]:
    """Index `paths` into segments whose files end up in `directory`; returns (segments, chunks).

    The segments are written in a private sub-folder (Whoosh's temporary files
    have fixed names, so two writers must not share a folder) and each finished
    compound file is moved into `directory`.
    """
    ws = Workspace(root)
    folder = directory / f".share-{share}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    ix = whoosh_index.create_in(str(folder), build_schema())
    segments: list[Any] = []
    chunks = 0

    def flush(writer: BulkWriter) -> None:
        segment = writer.finish()
        name = segment.make_filename(segment.COMPOUND_EXT)
        os.replace(folder / name, directory / name)
        segments.append(segment)

    writer = BulkWriter(ix)
    try:
        for path in paths:
            for doc in file_documents(ws, path):
                writer.add_document(**doc)
                chunks += doc["kind"] != FILE_RECORD
            on_file()
            if writer.posting_count >= segment_postings:
                flush(writer)
                writer = BulkWriter(ix)
        if writer.doc_count():
            flush(writer)
        else:
            writer.cancel()
    except BaseException:
        if not writer.is_closed:
            with contextlib.suppress(Exception):  # never hide why the build failed
                writer.cancel()
        raise
    finally:
        ix.close()
        shutil.rmtree(folder, ignore_errors=True)
    return segments, chunks


def _split(entries: Sequence[FileEntry], parts: int) -> list[list[str]]:
    """Runs of the walk of about equal bytes (what a file costs to index, measured), in walk order.

    Segments listed in share order then keep the walk's document order: every
    document gets the number a plain build gives it, so even ties rank the same.
    """
    total = sum(e.size for e in entries) or 1
    shares: list[list[str]] = [[] for _ in range(parts)]
    done = 0
    for entry in entries:
        shares[min(parts - 1, (done + entry.size // 2) * parts // total)].append(entry.path)
        done += entry.size
    return [s for s in shares if s]


def _processes(entries: Sequence[FileEntry]) -> int:
    if sum(e.size for e in entries) < MIN_PARALLEL_BYTES or not sys.executable:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_PROCESSES, cpus))


# ---- worker processes ---------------------------------------------------------------------------
#
# A worker is `python -m reme_mcp.index.build_worker` (storage/child_process.py). The job goes down its
# stdin, which then stays open as its lifeline; progress and the result come back on its stdout.


def worker_main() -> None:
    """A build worker: one share of the files into segments; it dies with its parent."""
    job = child_process.receive(sys.stdin.buffer)
    out = child_process.claim_stdout()
    child_process.exit_with_parent()
    try:
        root, paths, directory, share, segment_postings = job
        segments, chunks = _build_share(
            root, paths, directory, share, segment_postings, lambda: child_process.send(out, _FILE_DONE)
        )
        child_process.send(out, ("done", segments, chunks))
    except BaseException as exc:
        traceback.print_exc()  # the whole story goes to stderr, the server's log
        with contextlib.suppress(BaseException):
            child_process.send(out, ("failed", traceback.format_exception_only(exc)[-1].strip()))
        os._exit(1)
    os._exit(0)  # everything is written; skip tearing down a heap of postings


_FILE_DONE = "file"


def _read_messages(share: int, worker: subprocess.Popen[bytes], events: queue.SimpleQueue[Any]) -> None:
    assert worker.stdout is not None
    try:
        with contextlib.suppress(EOFError):
            while True:
                events.put((share, child_process.receive(worker.stdout)))
    finally:
        events.put((share, None))  # the end of this worker's messages, however it came


def _build_in_workers(
    ws: Workspace, shares: list[list[str]], directory: Path, segment_postings: int, on_file: Callable[[], None]
) -> tuple[list[Any], int]:
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    workers: list[subprocess.Popen[bytes]] = []
    readers: list[threading.Thread] = []
    by_share: dict[int, list[Any]] = {}
    chunks = 0
    try:
        for share, paths in enumerate(shares):
            worker = child_process.start("reme_mcp.index.build_worker")
            workers.append(worker)
            assert worker.stdin is not None
            child_process.send(worker.stdin, (ws.root, paths, directory, share, segment_postings))
            reader = threading.Thread(target=_read_messages, args=(share, worker, events), daemon=True)
            reader.start()
            readers.append(reader)
        pending = set(range(len(workers)))
        while pending:
            share, message = events.get()
            if message == _FILE_DONE:
                on_file()
            elif message is None:
                if share in pending:
                    raise RuntimeError(f"an index build worker died (exit code {workers[share].wait()})")
            elif message[0] == "done":
                by_share[share], chunks = message[1], chunks + message[2]
                pending.discard(share)
            else:
                raise RuntimeError(f"an index build worker failed: {message[1]}")
    finally:
        for worker in workers:
            if len(by_share) < len(workers):
                worker.kill()  # a failed build: stop the others now
            if worker.stdin is not None:
                with contextlib.suppress(OSError):
                    worker.stdin.close()  # the lifeline: a worker still running exits
            worker.wait()
        for reader in readers:
            reader.join()  # the worker is gone, so its stdout is at its end
        for worker in workers:
            if worker.stdout is not None:
                worker.stdout.close()
        for share in range(len(shares)):
            shutil.rmtree(directory / f".share-{share}", ignore_errors=True)
    return [segment for share in sorted(by_share) for segment in by_share[share]], chunks


# ---- the entry point ----------------------------------------------------------------------------


def build_index(
    ws: Workspace,
    directory: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    processes: int | None = None,
    segment_postings: int = SEGMENT_POSTINGS,
) -> int:
    """Create a fresh index of every workspace file in `directory` (an existing empty folder); returns the chunk count
    (documents whose kind != FILE_RECORD). progress(done_files, total_files) after each file.

    `processes` defaults to the CPUs available (at most MAX_PROCESSES), or 1 for a
    small workspace. Killed at any moment, it leaves no process behind, only a
    half-built `directory` (an empty index until the last step lists the segments).
    """
    entries = list(ws.walk())
    total = len(entries)
    done = 0

    def on_file() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    ix = whoosh_index.create_in(str(directory), build_schema())
    try:
        shares = _split(entries, processes or _processes(entries))
        if len(shares) > 1:
            segments, chunks = _build_in_workers(ws, shares, directory, segment_postings, on_file)
        else:
            paths = shares[0] if shares else []
            segments, chunks = _build_share(ws.root, paths, directory, 0, segment_postings, on_file)
        # One commit lists every segment (through Whoosh's documented custom merge hook).
        writer = unlocked_writer(ix)  # a folder private to this build: no one to lock out
        writer.commit(mergetype=lambda _writer, current: [*current, *segments])
    finally:
        ix.close()
    return chunks
