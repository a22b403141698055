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

ROOT = Path(__file__).resolve().parents[1]
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
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


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
    # The memory must outlive plugin updates: it lives in the client-managed data directory.
    workspace = server["args"][server["args"].index("--workspace") + 1]
    assert workspace == "${PLUGIN_DATA}/workspace"


def test_claude_code_plugin_starts_exactly_one_server() -> None:
    plugin = _load(".claude-plugin/plugin.json")
    assert plugin["name"] == _load("plugin.json")["name"]
    assert plugin["version"] == _project_version()
    assert (ROOT / plugin["skills"] / "reme-memory" / "SKILL.md").is_file()
    servers = plugin["mcpServers"]
    assert list(servers) == ["reme"]
    server = servers["reme"]
    # The same launcher as mcp.json, with Claude Code's names for the plugin's two folders.
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/reme-mcp"
    assert server["args"] == ["--plugin-data", "${CLAUDE_PLUGIN_DATA}"]
    # A user's REME_WORKSPACE wins; otherwise the plugin's own persistent data directory.
    assert server["env"]["REME_WORKSPACE"] == "${REME_WORKSPACE:-${CLAUDE_PLUGIN_DATA}/workspace}"
    # Claude Code also loads a root .mcp.json, both as the plugin's and as this project's:
    # a second file would start a second server on the same workspace.
    assert not (ROOT / ".mcp.json").exists()


def test_claude_code_marketplace_lists_this_plugin() -> None:
    marketplace = _load(".claude-plugin/marketplace.json")
    assert marketplace["name"] and marketplace["owner"]["name"]
    (entry,) = marketplace["plugins"]
    assert entry["name"] == "reme-mcp"
    assert entry["version"] == _project_version()
    source = (ROOT / entry["source"]).resolve()
    assert (source / ".claude-plugin" / "plugin.json").is_file()


def test_codex_plugin_points_at_the_skill_and_the_server() -> None:
    plugin = _load(".codex-plugin/plugin.json")
    assert plugin["name"] == "reme-mcp"
    assert plugin["version"] == _project_version()
    assert plugin["skills"].startswith("./")
    assert (ROOT / plugin["skills"] / "reme-memory" / "SKILL.md").is_file()
    assert plugin["mcpServers"] == "./mcp.json"
    assert plugin["interface"]["displayName"]
    prompts = plugin["interface"].get("defaultPrompt", [])
    assert len(prompts) <= 3
    # A suggested prompt must not hand the model the value that proves memory works.
    assert not [prompt for prompt in prompts if "蓝鲸" in prompt or "731" in prompt]


def test_codex_marketplace_lists_this_plugin() -> None:
    marketplace = _load(".agents/plugins/marketplace.json")
    assert marketplace["name"] and marketplace["interface"]["displayName"]
    (entry,) = marketplace["plugins"]
    assert entry["name"] == "reme-mcp"
    assert entry["source"]["source"] == "local"
    assert entry["source"]["path"].startswith("./")
    assert (ROOT / entry["source"]["path"] / ".codex-plugin" / "plugin.json").is_file()
    assert entry["policy"]["installation"] in {"AVAILABLE", "INSTALLED_BY_DEFAULT"}


def test_the_launcher_builds_from_what_the_package_ships() -> None:
    """The launcher checksums the files the wheel is built from; sdist and plugin copies carry it."""
    launcher = (ROOT / "bin" / "reme-mcp").read_text(encoding="utf-8")
    assert launcher.startswith("#!/bin/sh\n")
    assert "find pyproject.toml README.md reme_mcp skills " in launcher
    with (ROOT / "pyproject.toml").open("rb") as handle:
        sdist = tomllib.load(handle)["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"bin", "reme_mcp", "skills", "README.md", "pyproject.toml"} <= set(sdist)


def test_manifests_agree_on_identity() -> None:
    documents = [_load(path) for path in ("plugin.json", ".claude-plugin/plugin.json", ".codex-plugin/plugin.json")]
    assert len({doc["name"] for doc in documents}) == 1
    assert len({doc["version"] for doc in documents}) == 1
    assert len({doc["license"] for doc in documents}) == 1
