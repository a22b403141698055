"""Configuration snippets that plug reme-mcp into each MCP host, in the host's own format.

Every host stores its MCP servers differently (JSON ``mcpServers``, VS Code ``servers``,
Codex TOML, OpenCode's command arrays, Hermes YAML, DeepSeek Harness Cordis patches), so
each one gets a small renderer that builds plain data and serialises it with a real
encoder, never by pasting strings together. The snippet always names the workspace by
its absolute path: hosts start servers from directories of their own choosing, and a
relative path would silently point at a different memory.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reme_mcp.index.semantic.models import fetch as model_fetch

SERVER_NAME = "reme"
"""The key every snippet registers the server under; hosts show tools as ``<host prefix>reme...``."""

PACKAGE = "reme-mcp"

LAUNCHERS = ("installed", "uvx")
"""``installed``: the absolute command of the installation printing the snippet (works today);
``uvx``: ``uvx reme-mcp``, which needs reme-mcp published on the package index."""

HERMES_DISCOVERY_TIMEOUT = 10.0
# Hosts that offer a server's prompts to the model as tools of their own (list_prompts and
# get_prompt wrappers) instead of as commands: their snippets turn the prompts off, so the model
# sees the five tools alone (docs/consolidation.md).
PROMPTS_AS_TOOLS = frozenset({"hermes", "openclaw", "pi"})
"""Hermes waits ``mcp_discovery_timeout`` (1.5 s by default) for servers before the first turn,
then runs the whole session without the tools that were late."""

DESCRIPTION = "Long-term memory kept as plain files in a ReMe workspace"


class UnknownClientError(ValueError):
    """The requested host is not one reme-mcp knows how to configure."""


@dataclass(frozen=True)
class _Launch:
    """How the host starts the server: one executable plus its arguments."""

    command: str
    args: tuple[str, ...]

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


@dataclass(frozen=True)
class _Host:
    id: str
    description: str
    render: Callable[[_Launch], str]


def installed_command() -> list[str]:
    """The absolute command that starts this very installation of reme-mcp.

    The console script beside the interpreter when there is one (a venv's or pipx's
    bin folder), else the interpreter itself with ``-m reme_mcp``. The interpreter path
    is kept as it is, not resolved: resolving a venv's python symlink leaves the venv.
    """
    python = Path(sys.executable).absolute()
    script = python.with_name(PACKAGE)
    if script.is_file():
        return [str(script)]
    return [str(python), "-m", "reme_mcp"]


def _launch(
    workspace: Path | None,
    launcher: str,
    timezone: str | None,
    ingest: tuple[str, ...] = (),
    semantic: str | None = None,
    semantic_model: str | None = None,
    prompts: bool = True,
) -> _Launch:
    # Always flags, never REME_* in env: OpenClaw and Hermes start servers with a few
    # variables of their own choosing (HOME, PATH, SHELL, TERM, ...), whatever the user's shell holds.
    # No workspace: each project keeps its own (the server finds the project where the host runs).
    tail: tuple[str, ...] = ("--workspace", str(workspace.expanduser().resolve())) if workspace else ()
    if timezone:
        tail = (*tail, "--timezone", timezone)
    for source in ingest:
        tail = (*tail, "--ingest", source)
    if semantic:
        tail = (*tail, "--semantic", semantic)
    if semantic_model:
        tail = (*tail, "--semantic-model", semantic_model)
    if not prompts:
        tail = ("--no-prompts", *tail)
    if launcher == "uvx":
        return _Launch("uvx", (*_uvx_from(semantic, semantic_model), PACKAGE, *tail))
    command, *args = installed_command()
    return _Launch(command, (*args, *tail))


def _uvx_from(semantic: str | None, semantic_model: str | None) -> tuple[str, ...]:
    """uvx's `--from` with the extra that searches by meaning, when the snippet asks for it:
    `uvx reme-mcp` installs the package alone, and `--semantic on` would then say the extra is
    missing and search by words. `auto` keeps its meaning, on when installed: plain uvx."""
    if semantic == "off" or (semantic != "on" and not semantic_model):
        return ()
    extra = model_fetch.extra_for(semantic_model) if semantic_model else "semantic"
    return ("--from", f"{PACKAGE}[{extra}]")


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _yaml(data: Any, header: str) -> str:
    body = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, default_flow_style=False)
    return f"# {header}\n{body}"


def _toml_string(value: str) -> str:
    """A TOML basic string; TOML forbids raw control characters that JSON would allow."""
    out = ['"']
    for char in value:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _stdio_entry(launch: _Launch) -> dict[str, Any]:
    return {"command": launch.command, "args": list(launch.args)}


def _claude_code(launch: _Launch) -> str:
    return _json({"mcpServers": {SERVER_NAME: {"type": "stdio", **_stdio_entry(launch)}}})


def _codex(launch: _Launch) -> str:
    args = ", ".join(_toml_string(arg) for arg in launch.args)
    return (
        "# ~/.codex/config.toml\n"
        f"[mcp_servers.{SERVER_NAME}]\n"
        f"command = {_toml_string(launch.command)}\n"
        f"args = [{args}]\n"
        # The first `uvx` run downloads the package; Codex's 10 s default is too short for it.
        "startup_timeout_sec = 60\n"
        # Codex gives an optional server about a second before the first turn, then goes on
        # without its tools; a required one is waited for (and a failure to start is reported).
        "required = true\n"
    )


def _mcp_servers(launch: _Launch) -> str:
    return _json({"mcpServers": {SERVER_NAME: _stdio_entry(launch)}})


def _vscode(launch: _Launch) -> str:
    return _json({"servers": {SERVER_NAME: {"type": "stdio", **_stdio_entry(launch)}}})


def _opencode(launch: _Launch) -> str:
    entry = {"type": "local", "command": launch.argv, "enabled": True}
    return _json({"$schema": "https://opencode.ai/config.json", "mcp": {SERVER_NAME: entry}})


def _openclaw(launch: _Launch) -> str:
    # OpenClaw's default Tool Search hides MCP tools behind tool_search/tool_call, whose
    # queries must be English; toolSearch false offers the five tools to the model directly.
    return _json({"mcp": {"servers": {SERVER_NAME: _stdio_entry(launch)}}, "tools": {"toolSearch": False}})


def _hermes(launch: _Launch) -> str:
    data = {"mcp_discovery_timeout": HERMES_DISCOVERY_TIMEOUT, "mcp_servers": {SERVER_NAME: _stdio_entry(launch)}}
    return _yaml(data, "~/.hermes/config.yaml")


def _deerflow(launch: _Launch) -> str:
    entry = {
        "enabled": True,
        "type": "stdio",
        **_stdio_entry(launch),
        "env": {},
        "description": DESCRIPTION,
    }
    return _json({"mcpServers": {SERVER_NAME: entry}})


def _pi(launch: _Launch) -> str:
    # Pi 1.x's own MCP client reads ~/.pi/agent/mcp.json. "direct" declares the five tools to
    # the model like built-in ones (mcp__reme__search); its default, codemode, hides them.
    return _json({"mcpServers": {SERVER_NAME: {**_stdio_entry(launch), "exposure": "direct"}}})


def _dsh(launch: _Launch) -> str:
    # One @deepseek-ai/dsh-mcp-client row per server, inserted by a Cordis patch. With
    # failOnStartupError true a server that cannot start is reported at every start ("1 entry
    # did not activate: mcp-reme ...") and the session goes on without it; with false a
    # headless run says nothing about it.
    config = {"serverName": SERVER_NAME, "transport": "stdio", **_stdio_entry(launch), "failOnStartupError": True}
    patch = [{"insert": [{"id": f"mcp-{SERVER_NAME}", "name": "@deepseek-ai/dsh-mcp-client", "config": config}]}]
    return _yaml(patch, "$DSH_HOME/cordis.patch.yml (~/.dsh when DSH_HOME is unset); append to its top-level list")


_HOSTS: tuple[_Host, ...] = (
    _Host(
        "claude-code",
        "Claude Code: project .mcp.json, or `claude mcp add --scope user` (the plugin needs no snippet)",
        _claude_code,
    ),
    _Host("codex", "OpenAI Codex: ~/.codex/config.toml, or `codex mcp add`", _codex),
    _Host("cursor", "Cursor: ~/.cursor/mcp.json (global) or .cursor/mcp.json (project)", _mcp_servers),
    _Host("vscode", "VS Code (Copilot agent mode): .vscode/mcp.json, key `servers`", _vscode),
    _Host(
        "claude-desktop",
        "Claude Desktop: claude_desktop_config.json (Settings > Developer > Edit Config)",
        _mcp_servers,
    ),
    _Host("opencode", "OpenCode: opencode.json (project) or ~/.config/opencode/opencode.json", _opencode),
    _Host(
        "openclaw",
        "OpenClaw: ~/.openclaw/openclaw.json, keys mcp.servers and tools.toolSearch (or `openclaw mcp set`)",
        _openclaw,
    ),
    _Host("hermes", "Hermes Agent: ~/.hermes/config.yaml, key mcp_servers", _hermes),
    _Host("deerflow", "DeerFlow: extensions_config.json in the DeerFlow project root", _deerflow),
    _Host("pi", "Pi 1.x: ~/.pi/agent/mcp.json (or `pi mcp add`), exposure direct", _pi),
    _Host(
        "dsh",
        "DeepSeek Harness: $DSH_HOME/cordis.patch.yml, a Cordis patch inserting a @deepseek-ai/dsh-mcp-client row",
        _dsh,
    ),
)

_BY_ID = {host.id: host for host in _HOSTS}


def list_clients() -> list[tuple[str, str]]:
    """Every supported host as (id, one-line description naming the file the snippet belongs in)."""
    return [(host.id, host.description) for host in _HOSTS]


def render_config(
    client: str,
    workspace: Path | None,
    launcher: str = "installed",
    timezone: str | None = None,
    ingest: tuple[str, ...] = (),
    semantic: str | None = None,
    semantic_model: str | None = None,
) -> str:
    """The snippet that starts reme-mcp from ``client``, in that host's format: on ``workspace``
    alone, or with None, one workspace per project.

    ``launcher`` is ``installed`` (this installation's absolute command) or ``uvx``;
    ``timezone``, when given, is passed as ``--timezone`` (the host would not pass $REME_TIMEZONE on);
    each ``ingest`` source as ``--ingest``, so the server follows that host's session logs;
    ``semantic``, when given, as ``--semantic`` (search by meaning: auto, on or off);
    ``semantic_model``, when given, as ``--semantic-model`` (a model fetched by ``reme-mcp model fetch``).
    """
    host = _BY_ID.get(client.strip().lower())
    if host is None:
        accepted = ", ".join(_BY_ID)
        raise UnknownClientError(f"unknown client {client!r}; accepted: {accepted}")
    if launcher not in LAUNCHERS:
        raise UnknownClientError(f"unknown launcher {launcher!r}; accepted: {', '.join(LAUNCHERS)}")
    prompts = host.id not in PROMPTS_AS_TOOLS
    return host.render(_launch(workspace, launcher, timezone, ingest, semantic, semantic_model, prompts))
