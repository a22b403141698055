"""OpenClaw end to end, both routes of docs/clients.md: `~/.openclaw/openclaw.json` holding what
`reme-mcp config openclaw` prints (the server under mcp.servers, Tool Search off so the tools are
offered directly), and the plugin installed from this checkout (`openclaw plugins install`). A
custom OpenAI-compatible provider points at a scripted model on 127.0.0.1, and two `openclaw agent
exec` runs, each a new session, call `remember` and then `search`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.hosts.acceptance import (
    assert_remembered_then_found,
    copy_plugin,
    install_skill,
    no_environment_built,
    one_core_busy,
    reme_command,
    run_host,
)
from tests.hosts.cache import cache_root, node_bin, npm_bin, npm_packages, uv_bin
from tests.hosts.chat_completions import MODEL_ID, request_bodies, serve_chat_completions
from tests.hosts.script import RECALL_PROMPT, REME_TOOLS, REMEMBER_PROMPT

OPENCLAW = "2026.9.6"

pytestmark = pytest.mark.node


def _openclaw(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    openclaw = npm_bin(npm_packages("openclaw", {"openclaw": OPENCLAW}, node=24), "openclaw")
    return run_host(openclaw, args, env, cwd, 300)


def test_openclaw_remembers_in_one_session_and_finds_it_in_the_next(tmp_path: Path) -> None:
    home, project, workspace = tmp_path / "home", tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    # OpenClaw needs Node >= 24; the environment is the little a user's service would have.
    env = {"HOME": str(home), "PATH": f"{node_bin(24)}{os.pathsep}{os.environ['PATH']}"}
    assert install_skill("openclaw", home) == home / ".openclaw" / "skills" / "reme-memory"

    with serve_chat_completions() as server:
        # The docs' route: the snippet of `reme-mcp config openclaw`, plus the user's own provider.
        config = json.loads(reme_command("openclaw", workspace))
        model = {"id": MODEL_ID, "name": "scripted", "reasoning": False, "input": ["text"]}
        provider = {"baseUrl": server.url + "/v1", "apiKey": "local-fake", "api": "openai-completions"}
        config["models"] = {"mode": "merge", "providers": {"fake": {**provider, "models": [model]}}}
        config["agents"] = {"defaults": {"model": {"primary": f"fake/{MODEL_ID}"}}}
        (home / ".openclaw" / "openclaw.json").write_text(json.dumps(config), encoding="utf-8")

        # The host's own status command connects to the server and lists what it offers.
        probe = _openclaw(env, project, "mcp", "probe", "reme", "--json")
        assert probe.returncode == 0, probe.stdout + probe.stderr
        probed = json.loads(probe.stdout)
        assert probed["servers"]["reme"]["tools"] == len(REME_TOOLS), probed
        assert sorted(probed["tools"]) == sorted(f"reme__{tool}" for tool in REME_TOOLS), probed

        for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
            done = _openclaw(env, project, "agent", "exec", "--json", prompt)
            assert done.returncode == 0, done.stdout + done.stderr
            assert json.loads(done.stdout)["status"] == "ok", done.stdout
        assert_remembered_then_found(server.script)
        bodies = request_bodies(server)

    # Tool Search is off, so the five tools are offered themselves, not behind tool_search.
    first = bodies[0]
    offered = [tool["function"]["name"] for tool in first["tools"]]
    assert "tool_search" not in offered and "tool_call" not in offered, offered
    assert sorted(name for name in offered if name.startswith("reme")) == sorted(f"reme__{t}" for t in REME_TOOLS)
    # OpenClaw lists the skill to the model in the system prompt, from ~/.openclaw/skills.
    system = json.dumps(first["messages"][0], ensure_ascii=False)
    assert "<name>reme-memory</name>" in system and "~/.openclaw/skills/reme-memory/SKILL.md" in system
    assert list((workspace / "daily").glob("*/test-passphrase.md")), "the note is not in the configured workspace"


def test_openclaw_plugin_remembers_in_one_session_and_finds_it_in_the_next(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    plugin = copy_plugin(tmp_path / "reme-mcp")
    # The plugin's first start builds its environment with uv, so uv is on the user's PATH.
    path = os.pathsep.join([str(node_bin(24)), str(uv_bin()), os.environ["PATH"]])
    env = {"HOME": str(home), "PATH": path}
    # OpenClaw gives a server only HOME, PATH and a few more, so uv's settings live in the
    # user's uv.toml: the test cache's uv cache, and the system's certificates (this machine
    # reaches its package index through a CA that only the system store holds).
    (home / ".config" / "uv").mkdir(parents=True)
    uv_toml = f'cache-dir = "{cache_root() / "uv-cache"}"\nsystem-certs = true\n'
    (home / ".config" / "uv" / "uv.toml").write_text(uv_toml, encoding="utf-8")

    # The docs' route: install the checkout; OpenClaw reads it as an Agent Plugins bundle
    # (plugin.json + mcp.json), which is what expands ${PLUGIN_ROOT} and ${PLUGIN_DATA}.
    done = _openclaw(env, project, "plugins", "install", "--force", "--accept-capabilities", str(plugin))
    assert done.returncode == 0, done.stdout + done.stderr
    done = _openclaw(env, project, "plugins", "inspect", "reme-mcp")
    assert done.returncode == 0, done.stdout + done.stderr
    for line in ("Status: enabled", "Bundle format: agent (Agent Plugins)", "Bundle capabilities: skills, mcpServers"):
        assert line in done.stdout.splitlines(), done.stdout

    with serve_chat_completions() as server:
        # The user's own provider, and Tool Search off as for the configured route.
        config_path = home / ".openclaw" / "openclaw.json"
        config = json.loads(config_path.read_text(encoding="utf-8"))
        model = {"id": MODEL_ID, "name": "scripted", "reasoning": False, "input": ["text"]}
        provider = {"baseUrl": server.url + "/v1", "apiKey": "local-fake", "api": "openai-completions"}
        config["models"] = {"mode": "merge", "providers": {"fake": {**provider, "models": [model]}}}
        config["agents"] = {"defaults": {"model": {"primary": f"fake/{MODEL_ID}"}}}
        config["tools"] = {"toolSearch": False}
        config_path.write_text(json.dumps(config), encoding="utf-8")

        # No warm-up: the first session after installing is the plugin's first start, with
        # OpenClaw's defaults and one core busy. The launcher answers the handshake at once
        # while it builds, and serves `remember` once built.
        data = home / ".openclaw" / "plugin-data" / "reme-mcp"
        assert no_environment_built(data), "the plugin's environment was built before its first session"
        with one_core_busy():
            for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
                done = _openclaw(env, project, "agent", "exec", "--json", prompt)
                assert done.returncode == 0, done.stdout + done.stderr
                assert json.loads(done.stdout)["status"] == "ok", done.stdout
        assert_remembered_then_found(server.script)
        bodies = request_bodies(server)

    offered = [tool["function"]["name"] for tool in bodies[0]["tools"]]
    assert sorted(name for name in offered if name.startswith("reme")) == sorted(f"reme__{t}" for t in REME_TOOLS)
    # The plugin's skill reaches the model in the system prompt's skill list.
    assert "<name>reme-memory</name>" in json.dumps(bodies[0]["messages"][0], ensure_ascii=False)
    # The memory is the project's (the folder OpenClaw runs in, found from the host process: the
    # plugin's server starts in the plugin's folder), outside the plugin, in the user's ~/.reme.
    notes = list((home / ".reme" / "projects").glob("project-*/daily/*/test-passphrase.md"))
    assert notes, "no note in the project's memory"
    assert not (data / "workspace").exists(), "memory in the plugin's data folder"
    assert list((data / "venvs").glob("*/.reme-plugin-ready")), "the first start built no environment"
