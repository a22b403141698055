"""The process's signal dispositions, set in one place by whoever owns the process (a command).

A library call never changes them: `Memory` works without any of this, and only a
command (the server, ingest) decides how its process ends and what it ignores.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType


def ignore_lease_breaks() -> None:
    """Ignore SIGIO, so this process can replace the day index under a file lease (storage/swap.py):
    someone opening the file meanwhile breaks the lease with SIGIO, whose default action ends the process."""
    if hasattr(signal, "SIGIO") and signal.getsignal(signal.SIGIO) == signal.SIG_DFL:
        signal.signal(signal.SIGIO, signal.SIG_IGN)


def end_at_once_on_signals() -> None:
    """SIGINT and SIGTERM end the process at once: every write is atomic, so there is nothing to tidy up."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _end_at_once)


def stop_on_signals(stop: threading.Event) -> None:
    """SIGINT and SIGTERM set `stop`, for a loop that finishes its pass and saves where it got to."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())


def _end_at_once(signum: int, _frame: FrameType | None) -> None:
    sys.stderr.flush()
    os._exit(128 + signum)
