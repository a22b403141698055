"""Codex end to end, both routes of docs/clients.md: the configured server (what
`reme-mcp config codex` prints, appended to config.toml) and the plugin installed from this
checkout (`codex plugin marketplace add` + `codex plugin add`, the Agent Plugins manifest). Each runs `codex mcp list`,
then two `codex exec` sessions against a scripted OpenAI Responses model on 127.0.0.1:
`remember` in the first, `search` in a new one."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.acceptance import (
    assert_remembered_then_found,
    copy_plugin,
    no_environment_built,
    one_core_busy,
    reme_command,
    run_host,
)
from tests.hosts.cache import cache_root, npm_bin, npm_packages, uv_bin
from tests.hosts.projects import (
    FACT,
    FACT_MARK,
    FACT_QUERY,
    Repos,
    check_project_memory,
    make_repos,
    notice,
    projects_holding,
    searched,
)
from tests.hosts.responses import MODEL_ID, request_bodies, serve_responses
from tests.hosts.script import RECALL_PROMPT, REMEMBER_PROMPT, ModelServer, planned_prompt, planned_results

CODEX = "0.171.0"
# Codex offers these itself as soon as any MCP server is configured, whatever the server
# declares (reme declares tools only); they are Codex's, not wrappers of reme's.
CODEX_MCP_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")

pytestmark = pytest.mark.node


def _env(home: Path) -> dict[str, str]:
    """A throw-away Codex user; the rest of the environment stays (uv finds its Python there)."""
    (home / ".codex").mkdir(parents=True)
    kept = {key: value for key, value in os.environ.items() if not key.startswith(("CODEX", "OPENAI", "REME_"))}
    return {
        **kept,
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        # The plugin launches `uvx`; the real uv from PyPI, never a stand-in.
        "PATH": f"{uv_bin()}{os.pathsep}{os.environ['PATH']}",
        # A user's uv cache outlives one session; sharing it across runs spares re-downloads.
        "UV_CACHE_DIR": str(cache_root() / "uv-cache"),
    }


def _provider(base_url: str, *top: str) -> str:
    """config.toml's model settings: the scripted model as a custom Responses provider."""
    lines = [*top, f'model = "{MODEL_ID}"', 'model_provider = "scripted"', ""]
    lines += ["[model_providers.scripted]", 'name = "scripted"', f'base_url = "{base_url}/v1"']
    return "\n".join([*lines, 'wire_api = "responses"', ""])


def _codex(env: dict[str, str], cwd: Path, *args: str, timeout: float = 180) -> str:
    codex = npm_bin(npm_packages("codex", {"@openai/codex": CODEX}), "codex")
    done = run_host(codex, args, env, cwd, timeout)
    assert done.returncode == 0, f"codex {' '.join(args[:3])} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _two_sessions(env: dict[str, str], cwd: Path) -> None:
    for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
        _codex(env, cwd, "exec", "--skip-git-repo-check", prompt)


def _listed(env: dict[str, str], cwd: Path) -> dict[str, dict[str, object]]:
    """`codex mcp list` as a person reads it (the table, checked for reme's row) and as JSON."""
    table = _codex(env, cwd, "mcp", "list")
    rows = [line.split() for line in table.splitlines()[1:] if line.strip()]
    assert [row[0] for row in rows] == ["reme"], table
    assert "enabled" in rows[0], table  # Codex's own status column; `mcp list` does not connect
    return {server["name"]: server for server in json.loads(_codex(env, cwd, "mcp", "list", "--json"))}


def _skill_listed(bodies: list[dict[str, object]]) -> bool:
    """Whether Codex listed the reme-memory skill to the model in a session's first request."""
    return "reme-memory" in json.dumps(bodies[0].get("input"), ensure_ascii=False)


