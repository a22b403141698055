"""Hermes Agent end to end: `~/.hermes/config.yaml` holds what `reme-mcp config hermes` prints
(the server under mcp_servers and `mcp_discovery_timeout`), the model is a custom
OpenAI-compatible endpoint at a scripted model on 127.0.0.1, and two `hermes chat -q` runs,
each a new session, call `remember` and then `search`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import yaml

from tests.hosts.acceptance import assert_remembered_then_found, install_skill, reme_command, run_host
from tests.hosts.cache import python_venv
from tests.hosts.chat_completions import MODEL_ID, request_bodies, serve_chat_completions
from tests.hosts.script import RECALL_PROMPT, REME_TOOLS, REMEMBER_PROMPT

HERMES = "0.19.0"


def _hermes(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Without the mcp extra Hermes runs with MCP silently disabled.
    hermes = python_venv("hermes", [f"hermes-agent[mcp]=={HERMES}"]) / "bin" / "hermes"
    return run_host(hermes, args, env, cwd, 240)


def test_hermes_remembers_in_one_session_and_finds_it_in_the_next(tmp_path: Path) -> None:
    home, project, workspace = tmp_path / "home", tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    assert install_skill("hermes", home) == home / ".hermes" / "skills" / "reme-memory"

    with serve_chat_completions() as server:
        # The docs' route: the snippet of `reme-mcp config hermes`, plus the user's own model.
        config = yaml.safe_load(reme_command("hermes", workspace))
        assert config["mcp_discovery_timeout"] >= 5
        config["model"] = {"provider": "custom", "default": MODEL_ID, "base_url": server.url + "/v1", "api_key": "none"}
        (home / ".hermes" / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")

        # The host's own status commands: configured, then connected with the five tools.
        listed = _hermes(env, project, "mcp", "list")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert re.search(r"^\s*reme\s.*✓ enabled", listed.stdout, re.MULTILINE), listed.stdout
        tested = _hermes(env, project, "mcp", "test", "reme")
        assert tested.returncode == 0, tested.stdout + tested.stderr
        assert "✓ Connected" in tested.stdout and f"✓ Tools discovered: {len(REME_TOOLS)}" in tested.stdout
        for tool in REME_TOOLS:
            assert re.search(rf"^\s+{tool}\s", tested.stdout, re.MULTILINE), tested.stdout

        sessions = []
        for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
            done = _hermes(env, project, "chat", "--quiet", "--query", prompt)
            assert done.returncode == 0, done.stdout + done.stderr
            sessions += re.findall(r"session_id: (\S+)", done.stdout + done.stderr)
        assert len(set(sessions)) == 2, f"expected two sessions, got {sessions}"
        assert_remembered_then_found(server.script)
        bodies = request_bodies(server)

    first = bodies[0]
    offered = [tool["function"]["name"] for tool in first["tools"]]
    assert sorted(name for name in offered if "reme" in name) == sorted(f"mcp__reme__{t}" for t in REME_TOOLS)
    # Hermes lists the skills of ~/.hermes/skills to the model in the system prompt.
    system = json.dumps(first["messages"][0], ensure_ascii=False)
    assert "<available_skills>" in system and "reme-memory:" in system, system[:2000]
    assert list((workspace / "daily").glob("*/test-passphrase.md")), "the note is not in the configured workspace"
