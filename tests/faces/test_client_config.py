"""Each host's snippet parses in that host's format and starts reme-mcp on the absolute workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from reme_mcp.faces.client_config import (
    PROMPTS_AS_TOOLS,
    UnknownClientError,
    installed_command,
    list_clients,
    render_config,
)

ALL_CLIENTS = [
    "claude-code",
    "codex",
    "cursor",
    "vscode",
    "claude-desktop",
    "opencode",
    "openclaw",
    "hermes",
    "deerflow",
    "pi",
    "dsh",
]

FORMATS = {"codex": "toml", "hermes": "yaml", "dsh": "yaml"}


def _parse(client: str, text: str) -> Any:
    kind = FORMATS.get(client, "json")
    if kind == "toml":
        return tomllib.loads(text)
    if kind == "yaml":
        return yaml.safe_load(text)
    return json.loads(text)


def _server_entry(client: str, data: Any) -> Any:
    """Where each host keeps the server, so the test checks the real location, not a substring."""
    if client == "codex":
        return data["mcp_servers"]["reme"]
    if client == "vscode":
        return data["servers"]["reme"]
    if client == "opencode":
        return data["mcp"]["reme"]
    if client == "openclaw":
        return data["mcp"]["servers"]["reme"]
    if client == "hermes":
        return data["mcp_servers"]["reme"]
    if client == "dsh":
        (patch,) = data
        (entry,) = patch["insert"]
        assert entry["name"] == "@deepseek-ai/dsh-mcp-client"
        return entry["config"]
    return data["mcpServers"]["reme"]


def _argv(client: str, entry: dict[str, Any]) -> list[str]:
    if client == "opencode":
        assert entry["type"] == "local"
        return list(entry["command"])
    return [entry["command"], *entry["args"]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    # Spaces and CJK in the path catch naive quoting in every encoder.
    path = tmp_path / "my memory 记忆"
    path.mkdir()
    return path


def test_list_clients_covers_every_host_with_a_file_named() -> None:
    clients = list_clients()
    assert [client for client, _ in clients] == ALL_CLIENTS
    for client, description in clients:
        assert description and "\n" not in description, client
        assert any(marker in description for marker in (".json", ".toml", ".yaml", ".yml")), client


@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_snippet_parses_and_starts_reme_mcp_on_the_absolute_workspace(client: str, workspace: Path) -> None:
    entry = _server_entry(client, _parse(client, render_config(client, workspace)))
    flags = ["--no-prompts"] if client in PROMPTS_AS_TOOLS else []
    assert _argv(client, entry) == [*installed_command(), *flags, "--workspace", str(workspace.resolve())]
    assert Path(_argv(client, entry)[0]).is_absolute()
    published = _server_entry(client, _parse(client, render_config(client, workspace, "uvx")))
    assert _argv(client, published) == ["uvx", "reme-mcp", *flags, "--workspace", str(workspace.resolve())]


def test_installed_command_is_this_installation() -> None:
    done = subprocess.run([*installed_command(), "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.startswith("reme-mcp, version")
    command = installed_command()
    assert command[0] == str(Path(sys.executable).with_name("reme-mcp")) or command[1:] == ["-m", "reme_mcp"]


@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_relative_workspace_is_resolved_to_an_absolute_path(
    client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    entry = _server_entry(client, _parse(client, render_config(client, Path(".reme"))))
    assert _argv(client, entry)[-1] == str(tmp_path.resolve() / ".reme")


def test_host_specific_keys(workspace: Path) -> None:
    vscode = _parse("vscode", render_config("vscode", workspace))["servers"]["reme"]
    assert vscode["type"] == "stdio"
    deerflow = _parse("deerflow", render_config("deerflow", workspace))["mcpServers"]["reme"]
    assert deerflow["enabled"] is True and deerflow["type"] == "stdio"
    codex = _parse("codex", render_config("codex", workspace))["mcp_servers"]["reme"]
    assert codex["startup_timeout_sec"] >= 30
    assert codex["required"] is True  # else Codex starts the first turn without the tools
    hermes = _parse("hermes", render_config("hermes", workspace))
    assert hermes["mcp_discovery_timeout"] >= 5
    dsh = _server_entry("dsh", _parse("dsh", render_config("dsh", workspace)))
    assert dsh["transport"] == "stdio" and dsh["serverName"] == "reme"
    pi = _parse("pi", render_config("pi", workspace))["mcpServers"]["reme"]
    assert pi["exposure"] == "direct"


def test_toml_escapes_quotes_and_backslashes(tmp_path: Path) -> None:
    odd = tmp_path / 'a "quoted" \\ name'
    entry = tomllib.loads(render_config("codex", odd))["mcp_servers"]["reme"]
    assert entry["args"][-1] == str(odd.resolve())


def test_unknown_launcher_is_refused(workspace: Path) -> None:
    with pytest.raises(UnknownClientError, match="installed, uvx"):
        render_config("codex", workspace, "npx")


def test_client_names_are_case_insensitive(workspace: Path) -> None:
    assert render_config("  Codex ", workspace) == render_config("codex", workspace)


def test_unknown_client_is_a_one_line_error_naming_the_accepted_clients(workspace: Path) -> None:
    with pytest.raises(UnknownClientError) as caught:
        render_config("emacs", workspace)
    message = str(caught.value)
    assert "\n" not in message
    assert "emacs" in message
    for client in ALL_CLIENTS:
        assert client in message
    assert isinstance(caught.value, ValueError)


def _handshake(argv: list[str]) -> list[str]:
    """Start a server as a host would and return the names of the tools it lists."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    wire = "".join(json.dumps(request) + "\n" for request in requests)
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(wire)
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
        proc.stdin.close()
        proc.wait(timeout=30)
    assert answers[0]["result"]["serverInfo"]["name"] == "reme-mcp", answers
    return [tool["name"] for tool in answers[1]["result"]["tools"]]


INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}


def test_every_printed_snippet_starts_a_server_with_five_tools(tmp_path: Path) -> None:
    """What `reme-mcp config CLIENT` prints, started exactly as the host would start it."""
    from concurrent.futures import ThreadPoolExecutor

    workspace = tmp_path / "memory"

    def printed(client: str) -> list[str]:
        argv = [*installed_command(), "config", client, "--workspace", str(workspace)]
        text = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout
        return _argv(client, _server_entry(client, _parse(client, text)))

    with ThreadPoolExecutor(max_workers=4) as pool:
        commands = list(pool.map(printed, ALL_CLIENTS))
        listed = list(pool.map(_handshake, commands))
    for client, tools in zip(ALL_CLIENTS, listed, strict=True):
        assert sorted(tools) == ["daily_list", "read", "remember", "search", "traverse"], client


@pytest.mark.parametrize("client", ["openclaw", "hermes"])
def test_a_chosen_time_zone_travels_in_the_snippet_not_in_the_hosts_environment(client: str, workspace: Path) -> None:
    # OpenClaw and Hermes drop REME_TIMEZONE from the environment they start servers with.
    shell = {**os.environ, "REME_TIMEZONE": "Pacific/Kiritimati"}
    argv = [sys.executable, "-m", "reme_mcp", "config", client, "--workspace", str(workspace)]
    printed = subprocess.run(argv, env=shell, capture_output=True, text=True, timeout=60, check=True).stdout
    entry = _server_entry(client, _parse(client, printed))
    assert entry["args"][-2:] == ["--timezone", "Pacific/Kiritimati"]
    host_env = {key: os.environ[key] for key in ("HOME", "PATH") if key in os.environ}
    doctor = [*_argv(client, entry), "doctor"]
    report = subprocess.run(doctor, env=host_env, capture_output=True, text=True, timeout=60, check=True).stdout
    assert "timezone: Pacific/Kiritimati" in report
    # Without a chosen zone the snippet adds none: the server's own default (the local zone) applies.
    unset = {key: value for key, value in os.environ.items() if key != "REME_TIMEZONE"}
    plain = subprocess.run(argv, env=unset, capture_output=True, text=True, timeout=60, check=True).stdout
    assert "--timezone" not in plain


@pytest.mark.parametrize(
    ("semantic", "model", "source"),
    [
        ("on", None, ["--from", "reme-mcp[semantic]"]),
        (None, "multilingual-e5-small", ["--from", "reme-mcp[semantic]"]),
        ("on", "my-hub-model", ["--from", "reme-mcp[semantic-hub]"]),
        ("auto", None, []),
        ("off", "multilingual-e5-small", []),
        (None, None, []),
    ],
)
def test_a_uvx_snippet_installs_the_extra_its_search_by_meaning_needs(
    semantic: str | None, model: str | None, source: list[str], workspace: Path
) -> None:
    """uvx installs the package alone unless told otherwise: `--semantic on` would then search by words."""
    entry = _server_entry("codex", _parse("codex", render_config("codex", workspace, "uvx", None, (), semantic, model)))
    assert _argv("codex", entry)[: len(source) + 2] == ["uvx", *source, "reme-mcp"]


def test_hosts_that_turn_prompts_into_tools_get_no_prompts() -> None:
    """Hermes, OpenClaw and Pi offer a server's prompts to the model as list_prompts/get_prompt tools:
    their snippets start reme-mcp with --no-prompts, so the model sees the five tools alone."""
    from reme_mcp.faces.client_config import render_config

    for client in ("hermes", "openclaw", "pi"):
        assert "--no-prompts" in render_config(client, None), client
    for client in ("claude-code", "codex", "cursor", "vscode", "opencode"):
        assert "--no-prompts" not in render_config(client, None), client