def test_codex_configured_server_remembers_then_finds(tmp_path: Path) -> None:
    home, project, workspace = tmp_path / "home", tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    env = _env(home)
    snippet = reme_command("codex", workspace)
    assert "required = true" in snippet, snippet
    # The skill where Codex reads it, with the command the docs give.
    skill = [sys.executable, "-m", "reme_mcp", "skill", "install", "codex"]
    subprocess.run(skill, env=env, check=True, capture_output=True)
    with serve_responses() as server:
        # The docs' route: `reme-mcp config codex >> ~/.codex/config.toml`.
        (home / ".codex" / "config.toml").write_text(_provider(server.url) + "\n" + snippet, encoding="utf-8")
        transport = _listed(env, project)["reme"]["transport"]
        entry = tomllib.loads(snippet)["mcp_servers"]["reme"]
        assert isinstance(transport, dict), transport
        assert [transport["command"], transport["args"]] == [entry["command"], entry["args"]], transport

        _two_sessions(env, project)
        assert_remembered_then_found(server.script, host_tools=CODEX_MCP_TOOLS)
        bodies = [body for body in request_bodies(server) if body.get("model") == MODEL_ID]
    assert _skill_listed(bodies), json.dumps(bodies[0].get("input"), ensure_ascii=False)[:3000]
    assert list(workspace.glob("daily/*/test-passphrase.md")), "remember wrote no daily note"


