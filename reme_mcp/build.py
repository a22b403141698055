"""The full build: every workspace file into a fresh index, several times faster than a plain Whoosh writer.

A plain writer spends most of a build writing, not analysing: it pickles every
posting into external-sort runs and back, and reads each posting's field length
back from the new segment on disk. A `BulkWriter` keeps its postings in memory
(a compact array per term; only the term keys are sorted, once) and the lengths
it already knows, then fills Whoosh's own postings writer block by block. The
index is the one a plain writer makes of the same documents, in Whoosh's format.

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
import pickle
import queue
import shutil
import subprocess
import sys
import threading
import traceback
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index
from whoosh.analysis import RegexTokenizer
from whoosh.fields import UnknownFieldError
from whoosh.formats import Existence, Frequency
from whoosh.system import pack_uint
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

from reme_mcp.schema import FILE_RECORD, build_schema, file_documents
from reme_mcp.workspace import FileEntry, Workspace

__all__ = ["build_index"]

# Postings per segment (~25 bytes each in memory, terms included: a worker peaks
# near 160 MB); 100k chunks (~16M postings) end as 4 segments with 2 workers.
SEGMENT_POSTINGS = 5_000_000
# Below this much text (about a second of work), starting workers costs more than it saves.
MIN_PARALLEL_BYTES = 512 * 1024
# Two workers meet the target on 2 cores; each holds its own postings and writes its
# own segments, so more would multiply both.
MAX_PROCESSES = 2
# Values that repeat across a file's chunks (or the whole workspace) are analysed once.
MEMO_FIELDS = frozenset({"path", "kind", "date", "name", "description", "speaker", "when"})
MAX_MEMO = 20_000
_LENGTH_OF_BYTE = [0, *(byte_to_length(b) for b in range(1, 256))]
_VALUES = [pack_uint(freq) for freq in range(256)]


class BulkWriter(SegmentWriter):  # type: ignore[misc]
    """Writes one new segment of a fresh index with its postings kept in memory.

    Only what this schema uses (checked up front): Frequency and Existence
    postings, no vectors, columns, spelling or boosts. Each value becomes term
    counts exactly as the format's ``word_values`` gives them (our analyzers
    never set a token boost, so a weight is the frequency times the field boost).
    """

    def __init__(self, ix: Any) -> None:
        for name, field in ix.schema.items():
            fmt = field.format if field.indexed else None
            odd_format = fmt is not None and (type(fmt) not in (Frequency, Existence) or fmt.field_boost <= 0)
            if odd_format or field.vector or field.column_type or field.separate_spelling():
                raise ValueError(f"the bulk writer cannot write the field {name!r} ({field!r})")
        super().__init__(ix, _lk=False)  # a folder private to this build: no one to lock out
        self._indexed: dict[str, Any] = {name: field for name, field in self.schema.items() if field.indexed}
        self._postings: dict[str, dict[bytes, array[int]]] = {name: {} for name in self._indexed}
        self._lengths: dict[str, bytearray] = {n: bytearray() for n, f in self._indexed.items() if f.scorable}
        self._memo: dict[tuple[str, str], tuple[list[tuple[bytes, int]], int]] = {}
        self.posting_count = 0

    def _analysed(self, name: str, field: Any, value: Any) -> tuple[list[tuple[bytes, int]], int]:
        """A value's (term bytes, frequency) pairs and its length (its token count, if scorable)."""
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a string (field {name})")
        memo = name in MEMO_FIELDS
        if memo and (found := self._memo.get((name, value))) is not None:
            return found
        analyzer = field.analyzer
        if isinstance(field.format, Existence):
            analysed = [(tbytes, 1) for tbytes, _, _, _ in field.index(value)], 0
        else:
            if type(analyzer) is RegexTokenizer and not analyzer.gaps and not analyzer.expression.groups:
                # A bare regex tokenizer yields its pattern's matches (the context field: ~60% of all postings).
                counts = Counter(analyzer.expression.findall(value))
            else:
                counts = Counter(t.text for t in analyzer(value, mode="index", boosts=True) if not t.stopped)
            length = sum(counts.values()) if field.scorable else 0
            analysed = [(text.encode("utf-8"), freq) for text, freq in counts.items()], length
        if memo:
            if len(self._memo) >= MAX_MEMO:
                self._memo.clear()
            self._memo[name, value] = analysed
        return analysed

    def add_document(self, **fields: Any) -> None:
        self._check_state()
        docnum = self.docnum
        perdoc = self.perdocwriter
        schema = self.schema
        perdoc.start_doc(docnum)
        # In sorted order like the plain writer, so the stored fields come out the same.
        for name in sorted(fields):
            if name.startswith("_"):
                raise ValueError(f"the bulk writer takes no boosts or custom stored values ({name})")
            value = fields[name]
            if name not in schema:
                raise UnknownFieldError(f"No field named {name!r} in {schema}")
            if value is None:
                continue
            field = schema[name]
            length = 0
            if field.indexed:
                terms, length = self._analysed(name, field, value)
                table = self._postings[name]
                for tbytes, freq in terms:
                    postings = table.get(tbytes)
                    if postings is None:
                        postings = table[tbytes] = array("I")
                    postings.append(docnum)
                    postings.append(freq)
                self.posting_count += len(terms)
                if length:
                    lengths = self._lengths[name]
                    if len(lengths) < docnum:
                        lengths.extend(bytes(docnum - len(lengths)))
                    lengths.append(length_to_byte(length))
            perdoc.add_field(name, field, value if field.stored else None, length)
        perdoc.finish_doc()
        self._added = True
        self.docnum += 1

    def _flush_segment(self) -> None:
        """Postings to Whoosh's field writer in (field, term, document) order, with the lengths from memory."""
        self.perdocwriter.close()
        writer = self.fieldwriter
        for name in sorted(self._postings):
            table = self._postings[name]
            if not table:
                continue
            field = self._indexed[name]
            lengths = self._lengths.get(name)
            writer.start_field(name, field)
            for tbytes in sorted(table):
                writer.start_term(tbytes)
                _write_blocks(writer._postwriter, table[tbytes], field.format, lengths)
                writer.finish_term()
            writer.finish_field()
            self._postings[name] = {}  # free this field's postings before the next one
        writer.close()

    def finish(self) -> Any:
        """Write the segment (one compound file) and clean up; returns the segment."""
        segment = self._finalize_segment()
        self._finish()
        return segment


