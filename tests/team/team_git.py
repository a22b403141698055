"""Helpers for the team-sync tests: real git, a bare remote on local disk, real reme-mcp processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.processes import stop

DAY = "2026-11-28"
MARKERS = ("<<<<<<<", ">>>>>>>", "\n=======\n")


def isolate_git(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's git, and the processes it starts, read no configuration of the machine's."""
    config = tmp / "gitconfig"
    config.write_text("[user]\n\tname = Tester\n\temail = tester@example.invalid\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


def bare_remote(tmp: Path, name: str = "remote.git") -> Path:
    remote = tmp / name
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    return remote


def reme(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The reme-mcp command line, as a person runs it."""
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def sync(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return reme("sync", "-w", str(ws), *args)


def synced(ws: Path, *args: str) -> str:
    done = sync(ws, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(ws: Path, *args: str, stderr: Path | None = None) -> Iterator[str]:
    """A real `reme-mcp serve` over HTTP on this workspace; yields its URL."""
    port = free_port()
    log = open(stderr or os.devnull, "w")  # noqa: SIM115 - closed below, after the process
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_MCP_TOKEN")}
    env["REME_TIMEZONE"] = "Asia/Shanghai"
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "serve", "-w", str(ws), "--transport", "http", "--port", str(port), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, "the server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc, timeout=30)
        log.close()


def files(ws: Path) -> dict[str, bytes]:
    """Every file of a work tree except git's own and reme-mcp's derived state."""
    out = {}
    for path in ws.rglob("*"):
        rel = path.relative_to(ws).as_posix()
        if rel.startswith((".git/", "metadata/")) or not path.is_file():
            continue
        out[rel] = path.read_bytes()
    return out


def note_bodies(ws: Path) -> list[str]:
    """The body of every daily note, as stored."""
    bodies = []
    for path in sorted((ws / "daily").glob("*/*.md")):
        text = path.read_text(encoding="utf-8")
        bodies.append(text.split("\n---\n", 1)[1].strip())
    return bodies
