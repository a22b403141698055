"""Child processes: a fresh interpreter running one of this package's modules, never a fork.

The server runs threads, and a forked copy of a lock held by another thread never opens;
multiprocessing's spawn re-runs the parent's main script, which breaks a host program
without an `if __name__ == "__main__"` guard. So every child (the index's committer and
build workers, ingest's share workers) is `python -m <module>` started here, with this
package importable even from a checkout that is not installed. Jobs and results travel
pickled over the child's stdin and stdout; stdin stays open as its lifeline, so a child
ends with its parent however the parent ended.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def start(module: str, *args: str, quiet: bool = False) -> subprocess.Popen[bytes]:
    """`python -m module args` with pipes to its stdin and stdout (its stderr is ours, or nothing if `quiet`)."""
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _PACKAGE_ROOT not in paths:
        env["PYTHONPATH"] = os.pathsep.join([*paths, _PACKAGE_ROOT])
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if quiet else None,
        env=env,
    )


def send(pipe: IO[bytes], message: Any) -> None:
    pickle.dump(message, pipe)
    pipe.flush()


def receive(pipe: IO[bytes]) -> Any:
    """The next message on a pipe; EOFError when the other side is gone."""
    try:
        return pickle.load(pipe)
    except (OSError, ValueError, pickle.UnpicklingError) as exc:
        raise EOFError(str(exc)) from exc


def claim_stdout() -> IO[bytes]:
    """In a child: a private copy of stdout for the messages; fd 1 then goes to stderr, so a stray
    print from any library can never corrupt them."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return out


def serve_jobs(work: Callable[[Any], Any]) -> None:
    """In a child: answer each job read from stdin with `work(job)`, until the parent closes stdin."""
    out = claim_stdout()
    while True:
        try:
            job = receive(sys.stdin.buffer)
        except EOFError:
            return
        send(out, work(job))


def exit_with_parent() -> None:
    """In a child that has read its one job: end of file on stdin means the parent is gone (even SIGKILLed)."""

    def watch() -> None:
        with contextlib.suppress(OSError):
            while os.read(0, 4096):  # the raw descriptor: never hold the buffered reader's lock
                pass
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