def _write_blocks(postwriter: Any, postings: array[int], fmt: Any, lengths: bytearray | None) -> None:
    """One term's postings (docnum, frequency, docnum, ...) into the term's open W3PostingsWriter.

    Fills the writer's block buffer as `add_posting` would, one posting at a time
    (ids, float32 weights, value bytes, min/max length, max weight), writes each
    full block but the last and leaves the last to `finish_term`: Whoosh writes a
    block only when a next posting comes, so a full last block is written there too.
    """
    step = 2 * postwriter._blocklimit
    boost = fmt.field_boost
    existence = isinstance(fmt, Existence)
    for start in range(0, len(postings), step):
        if start:
            postwriter._write_block()
        ids = postings[start : start + step : 2]
        freqs = postings[start + 1 : start + step : 2]
        postwriter._ids = ids
        postwriter._weights = array("f", [f * boost for f in freqs])
        postwriter._maxweight = max(freqs) * boost  # boost > 0 (checked): the largest weight
        if not existence:
            postwriter._values = [_VALUES[f] if f < 256 else pack_uint(f) for f in freqs]
        if lengths is not None:
            # add_posting skips a zero length; a document with a posting here always has one.
            block_lengths = [_LENGTH_OF_BYTE[lengths[doc]] for doc in ids]
            postwriter._minlength = min(block_lengths)
            postwriter._maxlength = max(block_lengths)


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
# A worker is `python -c "...; _worker_main()"`, not a multiprocessing child:
# multiprocessing's spawn re-runs the parent's main script in the child, which
# breaks any host program without an `if __name__ == "__main__"` guard. The
# job goes down the worker's stdin, which then stays open as its lifeline;
# progress and the result come back on its stdout, pickled. The worker imports
# this very package: its folder is put on the worker's path if not there already.

_WORKER_CODE = (
    "import sys; sys.argv[1] in sys.path or sys.path.insert(0, sys.argv[1]); "
    "from reme_mcp.build import _worker_main; _worker_main()"
)


def _worker_main() -> None:
    """A build worker: one share of the files into segments; it dies with its parent."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to stderr, never into the messages
    job = pickle.load(sys.stdin.buffer)
    threading.Thread(target=_exit_with_parent, daemon=True).start()

    def send(message: Any) -> None:
        pickle.dump(message, out)
        out.flush()

    try:
        root, paths, directory, share, segment_postings = job
        segments, chunks = _build_share(root, paths, directory, share, segment_postings, lambda: send(_FILE_DONE))
        send(("done", segments, chunks))
    except BaseException as exc:
        traceback.print_exc()  # the whole story goes to stderr, the server's log
        with contextlib.suppress(BaseException):
            send(("failed", traceback.format_exception_only(exc)[-1].strip()))
        os._exit(1)
    os._exit(0)  # everything is written; skip tearing down a heap of postings


def _exit_with_parent() -> None:
    """The parent never writes after the job: end of file on stdin means it is gone (even SIGKILLed)."""
    with contextlib.suppress(OSError):
        while os.read(0, 4096):  # the raw descriptor: never hold the buffered reader's lock
            pass
    os._exit(1)


_FILE_DONE = "file"


def _read_messages(share: int, worker: subprocess.Popen[bytes], events: queue.SimpleQueue[Any]) -> None:
    assert worker.stdout is not None
    try:
        with contextlib.suppress(EOFError, OSError, ValueError, pickle.UnpicklingError):
            while True:
                events.put((share, pickle.load(worker.stdout)))
    finally:
        events.put((share, None))  # the end of this worker's messages, however it came


def _build_in_workers(
    ws: Workspace, shares: list[list[str]], directory: Path, segment_postings: int, on_file: Callable[[], None]
) -> tuple[list[Any], int]:
    package_root = str(Path(__file__).resolve().parent.parent)
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    workers: list[subprocess.Popen[bytes]] = []
    readers: list[threading.Thread] = []
    by_share: dict[int, list[Any]] = {}
    chunks = 0
    try:
        for share, paths in enumerate(shares):
            worker = subprocess.Popen(
                [sys.executable, "-c", _WORKER_CODE, package_root], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            workers.append(worker)
            assert worker.stdin is not None
            pickle.dump((ws.root, paths, directory, share, segment_postings), worker.stdin)
            worker.stdin.flush()
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
        writer = ix.writer()
        writer.commit(mergetype=lambda _writer, current: [*current, *segments])
    finally:
        ix.close()
    return chunks
