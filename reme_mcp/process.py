"""The process's signal dispositions and thread settings, set in one place by whoever owns the
process (a command).

A library call never changes them: `Memory` works without any of this, and only a
command (the server, ingest) decides how its process ends, what it ignores and how many
threads its libraries start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType


def ignore_lease_breaks() -> None:
    """Ignore SIGIO, so this process can replace the day index under a file lease (storage/swap.py):
    someone opening the file meanwhile breaks the lease with SIGIO, whose default action ends the process."""
    if hasattr(signal, "SIGIO") and signal.getsignal(signal.SIGIO) == signal.SIG_DFL:
        signal.signal(signal.SIGIO, signal.SIG_IGN)


# numpy's BLAS and an OpenMP runtime read their thread counts once, when they load (in a
# command's process: when search by meaning starts). One thread each: a BLAS worker left
# spinning after the search's product over the vectors took the core on which a question's
# second embedding runs (40 ms a search instead of 22).
LIBRARY_THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def one_thread_libraries() -> None:
    """LIBRARY_THREADS, where the environment does not set them already. Call it first thing, before
    any thread starts: glibc's setenv may free the environment under another thread's getenv
    (a name lookup, a time zone), which then crashes the process."""
    for variable, value in LIBRARY_THREADS.items():
        os.environ.setdefault(variable, value)


# The longest a signalled process spends finishing what waits for a batch before it exits.
FINISH_TIMEOUT = 3.0


def end_on_signals(finish: Callable[[], None]) -> None:
    """SIGINT and SIGTERM end the process soon: `finish` runs first, in a thread and for at most
    FINISH_TIMEOUT seconds (a call holding the workspace's lock must not keep the process alive);
    every write is atomic, and what `finish` could not write is caught up by the next start."""

    def end(signum: int, _frame: FrameType | None) -> None:
        finishing = threading.Thread(target=_quietly, args=(finish,), daemon=True)
        finishing.start()
        finishing.join(FINISH_TIMEOUT)
        sys.stderr.flush()
        os._exit(128 + signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, end)


def on_end_signals(handler: Callable[[int, FrameType | None], None]) -> None:
    """SIGINT and SIGTERM call `handler` (a front that must tell its client before it ends)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handler)


@contextlib.contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """Within: SIGTERM raises SystemExit, so the `finally` blocks around a server run. uvicorn stops
    gracefully on SIGTERM, then raises the signal again with the handler it found: with the default
    one the process would end there, before the batched day indexes and index commits are written."""
    previous = signal.signal(signal.SIGTERM, _raise_exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_exit(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def stop_on_signals(stop: threading.Event) -> None:
    """SIGINT and SIGTERM set `stop`, for a loop that finishes its pass and saves where it got to."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())


def _quietly(finish: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        finish()
