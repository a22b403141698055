"""reme-mcp runs where its hosts run: a process that cannot import the POSIX-only modules (as on
Windows) still remembers, searches, forgets and syncs.

Nothing here can run Windows, so the child processes get a sitecustomize whose import finder
refuses `fcntl`, `termios`, `resource` and `inotify_simple`: the real `reme-mcp` script, the
real MCP client, real git and a bare remote on disk, with those modules gone. One importer is
let through: the MCP SDK, whose POSIX imports sit under `if sys.platform != "win32"` (so on
Windows it never asks), and which this Linux process still runs on its POSIX branch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

BLOCKED = ("fcntl", "termios", "resource", "inotify_simple")
PASSPHRASE = "请记住，这个项目的测试口令是蓝鲸-731。"
# Imported by every Python started with this folder on PYTHONPATH, before anything else.
SITECUSTOMIZE = f"""
import os
import sys

_BLOCKED = {BLOCKED!r}
_SDK = os.sep + "mcp" + os.sep


def _importer():
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else ""


class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED and _SDK not in _importer():
            raise ModuleNotFoundError(f"No module named {{name!r}} (taken away by the test)", name=name)
        return None


for _name in _BLOCKED:
    sys.modules.pop(_name, None)
sys.meta_path.insert(0, _Absent())
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Tester\n\temail = tester@example.invalid\n", encoding="utf-8")
    return {
        **os.environ,
        "PYTHONPATH": str(blocker),
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "home" / ".cache"),
        "REME_TIMEZONE": "Asia/Shanghai",
        "GIT_CONFIG_GLOBAL": str(config),
        "GIT_CONFIG_NOSYSTEM": "1",
    }


def _script() -> str:
    script = Path(sys.executable).with_name("reme-mcp")
    assert script.is_file(), f"the reme-mcp entry point is not installed beside {sys.executable}"
    return str(script)


def _reme(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([_script(), *args], env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, f"reme-mcp {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def _remote_files(remote: Path) -> list[str]:
    return _git("-C", str(remote), "ls-tree", "-r", "-z", "--name-only", "main").split("\0")


def _structured(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def test_the_blocker_takes_the_modules_away(env: dict[str, str]) -> None:
    for name in BLOCKED:
        done = subprocess.run([sys.executable, "-c", f"import {name}"], env=env, capture_output=True, text=True)
        assert done.returncode != 0 and "taken away by the test" in done.stderr, (name, done.stderr)


async def test_remember_search_forget_and_sync_without_posix_modules(tmp_path: Path, env: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", "-b", "main", str(remote))

    params = StdioServerParameters(command=_script(), args=["--workspace", str(ws)], env=env)
    async with Client(params, read_timeout_seconds=120) as client:
        stored = _structured(await client.call_tool("remember", {"content": PASSPHRASE}))
        path = stored["path"]
        found = _structured(await client.call_tool("search", {"query": "蓝鲸-731"}))
        assert path in [hit["path"] for hit in found["results"]]

    # A new process finds it, and sync pushes it to the bare remote.
    assert "蓝鲸-731" in _reme(env, "search", "蓝鲸-731", "-w", str(ws))
    _reme(env, "sync", "-w", str(ws), "--init", str(remote))
    assert path in _remote_files(remote)

    # Forgotten: gone from search, and the next sync takes it off the remote's tip.
    _reme(env, "forget", path, "-w", str(ws), "--yes")
    assert not (ws / path).exists()
    assert "No memory matched" in _reme(env, "search", "蓝鲸-731", "-w", str(ws))
    _reme(env, "sync", "-w", str(ws))
    assert path not in _remote_files(remote)