def test_codex_plugin_remembers_then_finds(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    env = _env(home)
    plugin = copy_plugin(tmp_path / "reme-mcp")
    with serve_responses() as server:
        # The host's defaults: nothing in config.toml but the model.
        (home / ".codex" / "config.toml").write_text(_provider(server.url), encoding="utf-8")
        _codex(env, project, "plugin", "marketplace", "add", str(plugin))
        _codex(env, project, "plugin", "add", "reme-mcp@reme-mcp")
        plugins = _codex(env, project, "plugin", "list")
        assert any(
            line.split()[:3] == ["reme-mcp@reme-mcp", "installed,", "enabled"] for line in plugins.splitlines()
        ), plugins
        transport = _listed(env, project)["reme"]["transport"]
        assert isinstance(transport, dict), transport
        # The plugin's launcher, from the copy of the plugin in Codex's plugin cache; its
        # environment and the memory in the plugin's data folder.
        command, args = Path(str(transport["command"])), transport["args"]
        assert command.name == "reme-mcp" and command.parent.name == "bin", transport
        root = Path(transport["cwd"]) if transport.get("cwd") else command.parent.parent
        assert root.is_relative_to(home / ".codex" / "plugins" / "cache") and (root / "reme_mcp").is_dir(), transport
        # Only the data folder for the launcher's environments: the plugin names no workspace,
        # so the memory is per project under ~/.reme.
        assert args[:1] == ["--plugin-data"] and len(args) == 2, args
        data = Path(args[1])
        assert data.is_relative_to(home / ".codex" / "plugins" / "data"), data

        # No warm-up: the first session after installing is the plugin's first start, with
        # Codex's defaults (about 1 s for an optional server) and one core busy. The launcher
        # answers the handshake at once while it builds, and serves `remember` once built.
        assert no_environment_built(data), "the plugin's environment was built before its first session"
        with one_core_busy():
            _two_sessions(env, project)
        assert_remembered_then_found(server.script, host_tools=CODEX_MCP_TOOLS)
        assert list((data / "venvs").glob("*/.reme-plugin-ready")), "the first start built no environment"
        bodies = [body for body in request_bodies(server) if body.get("model") == MODEL_ID]
    assert _skill_listed(bodies), json.dumps(bodies[0].get("input"), ensure_ascii=False)[:3000]
    # Codex starts plugin servers in the plugin's folder and names no project: the server takes
    # the folder Codex runs in (`project`, in no repository: a project by its path).
    workspaces = list((home / ".reme" / "projects").glob("project-*"))
    assert len(workspaces) == 1, workspaces
    assert list(workspaces[0].glob("daily/*/test-passphrase.md")), "remember wrote no daily note"
    assert not (data / "workspace").exists(), "the plugin kept memory in its data folder"


@contextlib.contextmanager
def _plugin_installed(tmp_path: Path, env: dict[str, str]) -> Iterator[ModelServer]:
    """The scripted model, and the plugin installed from a copy of this checkout (Codex's defaults)."""
    plugin = copy_plugin(tmp_path / "reme-mcp")
    with serve_responses() as server:
        (Path(env["CODEX_HOME"]) / "config.toml").write_text(_provider(server.url), encoding="utf-8")
        _codex(env, tmp_path, "plugin", "marketplace", "add", str(plugin))
        _codex(env, tmp_path, "plugin", "add", "reme-mcp@reme-mcp")
        yield server


def _project_sessions(env: dict[str, str], repos: Repos, home: Path, server: ModelServer) -> None:
    def session(folder: Path, prompt: str) -> None:
        # Outside a repository (the home folder) Codex asks for this flag; inside one it changes nothing.
        _codex(env, folder, "exec", "--skip-git-repo-check", prompt)

    check_project_memory(session, server.script, repos, home)


def test_codex_plugin_keeps_memory_per_project(tmp_path: Path) -> None:
    """One install of the plugin, sessions in two repositories, a subfolder, a second clone and
    the home folder (tests/hosts/projects.py). Codex gives a plugin server no roots, no project
    variable and the plugin's folder as its working directory: the server takes the folder of
    the Codex process that started it."""
    home = tmp_path / "home"
    env = _env(home)
    repos = make_repos(tmp_path)
    with _plugin_installed(tmp_path, env) as server:
        _project_sessions(env, repos, home, server)


def test_codex_configured_server_keeps_memory_per_project(tmp_path: Path) -> None:
    """The same sessions with the server configured from `reme-mcp config codex` without a
    workspace: Codex starts it in the session's folder."""
    home = tmp_path / "home"
    env = _env(home)
    repos = make_repos(tmp_path)
    snippet = reme_command("codex", None)
    entry = tomllib.loads(snippet)["mcp_servers"]["reme"]
    assert "--workspace" not in entry["args"] and "env" not in entry, snippet
    with serve_responses() as server:
        (home / ".codex" / "config.toml").write_text(_provider(server.url) + "\n" + snippet, encoding="utf-8")
        _project_sessions(env, repos, home, server)


def test_codex_plugin_serves_the_folder_codex_cd_names(tmp_path: Path) -> None:
    """`codex -C DIR` (and `exec --cd DIR`, relative too) works in DIR while Codex itself stays
    where it was started, and a plugin server hears nothing of DIR: the server reads the flag
    from the command line of the Codex process that started it."""
    home = tmp_path / "home"
    env = _env(home)
    repos = make_repos(tmp_path)
    with _plugin_installed(tmp_path, env) as server:

        def session(tag: str, cwd: Path, flags: tuple[str, ...], *calls: tuple[str, dict[str, object]]) -> list[str]:
            _codex(env, cwd, *flags, "exec", "--skip-git-repo-check", planned_prompt(tag, *calls))
            return planned_results(server.script, tag)

        # Started in B, working in A: the fact is A's.
        (stored,) = session(
            "b-cd-a", repos.b, ("-C", str(repos.a)), ("remember", {"content": FACT, "name": "codename"})
        )
        workspaces = [path for path in (home / ".reme" / "projects").glob("*-*") if path.is_dir()]
        assert [path.name.split("-")[0] for path in workspaces] == ["alpha"], (workspaces, stored)
        assert list(workspaces[0].glob("daily/*/codename.md")), stored
        assert not notice(stored), stored
        # Started above both, `exec --cd` relative to there, into A's subfolder: A's memory.
        code = repos.a.parent
        flags = ("exec", "--skip-git-repo-check", "--cd", str(repos.a_sub.relative_to(code)))
        _codex(env, code, *flags, planned_prompt("cd-a-sub", ("search", {"query": FACT_QUERY})))
        (found,) = planned_results(server.script, "cd-a-sub")
        assert projects_holding(found, FACT_MARK) == {workspaces[0].name} and not notice(found), found
        # Started in A, working in B: B's memory, which never holds A's fact.
        (in_b,) = session("a-cd-b", repos.a, (f"--cd={repos.b}",), ("search", {"query": FACT_QUERY}))
        assert searched(in_b, FACT_QUERY) and FACT_MARK not in in_b and not notice(in_b), in_b
