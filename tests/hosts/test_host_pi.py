"""Pi 1.x end to end: its own MCP client starts reme-mcp as docs/clients.md says, a scripted
model on 127.0.0.1 calls `remember` in one print-mode session and `search` in a new one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.hosts.acceptance import assert_remembered_then_found, install_skill, reme_command, run_host
from tests.hosts.cache import node_bin, npm_bin, npm_packages
from tests.hosts.chat_completions import MODEL_ID, serve_chat_completions
from tests.hosts.script import RECALL_PROMPT, REMEMBER_PROMPT

PI = "1.6.0"

pytestmark = pytest.mark.node


def _pi(env: dict[str, str], cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    pi = npm_bin(npm_packages("pi", {"@earendil-works/pi-coding-agent": PI}), "pi")
    return run_host(pi, args, env, cwd, timeout)


def test_pi_remembers_in_one_session_and_finds_it_in_the_next(tmp_path: Path) -> None:
    home, project, workspace = tmp_path / "home", tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    env = {
        "HOME": str(home),
        "PATH": f"{node_bin(24)}{os.pathsep}{os.environ['PATH']}",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PI_OFFLINE": "1",
    }
    # The docs' route: the snippet `reme-mcp config pi` prints, given to `pi mcp add`.
    entry = json.loads(reme_command("pi", workspace))["mcpServers"]["reme"]
    added = _pi(
        env, project, "mcp", "add", "reme", "--exposure", entry["exposure"], "--", entry["command"], *entry["args"]
    )
    assert added.returncode == 0, added.stderr
    agent = home / ".pi" / "agent"
    assert json.loads((agent / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["reme"] == entry

    listed = _pi(env, project, "mcp", "list")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "reme: connected, 5 tools (direct, global)" in listed.stdout
    assert "tools: search, read, traverse, daily_list, remember" in listed.stdout

    assert install_skill("pi", home) == agent / "skills" / "reme-memory"

    with serve_chat_completions() as server:
        provider = {"baseUrl": server.url + "/v1", "api": "openai-completions", "apiKey": "none"}
        models = {"providers": {"fake": {**provider, "models": [{"id": MODEL_ID}]}}}
        (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
        for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
            done = _pi(env, project, "--print", "--model", f"fake/{MODEL_ID}", prompt)
            assert done.returncode == 0, done.stdout + done.stderr
        bodies = [json.loads(raw) for path, raw in server.raw if path.endswith("/chat/completions")]
        assert_remembered_then_found(server.script)

    # Pi lists the skill to the model in the system prompt of each session.
    system = json.dumps(bodies[0]["messages"][0], ensure_ascii=False)
    assert "<available_skills>" in system and "<name>reme-memory</name>" in system, system[:2000]
    sessions = sorted((agent / "sessions").glob("*/*.jsonl"))
    assert len(sessions) == 2, sessions
