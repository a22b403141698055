"""The plugin's environment, built once per version of the plugin's code, one build at a time.

bin/reme-mcp knows how to build (uv, a staging folder renamed into place) and does it with
`--build-only`; this module runs that in a session of its own, so the build finishes even
when the host ends the launcher, and makes the starts of one plugin version share a build:
the first takes a lock and hands it to its build process, which holds it until it ends;
a start that finds the lock taken waits for that build instead of running a second one
beside it (two builds at once take twice the CPU a host's session is waiting on).
The plain environment and the one with the semantic extra are two folders with a lock
each, so one may build while the other serves.
Standard library only, like the front that calls it (storage.os_lock is too).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from reme_mcp.storage import os_lock

READY_MARK = ".reme-plugin-ready"


def is_ready(venv: Path) -> bool:
    return (venv / READY_MARK).is_file() and (venv / "bin" / "python").exists()


def build(
    root: Path, data: str, venv: Path, started: threading.Event, *, semantic: bool = False, aside: bool = False
) -> str | None:
    """Build the environment (`semantic`: the one with the semantic extra), or wait for the
    build another start runs: None once it is ready, else the one-line reason it is not (which
    says what to do). `started` is set once a build runs on its own (or none is needed), so
    this process may end without stopping it. `aside`: a session is served meanwhile, so the
    build runs at the lowest CPU priority, behind the session's server."""
    try:
        return _build(root, data, venv, started, semantic, aside)
    finally:
        started.set()


def _build(root: Path, data: str, venv: Path, started: threading.Event, semantic: bool, aside: bool) -> str | None:
    try:
        venv.parent.mkdir(parents=True, exist_ok=True)
        lock = (venv.parent / f".build-{venv.name}.lock").open("a")
    except OSError as exc:
        return f"reme-mcp: the plugin's data folder cannot hold its environment ({exc}); check {data}"
    with lock:
        if not os_lock.try_lock(lock.fileno()):
            started.set()  # another start's build runs, and goes on without this process
            print(f"reme-mcp: waiting for the build another start of this plugin runs in {venv}", file=sys.stderr)
            os_lock.lock(lock.fileno())
        if is_ready(venv):
            return None
        if semantic:
            print(f"reme-mcp: building the plugin's environment with the semantic extra in {venv}", file=sys.stderr)
        else:
            print(f"reme-mcp: first start of this plugin version: building its environment in {venv}", file=sys.stderr)
        # The lock goes with the build (its file description is shared), so it stays held
        # while the build runs, whether or not this process is still there. The launcher picks
        # the folder it builds by REME_SEMANTIC: said here, so it is the folder locked here.
        argv = [str(root / "bin" / "reme-mcp"), "--plugin-data", data, "--build-only"]
        nice = shutil.which("nice") if aside else None
        process = subprocess.Popen(
            [nice, "-n", "19", *argv] if nice else argv,
            env={**os.environ, "REME_SEMANTIC": "on" if semantic else "off"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(lock.fileno(),),
        )
        started.set()
        _, err = process.communicate()
    if is_ready(venv):
        return None
    lines = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else f"reme-mcp: building the plugin's environment in {venv} failed"
