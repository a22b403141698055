"""The server's periodic sync: between tool calls, backing off while the remote is away.

A sync waits until no tool call is being answered, so it never holds up an answer by starting
under it (a `remember` that arrives meanwhile waits at most for the merge, which is local). A
remote that cannot be reached is said once in the log, then tried again after twice the wait,
up to MAX_BACKOFF; notes written meanwhile are files like any other and go with the next sync.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from reme_mcp.errors import ReMeError
from reme_mcp.team.git import Unreachable

log = logging.getLogger("reme_mcp.team")

MAX_BACKOFF = 3600.0  # seconds
IDLE_POLL = 0.05  # seconds between looks at whether a tool call is being answered
STOP_WAIT = 30.0  # the longest the server's exit waits for a sync under way


class BackgroundSync:
    """Run `sync` every `every` seconds in a daemon thread, whenever `idle()` says no call is answered."""

    def __init__(self, sync: Callable[[], object], every: float, idle: Callable[[], bool]) -> None:
        self.sync = sync
        self.every = every
        self.idle = idle
        self._stop = threading.Event()
        self._said: str | None = None  # the failure last logged: said once, until it changes
        self._thread = threading.Thread(target=self._loop, name="reme-team-sync", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop after the sync under way, if any (a killed git would leave its lock behind)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(STOP_WAIT)

    def _loop(self) -> None:
        delay = self.every
        while not self._stop.wait(delay):
            while not self.idle():
                if self._stop.wait(IDLE_POLL):
                    return
            delay = self._once(delay)

    def _once(self, delay: float) -> float:
        """One sync; the wait before the next."""
        try:
            self.sync()
        except Unreachable as exc:
            self._say(f"reme-mcp: sync: {exc}; trying again later, with growing waits")
            return min(MAX_BACKOFF, max(delay, self.every) * 2)
        except ReMeError as exc:
            self._say(f"reme-mcp: sync stopped: {exc}")
            return self.every
        except Exception as exc:  # never take the server down; say what broke
            self._say(f"reme-mcp: sync failed: {exc.__class__.__name__}: {exc}")
            return self.every
        if self._said is not None:
            log.warning("reme-mcp: sync works again")
            self._said = None
        return self.every

    def _say(self, line: str) -> None:
        if line != self._said:
            log.warning("%s", line)
            self._said = line
