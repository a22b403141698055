"""Starting the HTTP server and the memory page: bound before "serving" is said, and a taken port or
an open address without a token is one line that says what to do; through the real command."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.projects.repos import repository, user_env

pytestmark = pytest.mark.integration


def taken_port() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock


def run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {k: v for k, v in user_env(tmp_path / "home").items() if not k.startswith("REME_MCP_TOKEN")}


def test_a_taken_port_is_one_line_naming_it_and_nothing_says_serving(tmp_path: Path, env: dict[str, str]) -> None:
    with taken_port() as busy:
        port = busy.getsockname()[1]
        done = run(tmp_path, env, "serve", "--transport", "http", "--port", str(port), "-w", str(tmp_path / "ws"))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"port {port}" in lines[0] and "--port" in lines[0]
    assert "serving" not in done.stderr and "Errno" not in done.stderr


def test_an_open_address_without_a_token_is_refused_before_serving(tmp_path: Path, env: dict[str, str]) -> None:
    done = run(tmp_path, env, "serve", "--transport", "http", "--host", "0.0.0.0", "-w", str(tmp_path / "ws"))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bearer token" in lines[0], done.stderr
    assert "serving" not in done.stderr


def test_serving_is_said_once_the_port_answers(tmp_path: Path, env: dict[str, str]) -> None:
    with taken_port() as probe:
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "serve", "--transport", "http", "--port", str(port), "-w", str(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert f"serving {tmp_path} at http://127.0.0.1:{port}/mcp" in line
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # at once: no retry needed
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_the_page_names_the_memory_it_opens_and_its_port(tmp_path: Path, env: dict[str, str]) -> None:
    project = repository(tmp_path / "shop")
    with taken_port() as busy:
        port = busy.getsockname()[1]
        clash = run(project, env, "view", "--no-open", "--port", str(port))
    assert clash.returncode != 0
    assert len(clash.stderr.strip().splitlines()) == 1 and f"port {port}" in clash.stderr and "--port" in clash.stderr
    assert "workspace" not in clash.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "view", "--no-open", "--port", "0"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        said = proc.stderr.readline()
        assert "the memory page of " in said
        shown = said.split("the memory page of ", 1)[1].split(" (and", 1)[0].split(" is at", 1)[0]
        assert "personal" not in Path(shown).name
        assert Path(shown).is_relative_to(tmp_path / "home") and "shop" in Path(shown).name
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
