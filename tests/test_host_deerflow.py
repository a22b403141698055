"""DeerFlow end to end: the project's `extensions_config.json` is what `reme-mcp config deerflow`
prints, `config.yaml` names a scripted OpenAI-compatible model on 127.0.0.1, and two runs of
DeerFlow's embedded client (`deerflow.client.DeerFlowClient`, the lead agent without the
LangGraph server), each a new process and thread, call `remember` and then `search`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml

from tests.hosts.acceptance import assert_remembered_then_found, install_skill, reme_command, run_host
from tests.hosts.cache import python_at_least, python_venv
from tests.hosts.chat_completions import AUX_MODEL, MODEL_ID, request_bodies, serve_chat_completions
from tests.hosts.script import PASSPHRASE, RECALL_PROMPT, REME_TOOLS, REMEMBER_PROMPT

DEERFLOW = "0.1.7"

CHAT = "import sys\nfrom deerflow.client import DeerFlowClient\nprint(DeerFlowClient().chat(sys.argv[1], thread_id=sys.argv[2]))"
"""One turn in a new thread, as DeerFlow's README shows its embedded client."""

LIST_TOOLS = (
    "import asyncio\nfrom deerflow.mcp.tools import get_mcp_tools\n"
    "for tool in asyncio.run(get_mcp_tools()):\n    print(tool.name)"
)
"""DeerFlow's own MCP loader, the one its agents use: every tool of every enabled server."""


def _python(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # deerflow-kernel needs Python >= 3.12; its venv is about 1.5 GB (langchain, langgraph, ...).
    venv = python_venv("deerflow", [f"deerflow-kernel=={DEERFLOW}"], python=python_at_least(3, 12), with_uv=True)
    return run_host(venv / "bin" / "python", args, env, cwd, 240)


def test_deerflow_remembers_in_one_session_and_finds_it_in_the_next(tmp_path: Path) -> None:
    home, project, workspace = tmp_path / "home", tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    # DeerFlow finds config.yaml, extensions_config.json and skills/ in the folder it runs in.
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    # The docs' route: the project's extensions_config.json is the snippet, as printed.
    snippet = reme_command("deerflow", workspace)
    (project / "extensions_config.json").write_text(snippet, encoding="utf-8")
    assert install_skill("deerflow", home, cwd=project) == project / "skills" / "custom" / "reme-memory"

    listed = _python(env, project, "-c", LIST_TOOLS)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert sorted(listed.stdout.split()) == sorted(f"reme_{tool}" for tool in REME_TOOLS), listed.stdout

    with serve_chat_completions() as server:
        # The person's own model; titles and DeerFlow's own memory updates go to the side model.
        models = [
            {"name": name, "use": "langchain_openai:ChatOpenAI", "model": model, "base_url": server.url + "/v1"}
            for name, model in (("scripted", MODEL_ID), ("aux", AUX_MODEL))
        ]
        config = {
            "models": [{**model, "api_key": "none"} for model in models],
            "sandbox": {"use": "deerflow.sandbox.local:LocalSandboxProvider"},
            "title": {"model_name": "aux"},
            "memory": {"model_name": "aux"},
        }
        (project / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        for thread, prompt in (("thread-remember", REMEMBER_PROMPT), ("thread-recall", RECALL_PROMPT)):
            done = _python(env, project, "-c", CHAT, prompt, thread)
            assert done.returncode == 0, done.stdout + done.stderr
        assert_remembered_then_found(server.script)
        bodies = [body for body in request_bodies(server) if body.get("model") == MODEL_ID]

    offered = [tool["function"]["name"] for tool in bodies[0]["tools"]]
    assert sorted(name for name in offered if "reme" in name) == sorted(f"reme_{t}" for t in REME_TOOLS)
    # The recall session starts empty: the passphrase can only reach the model through `search`.
    recall = next(body for body in bodies if RECALL_PROMPT in json.dumps(body, ensure_ascii=False))
    assert PASSPHRASE not in json.dumps(recall, ensure_ascii=False)
    # DeerFlow lists the skills of skills/{public,custom} to the model in the system prompt.
    system = bodies[0]["messages"][0]["content"]
    assert "<available_skills>" in system and "<name>reme-memory</name>" in system, system[:3000]
    assert list((workspace / "daily").glob("*/test-passphrase.md")), "the note is not in the configured workspace"
