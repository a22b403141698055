"""Which environment serves a plugin start while the semantic extra's is not built yet.

Search by meaning is on in the plugin unless REME_SEMANTIC is off, and bin/reme-mcp builds
its environment with the semantic extra (about 180 MB of packages) beside the plain one.
The front runs this when the extra's environment is not ready. A plugin's first start is
also its first session, and a user expects memory from its first request, never a session
without tools because a model could not be downloaded; so meaning comes from the next
session on:

- the plain environment is built first when it is not there yet (the first start after
  installing or updating the plugin): tool calls wait for that build only, as they would
  with the stage off;
- the plain environment serves this session, searching by words, while the extra is
  built beside it, on its own, for the next session; if it cannot be (no index reachable,
  no wheel for this platform), the reason goes to stderr in one line, and the next start
  tries again.

Standard library only, like the front that calls it.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Protocol

from reme_mcp.faces.stdio import plugin_build


class Front(Protocol):
    def hand_over(self, venv: Path, env: dict[str, str] | None = None) -> None: ...

    def fail(self, reason: str) -> None: ...


# The longest the session waits for the extra's build to be started (a lock and a spawn).
ASIDE_START_WAIT = 10.0


def lexical_env() -> dict[str, str]:
    """The plain environment has no extra: `auto` makes its server say so in `doctor`
    (semantic: off, not installed) and search by words; `on` would have it reach for a stage
    that is not there."""
    return {**os.environ, "REME_SEMANTIC": "auto"}


def serve(front: Front, root: Path, data: str, venv: Path, plain: Path, started: threading.Event) -> None:
    """Hand the connection to the plain environment (built first if need be) and build the
    extra's in `venv` beside it."""
    failure = plugin_build.build(root, data, plain, started)
    if failure is not None:
        front.fail(failure)
        return
    print(
        f"reme-mcp: search by meaning: building the semantic extra in {venv} in the background;"
        " this session searches by words, the next one by meaning",
        file=sys.stderr,
    )
    # The session may be short: its end must not come before the build runs on its own.
    aside_started = threading.Event()
    aside = threading.Thread(
        target=_build_aside, args=(root, data, venv, aside_started), name="reme-build-extra", daemon=True
    )
    aside.start()
    aside_started.wait(ASIDE_START_WAIT)
    front.hand_over(plain, lexical_env())


def _build_aside(root: Path, data: str, venv: Path, started: threading.Event) -> None:
    failure = plugin_build.build(root, data, venv, started, semantic=True, aside=True)
    if failure is not None:
        print(failure, file=sys.stderr)
