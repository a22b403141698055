"""The plugin manifests: Agent Plugins 1.0.0 at the root, plus Claude Code and Codex packaging.

Schema validation needs the reference schemas in ``../shared`` beside the checkout; a clone
without them still checks every rule below that does not need a schema.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT.parent / "shared" / "reference" / "agent-plugins-1.0.0"
PLUGIN_SCHEMA_ID = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
MCP_SCHEMA_ID = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
SECRET_NAME = re.compile(r"(?i)(token|secret|password|passwd|api[_-]?key|credential|auth)")

needs_spec = pytest.mark.skipif(
    not SPEC_DIR.is_dir(),
    reason=f"Agent Plugins reference schemas not found at {SPEC_DIR} (only the CI checkout has ../shared)",
)


def _load(relative: str) -> Any:
    return json.loads((ROOT / relative).read_text(encoding="utf-8"))


def _project_version() -> str:
    """The one version source: pyproject reads it from reme_mcp/_version.py, as the package does."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "reme_mcp/_version.py"
    from reme_mcp._version import __version__

    return __version__


def _schema(name: str) -> Any:
    return json.loads((SPEC_DIR / name).read_text(encoding="utf-8"))


@needs_spec
@pytest.mark.parametrize(
    ("document", "schema"), [("plugin.json", "plugin.schema.json"), ("mcp.json", "mcp.schema.json")]
)
def test_root_manifests_validate_against_the_agent_plugins_schemas(document: str, schema: str) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extras")
    validator_class = jsonschema.validators.validator_for(_schema(schema))
    validator_class.check_schema(_schema(schema))
    errors = [error.message for error in validator_class(_schema(schema)).iter_errors(_load(document))]
    assert errors == []


