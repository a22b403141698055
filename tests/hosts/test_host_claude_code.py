"""Claude Code end to end, both routes of docs/clients.md: the configured server
(`claude mcp add` with what `reme-mcp config claude-code` prints) and the plugin installed
from this checkout (`claude plugin marketplace add` + `claude plugin install`), whose
manifest is its entry in .claude-plugin/marketplace.json. Each runs
`claude mcp list`, then two headless `claude -p` sessions against a scripted Anthropic
Messages model on 127.0.0.1: `remember` in the first, `search` in a new one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.hosts.acceptance import (
    ROOT,
    assert_remembered_then_found,
    copy_plugin,
    no_environment_built,
    one_core_busy,
    reme_command,
    run_host,
)
from tests.hosts.anthropic import AUX_MODEL, MODEL_ID, request_bodies, serve_anthropic
from tests.hosts.cache import cache_root, npm_bin, npm_packages, uv_bin
from tests.hosts.projects import check_project_memory, make_repos
from tests.hosts.script import RECALL_PROMPT, REMEMBER_PROMPT

CLAUDE_CODE = "2.1.332"

pytestmark = pytest.mark.node


def _env(home: Path, base_url: str) -> dict[str, str]:
    """A throw-away user of Claude Code, with the settings docs/clients.md gives for `claude -p`."""
    (home / ".claude").mkdir(parents=True)
    # The rest of the user's environment stays (uv finds its Python through it), minus any
    # Claude Code or reme settings of the person running the tests.
    kept = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE", "ANTHROPIC", "REME_"))}
    return {
        **kept,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        # The plugin launches `uvx`; the real uv from PyPI, never a stand-in.
        "PATH": f"{uv_bin()}{os.pathsep}{os.environ['PATH']}",
        # A user's uv cache outlives one session; sharing one across test runs spares the
        # plugin's first start downloading its dependencies again each time.
        "UV_CACHE_DIR": str(cache_root() / "uv-cache"),
        # Every command, not only the sessions: without it each one waits on api.anthropic.com.
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
        "ANTHROPIC_SMALL_FAST_MODEL": AUX_MODEL,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": AUX_MODEL,
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # Without these two `claude -p` sends its first request before MCP servers connect,
        # and hides their tools behind a tool-search tool.
        "MCP_CONNECTION_NONBLOCKING": "false",
        "ENABLE_TOOL_SEARCH": "false",
    }


def _claude(env: dict[str, str], cwd: Path, *args: str, timeout: float = 180) -> str:
    claude = npm_bin(npm_packages("claude-code", {"@anthropic-ai/claude-code": CLAUDE_CODE}), "claude")
    done = run_host(claude, args, env, cwd, timeout)
    assert done.returncode == 0, f"claude {' '.join(args[:3])} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _two_sessions(env: dict[str, str], cwd: Path, allowed: str) -> None:
    for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
        # `--allowedTools` takes several values, so the prompt goes after `--`.
        _claude(env, cwd, "-p", "--model", MODEL_ID, "--allowedTools", allowed, "--", prompt)


def _reme_lines(listing: str) -> list[str]:
    return [line for line in listing.splitlines() if "reme" in line and ": " in line]


def test_claude_code_configured_server_remembers_then_finds(tmp_path: Path) -> None:
    project, workspace = tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    # The docs' route: `claude mcp add --scope user reme -- COMMAND ARGS...` with the command
    # and arguments `reme-mcp config claude-code` prints.
    entry = json.loads(reme_command("claude-code", workspace))["mcpServers"]["reme"]
    with serve_anthropic() as server:
        env = _env(tmp_path / "home", server.url)
        _claude(env, project, "mcp", "add", "--scope", "user", "reme", "--", entry["command"], *entry["args"])
        listed = _reme_lines(_claude(env, project, "mcp", "list"))
        command = " ".join([entry["command"], *entry["args"]])
        assert listed == [f"reme: {command} - ✔ Connected"], listed

        _two_sessions(env, project, "mcp__reme")
        assert_remembered_then_found(server.script)
        assert list(workspace.glob("daily/*/test-passphrase.md")), "remember wrote no daily note"


def test_claude_code_plugin_remembers_then_finds(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    plugin = copy_plugin(tmp_path / "reme-mcp")
    # Claude Code's data folder for plugin reme-mcp of marketplace reme-mcp.
    data = tmp_path / "home" / ".claude" / "plugins" / "data" / "reme-mcp-reme-mcp"
    with serve_anthropic() as server:
        env = _env(tmp_path / "home", server.url)
        _claude(env, project, "plugin", "marketplace", "add", str(plugin))
        _claude(env, project, "plugin", "install", "reme-mcp@reme-mcp")
        # No warm-up: the first session after installing is the plugin's first start, with
        # Claude Code's defaults (`claude -p` waits MCP_CONNECT_TIMEOUT_MS = 5 s for servers) and
        # one core busy. The launcher answers the handshake at once while it builds, and serves
        # `remember` once built.
        # REME_INGEST in Claude Code's environment is the plugin's setting for following Claude
        # Code's own session logs: session 1, as Claude Code logged it, lands in the workspace.
        assert no_environment_built(data), "the plugin's environment was built before its first session"
        with one_core_busy():
            _two_sessions({**env, "REME_INGEST": "claude-code"}, project, "mcp__plugin_reme-mcp_reme")
        assert_remembered_then_found(server.script)
        assert list((data / "venvs").glob("*/.reme-plugin-ready")), "the first start built no environment"

        # The docs' check after installing: exactly one server, the plugin's launcher, in the
        # folder the plugin was installed from.
        listed = _reme_lines(_claude(env, project, "mcp", "list"))
        assert listed == [f"plugin:reme-mcp:reme: {plugin}/bin/reme-mcp --plugin-data {data} - ✔ Connected"], listed
        details = _claude(env, project, "plugin", "details", "reme-mcp@reme-mcp")
        assert "Skills (1)  reme-memory" in details and "MCP servers (1)  reme" in details, details
        bodies = [body for body in request_bodies(server) if body.get("model") == MODEL_ID]

    # The plugin's skill is listed to the model, under the plugin's name, in each session.
    first = json.dumps(bodies[0].get("messages"), ensure_ascii=False) + json.dumps(bodies[0].get("system"))
    assert "reme-mcp:reme-memory" in first, first[:3000]
    # The plugin names no workspace: the memory is the session's project's, under the user's
    # ~/.reme (the folder `project` is in no repository, so it is a project by its path).
    workspaces = list((tmp_path / "home" / ".reme" / "projects").glob("project-*"))
    assert len(workspaces) == 1, workspaces
    assert list(workspaces[0].glob("daily/*/test-passphrase.md")), "no note in the project's workspace"
    assert not (data / "workspace").exists(), "the plugin kept memory in its data folder"
    imported = "".join(p.read_text(encoding="utf-8") for p in workspaces[0].glob("session/dialog/claude_code/*.jsonl"))
    assert REMEMBER_PROMPT in imported, "the plugin's server did not follow Claude Code's session log"


def test_claude_code_plugin_keeps_memory_per_project(tmp_path: Path) -> None:
    """One install of the plugin, sessions in two repositories, a subfolder, a second clone and
    the home folder (tests/hosts/projects.py): Claude Code gives the server its roots and
    CLAUDE_PROJECT_DIR, the launch folder, from which reme-mcp finds the repository."""
    home = tmp_path / "home"
    repos = make_repos(tmp_path)
    plugin = copy_plugin(tmp_path / "reme-mcp")
    with serve_anthropic() as server:
        env = _env(home, server.url)
        _claude(env, tmp_path, "plugin", "marketplace", "add", str(plugin))
        _claude(env, tmp_path, "plugin", "install", "reme-mcp@reme-mcp")

        def session(folder: Path, prompt: str) -> None:
            _claude(env, folder, "-p", "--model", MODEL_ID, "--allowedTools", "mcp__plugin_reme-mcp_reme", "--", prompt)

        check_project_memory(session, server.script, repos, home)


def test_claude_plugin_validate_passes_on_the_marketplace_and_the_plugin(tmp_path: Path) -> None:
    env = _env(tmp_path / "home", "http://127.0.0.1:9")  # nothing here talks to a model
    plugin = copy_plugin(tmp_path / "reme-mcp")
    # The marketplace entry is the plugin's whole manifest (strict: false), so both checks
    # read .claude-plugin/marketplace.json; what the plugin brings is checked once installed.
    for target in (ROOT / ".claude-plugin" / "marketplace.json", plugin):
        out = _claude(env, tmp_path, "plugin", "validate", str(target))
        assert "Validating marketplace manifest" in out and "Validation passed" in out, out
