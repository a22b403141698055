"""Batched work: what writes leave to be done later, done once the writes pause.

A `remember` is durable once its note file is written: the note is the truth,
and what is derived from it can follow. Two things do, batched here:

- The index commit. The paths a note wrote wait in the spool (index/writer.py). A
  Whoosh commit per note was most of a `remember`'s cost (a segment written, small
  segments merged, a new searcher opened). Nothing is lost if the process dies
  first: any process's next sync commits the spool it finds, and a search never
  waits for a batch (its sync commits whatever is spooled before it reads).
- The day index in a burst of notes on one day (daily.py): rewritten a few times a
  second, not once per note.

A batch runs after the writes pause (`idle` seconds), once the oldest waiting write
is `max_age` old, once MAX_WAITING writes wait, and when the server ends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from reme_mcp.errors import ReMeError, SaidOnce

log = logging.getLogger("reme_mcp.storage.batching")

# Seconds without a write after which the waiting writes are committed: an agent's
# burst of notes shares one commit, and the index is current when a person looks.
IDLE = 0.5
# The longest a write waits under a steady stream of writes (seconds), and how many may
# wait: a search commits whatever waits first, so these bound that first search's cost.
MAX_AGE = 10.0
MAX_WAITING = 500
# Seconds before a failed batch is tried again on its own (a full disk freed, a folder made
# writable): derived state is back in line within seconds of the cause going away. A new
# write tries at once: it may be the first sign that space is back.
RETRY = 1.0


class CommitBatcher:
    """Runs `commit` in a background thread once the writes `waiting` counts have waited long enough."""

    def __init__(
        self,
        commit: Callable[[], None],
        waiting: Callable[[], int],
        idle: float = IDLE,
        max_age: float = MAX_AGE,
        doing: str = "indexing",
        meanwhile: str = "notes stay searchable and are indexed later",
    ) -> None:
        self._commit = commit
        self._idle = idle
        self._max_age = max_age
        self._waiting = waiting
        self._changed = threading.Condition()
        self._first = 0.0  # monotonic time of the oldest waiting write
        self._last = 0.0  # ... and of the newest
        self._not_before = 0.0  # after a failed commit
        self._thread: threading.Thread | None = None
        self._doing, self._meanwhile = doing, meanwhile
        self._unwritable = SaidOnce(log, doing, meanwhile)

    def wrote(self) -> None:
        """A write's paths are in the spool: commit them in a while."""
        with self._changed:
            now = time.monotonic()
            if not self._first:
                self._first = now
            self._last = now
            self._not_before = 0.0
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"reme-batch ({self._doing})", daemon=True)
                self._thread.start()
            self._changed.notify()

    def flush(self) -> None:
        """Commit what waits now (the server is ending)."""
        if self._waiting():
            self._commit_logged()

    def _due_in(self) -> float:
        """Seconds until the waiting writes are due; 0 when they are."""
        now = time.monotonic()
        due = now if self._waiting() >= MAX_WAITING else min(self._last + self._idle, self._first + self._max_age)
        return max(0.0, max(due, self._not_before) - now)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._waiting():
                    self._first = 0.0  # a search's sync took them
                    self._changed.wait()
                wait = self._due_in()
                while wait > 0 and self._waiting():
                    self._changed.wait(wait)
                    wait = self._due_in()
                self._first = 0.0
                if not self._waiting():  # a flush or a search took them meanwhile: nothing to commit
                    continue
            self._commit_logged()

    def _commit_logged(self) -> None:
        try:
            self._commit()
        except OSError as exc:
            # The spool keeps the paths: the next search's sync, or the next batch, tries again.
            self._unwritable.failed(exc)
            self._not_before = time.monotonic() + RETRY
            return
        except ReMeError as exc:  # the workspace busy for long: one line, and the batch is tried again
            log.warning("reme-mcp: %s; %s", exc, self._meanwhile)
            self._not_before = time.monotonic() + RETRY
            return
        except Exception:
            log.exception("reme-mcp: batched %s failed; %s", self._doing, self._meanwhile)
            self._not_before = time.monotonic() + RETRY
            return
        self._unwritable.cleared()
