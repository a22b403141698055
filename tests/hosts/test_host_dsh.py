"""DeepSeek Harness end to end: `$DSH_HOME/cordis.patch.yml` is what `reme-mcp config dsh` prints
(a Cordis patch inserting one `@deepseek-ai/dsh-mcp-client` row), DSH's own DeepSeek provider
is pointed at a scripted Anthropic Messages model on 127.0.0.1, and two `dsh --profile headless`
runs, each a new session, call `remember` and then `search`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import yaml

from tests.hosts.acceptance import assert_remembered_then_found, install_skill, reme_command, run_host
from tests.hosts.anthropic import AUX_MODEL, MODEL_ID, request_bodies, serve_anthropic
from tests.hosts.cache import python_venv
from tests.hosts.script import RECALL_PROMPT, REME_TOOLS, REMEMBER_PROMPT

DSH = "0.2.1rc2"

RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
"""DSH's dsh-mcp-resources plugin registers these three once any MCP server connects, whatever
capabilities that server declares (reme declares none for resources)."""


def _dsh(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The PyPI wheel: one native executable bundling Node and every shipped plugin.
    dsh = python_venv("dsh", [f"deepseek-harness-runtime-bin=={DSH}"]) / "bin" / "dsh"
    return run_host(dsh, args, env, cwd, 180)


def _model_patch(base_url: str) -> str:
    """The person's own model, as a `--patch` overlay: DSH's DeepSeek provider (Anthropic Messages
    at `baseURL`) serving the scripted model, and session titles from the side model."""
    patch = [
        {"id": "llm-deepseek", "config": {"baseURL": base_url, "models": [{"id": MODEL_ID}, {"id": AUX_MODEL}]}},
        {"id": "agent-default-model", "config": {"provider": "deepseek-official", "model": MODEL_ID}},
        {
            # A patch replaces an entry's whole config, so the shipped values are repeated.
            "id": "session-title-llm",
            "config": {
                "targetWords": 5,
                "targetCjkCharacters": 10,
                "maxInputBytes": 4096,
                "maxOutputTokens": 4096,
                "timeoutMs": 60000,
                "provider": "deepseek-official",
                "model": AUX_MODEL,
            },
        },
    ]
    return yaml.safe_dump(patch, sort_keys=False)


def test_dsh_remembers_in_one_session_and_finds_it_in_the_next(tmp_path: Path) -> None:
    home, dsh_home, project, workspace = tmp_path / "home", tmp_path / "dsh", tmp_path / "project", tmp_path / "ws"
    project.mkdir()
    dsh_home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        # The PyPI `dsh` refuses to start without it (it never falls back to ~/.dsh).
        "DSH_HOME": str(dsh_home),
        "DSH_TELEMETRY_DISABLED": "1",
        "DEEPSEEK_API_KEY": "sk-scripted",
    }
    # The docs' route: what `reme-mcp config dsh` prints is the home-level patch layer, as printed.
    snippet = reme_command("dsh", workspace)
    patch_file = dsh_home / "cordis.patch.yml"
    patch_file.write_text(snippet, encoding="utf-8")
    assert install_skill("dsh", home) == home / ".agents" / "skills" / "reme-memory"

    # The host's own view of its configuration: the composed tree holds the row, under the home layer.
    dumped = _dsh(env, project, "--profile", "headless", "--dump-config")
    assert dumped.returncode == 0, dumped.stdout + dumped.stderr
    layer = re.search(rf"^# == {re.escape(str(patch_file))}\n(.*?)(?=^# == |\Z)", dumped.stdout, re.S | re.M)
    assert layer, dumped.stdout[-3000:]
    assert yaml.safe_load(layer.group(1)) == yaml.safe_load(snippet)[0]["insert"]

    with serve_anthropic() as server:
        overlay = tmp_path / "model.yml"
        overlay.write_text(_model_patch(server.url), encoding="utf-8")
        sessions = []
        for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
            done = _dsh(env, project, "--profile", "headless", "--patch", str(overlay), "--json", prompt)
            assert done.returncode == 0, done.stdout + done.stderr
            # A server that failed to start or to list its tools is reported here (failOnStartupError).
            assert "did not activate" not in done.stderr and "mcp-client(reme)" not in done.stderr, done.stderr
            events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            sessions += [event["sessionId"] for event in events if event["type"] == "session"]
            called = [event["tool"] for event in events if event["type"] == "tool_call"]
            assert called == [f"mcp__reme__{'remember' if prompt == REMEMBER_PROMPT else 'search'}"], events
        assert len(set(sessions)) == 2, f"expected two sessions, got {sessions}"
        assert_remembered_then_found(server.script, host_tools=RESOURCE_TOOLS)
        bodies = [body for body in request_bodies(server) if body.get("model") == MODEL_ID]

        # What the docs promise when the server cannot start: DSH says so, and the session goes on.
        broken = yaml.safe_load(snippet)[0]["insert"][0]
        broken["config"]["command"] = str(tmp_path / "missing" / "reme-mcp")
        (tmp_path / "broken.yml").write_text(yaml.safe_dump([broken]), encoding="utf-8")
        args = ("--profile", "headless", "--patch", str(overlay), "--patch", str(tmp_path / "broken.yml"), "Hello")
        done = _dsh(env, project, *args)
        assert done.returncode == 0 and "OK." in done.stdout, done.stdout + done.stderr
        assert "1 entry did not activate" in done.stderr and "mcp-reme" in done.stderr, done.stderr

    offered = [tool["name"] for tool in bodies[0]["tools"]]
    assert sorted(name for name in offered if "reme" in name) == sorted(f"mcp__reme__{t}" for t in REME_TOOLS)
    # DSH lists the skills of ~/.agents/skills to the model in the session's skill catalog and
    # offers its `skill` tool to load one.
    assert "skill" in offered
    catalog = re.search(
        r"<available_skills>(.*?)</available_skills>", json.dumps(bodies[0]["messages"], ensure_ascii=False)
    )
    assert catalog and "- `reme-memory`: " in catalog.group(1), json.dumps(bodies[0]["messages"])[:3000]
    assert list((workspace / "daily").glob("*/test-passphrase.md")), "the note is not in the configured workspace"