@needs_spec
def test_the_schema_check_can_fail() -> None:
    """Guards the test above against a validator that accepts anything."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extras")
    broken = _load("mcp.json")
    broken["mcpServers"]["reme"]["command"] = ["uvx"]
    broken["extra"] = True
    validator_class = jsonschema.validators.validator_for(_schema("mcp.schema.json"))
    assert list(validator_class(_schema("mcp.schema.json")).iter_errors(broken))


def test_root_plugin_manifest() -> None:
    plugin = _load("plugin.json")
    assert plugin["$schema"] == PLUGIN_SCHEMA_ID
    assert plugin["name"] == "reme-mcp"
    assert plugin["version"] == _project_version()
    assert (ROOT / "skills" / "reme-memory" / "SKILL.md").is_file()


def test_root_mcp_config_follows_the_spec_rules() -> None:
    mcp = _load("mcp.json")
    assert mcp["$schema"] == MCP_SCHEMA_ID
    # §10.1: mcp.json must target the same Agent Plugins version as plugin.json.
    assert mcp["$schema"].split("/")[-2] == _load("plugin.json")["$schema"].split("/")[-2]
    server = mcp["mcpServers"]["reme"]
    assert server["type"] == "stdio"
    # §7.2.1: an executable the plugin bundles is named by a plugin-relative path, one token,
    # never a shell string, never expanded.
    assert server["command"] == "./bin/reme-mcp"
    assert (ROOT / server["command"]).is_file() and os.access(ROOT / server["command"], os.X_OK)
    # The launcher keeps the server's environment in the client-managed data folder (§9.1).
    assert server["args"][:2] == ["--plugin-data", "${PLUGIN_DATA}"]
    # §9.2: only ${PLUGIN_ROOT} and ${PLUGIN_DATA} exist, and only in args, env values and cwd.
    for value in [*server.get("args", []), *server.get("env", {}).values(), server.get("cwd", "")]:
        assert set(PLACEHOLDER.findall(value)) <= {"PLUGIN_ROOT", "PLUGIN_DATA"}, value
    env = server.get("env", {})
    assert not {"PLUGIN_ROOT", "PLUGIN_DATA"} & set(env)
    assert not [name for name in env if SECRET_NAME.search(name)], "no secrets in env (§9.2)"
    # No workspace named: each project keeps its own memory, outside the plugin (it outlives
    # plugin updates), found from the folder the host runs in (reme_mcp/projects/).
    assert "--workspace" not in server["args"] and "REME_WORKSPACE" not in env
    # Search by meaning is the user's choice, and §9.2 gives this file no way to pass the user's
    # REME_SEMANTIC on: a value here would override it. The launcher reads the host's
    # environment, else ${PLUGIN_DATA}/plugin.env (tests/faces/test_plugin_semantic.py).
    assert "REME_SEMANTIC" not in env


def _claude_entry() -> Any:
    (entry,) = _load(".claude-plugin/marketplace.json")["plugins"]
    return entry


def test_only_the_agent_plugins_manifest_sits_where_hosts_detect_formats() -> None:
    """OpenClaw takes a folder with .codex-plugin/plugin.json (or .cursor-plugin/, or
    .claude-plugin/plugin.json) for that host's bundle, whose placeholders it does not expand;
    only the Agent Plugins manifest gets ${PLUGIN_ROOT} and ${PLUGIN_DATA}. Codex reads the root
    plugin.json and mcp.json; Claude Code takes the whole plugin from its marketplace entry."""
    for path in (".codex-plugin/plugin.json", ".cursor-plugin/plugin.json", ".claude-plugin/plugin.json"):
        assert not (ROOT / path).exists(), path


def test_claude_code_plugin_starts_exactly_one_server() -> None:
    entry = _claude_entry()
    # strict: false makes the marketplace entry the plugin's whole manifest.
    assert entry["strict"] is False
    assert entry["name"] == _load("plugin.json")["name"]
    assert entry["version"] == _project_version()
    assert (ROOT / entry["skills"] / "reme-memory" / "SKILL.md").is_file()
    servers = entry["mcpServers"]
    assert list(servers) == ["reme"]
    server = servers["reme"]
    # The same launcher as mcp.json, with Claude Code's names for the plugin's two folders.
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/reme-mcp"
    assert server["args"] == ["--plugin-data", "${CLAUDE_PLUGIN_DATA}"]
    # A user's REME_WORKSPACE (one workspace for everything) wins; unset, it is empty, and each
    # project keeps its own memory.
    assert server["env"]["REME_WORKSPACE"] == "${REME_WORKSPACE:-}"
    # The plugin's settings pass through from the environment Claude Code starts from; unset
    # they are empty, which the server and the launcher read as their defaults (for
    # REME_SEMANTIC: search by meaning, unless the data folder's plugin.env says off).
    assert server["env"]["REME_INGEST"] == "${REME_INGEST:-}"
    assert server["env"]["REME_SEMANTIC"] == "${REME_SEMANTIC:-}"
    # Claude Code also loads a root .mcp.json, both as the plugin's and as this project's:
    # a second file would start a second server on the same workspace.
    assert not (ROOT / ".mcp.json").exists()


def test_claude_code_marketplace_lists_this_plugin() -> None:
    marketplace = _load(".claude-plugin/marketplace.json")
    assert marketplace["name"] and marketplace["owner"]["name"]
    entry = _claude_entry()
    assert entry["name"] == "reme-mcp"
    assert (ROOT / entry["source"] / "skills").resolve() == (ROOT / "skills").resolve()


def test_codex_marketplace_lists_this_plugin() -> None:
    marketplace = _load(".agents/plugins/marketplace.json")
    assert marketplace["name"] and marketplace["interface"]["displayName"]
    (entry,) = marketplace["plugins"]
    assert entry["name"] == "reme-mcp"
    assert entry["source"]["source"] == "local"
    assert entry["source"]["path"].startswith("./")
    # Codex installs the Agent Plugins manifest at the source path.
    assert (ROOT / entry["source"]["path"] / "plugin.json").is_file()
    assert entry["policy"]["installation"] in {"AVAILABLE", "INSTALLED_BY_DEFAULT"}


def test_the_sdist_ships_the_launcher() -> None:
    """The sdist carries the launcher beside what it builds the server from."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        sdist = tomllib.load(handle)["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"bin", "reme_mcp", "skills", "README.md", "pyproject.toml"} <= set(sdist)


def test_manifests_agree_on_identity() -> None:
    documents = [_load("plugin.json"), _claude_entry()]
    assert len({doc["name"] for doc in documents}) == 1
    assert len({doc["version"] for doc in documents}) == 1
    assert len({doc["license"] for doc in documents}) == 1
