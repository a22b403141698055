"""DeerFlow end to end: the project's `extensions_config.json` is what `reme-mcp config deerflow`
prints, `config.yaml` names a scripted OpenAI-compatible model on 127.0.0.1, and two sessions
call `remember` and then `search`, by both of DeerFlow's routes: its embedded client
(`deerflow.client.DeerFlowClient`, one process and thread per session) and its LangGraph
server (the `lead_agent` graph the web UI talks to, one new thread per session)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from tests.hosts.acceptance import assert_remembered_then_found, install_skill, reme_command, run_host
from tests.hosts.cache import python_at_least, python_venv
from tests.hosts.chat_completions import AUX_MODEL, MODEL_ID, request_bodies, serve_chat_completions
from tests.hosts.script import PASSPHRASE, RECALL_PROMPT, REME_TOOLS, REMEMBER_PROMPT
from tests.processes import stop

DEERFLOW = "0.1.7"

CHAT = "import sys\nfrom deerflow.client import DeerFlowClient\nprint(DeerFlowClient().chat(sys.argv[1], thread_id=sys.argv[2]))"
"""One turn in a new thread, as DeerFlow's README shows its embedded client."""

LIST_TOOLS = (
    "import asyncio\nfrom deerflow.mcp.tools import get_mcp_tools\n"
    "for tool in asyncio.run(get_mcp_tools()):\n    print(tool.name)"
)
"""DeerFlow's own MCP loader, the one its agents use: every tool of every enabled server."""

LANGGRAPH_JSON = {
    "dependencies": ["."],
    "graphs": {"lead_agent": "deerflow.agents:make_lead_agent"},
    # The langgraph.json deerflow-kernel 0.1.7 writes names deerflow.agents.checkpointer, which
    # the package does not have; the checkpointer lives in deerflow.runtime.
    "checkpointer": {"path": "deerflow.runtime.checkpointer.async_provider.make_checkpointer"},
}


def _venv() -> Path:
    # deerflow-kernel needs Python >= 3.12; its venv is about 1.5 GB (langchain, langgraph, ...).
    return python_venv("deerflow", [f"deerflow-kernel=={DEERFLOW}"], python=python_at_least(3, 12), with_uv=True)


def _python(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_host(_venv() / "bin" / "python", args, env, cwd, 240)


def _project(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A DeerFlow project as docs/clients.md sets it up: the printed extensions_config.json and
    the skill; returns the project, the workspace and the environment DeerFlow runs in."""
    home, project, workspace = tmp_path / "home", tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    # DeerFlow finds config.yaml, extensions_config.json and skills/ in the folder it runs in.
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    (project / "extensions_config.json").write_text(reme_command("deerflow", workspace), encoding="utf-8")
    assert install_skill("deerflow", home, cwd=project) == project / "skills" / "custom" / "reme-memory"
    return project, workspace, env


def _config(project: Path, base_url: str) -> None:
    """The person's own model in config.yaml; titles and DeerFlow's own memory updates go to
    the side model."""
    models = [
        {"name": name, "use": "langchain_openai:ChatOpenAI", "model": model, "base_url": base_url, "api_key": "none"}
        for name, model in (("scripted", MODEL_ID), ("aux", AUX_MODEL))
    ]
    config = {
        "models": models,
        "sandbox": {"use": "deerflow.sandbox.local:LocalSandboxProvider"},
        "title": {"model_name": "aux"},
        "memory": {"model_name": "aux"},
    }
    (project / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _assert_the_model_saw_reme(bodies: list[dict[str, Any]], workspace: Path) -> None:
    offered = [tool["function"]["name"] for tool in bodies[0]["tools"]]
    assert sorted(name for name in offered if "reme" in name) == sorted(f"reme_{t}" for t in REME_TOOLS)
    # The recall session starts empty: the passphrase can only reach the model through `search`.
    recall = next(body for body in bodies if RECALL_PROMPT in json.dumps(body, ensure_ascii=False))
    assert PASSPHRASE not in json.dumps(recall, ensure_ascii=False)
    # DeerFlow lists the skills of skills/{public,custom} to the model in the system prompt.
    system = bodies[0]["messages"][0]["content"]
    assert "<available_skills>" in system and "<name>reme-memory</name>" in system, system[:3000]
    assert "<location>/mnt/skills/custom/reme-memory/SKILL.md</location>" in system, system[:3000]
    assert list((workspace / "daily").glob("*/test-passphrase.md")), "the note is not in the configured workspace"


def test_deerflow_embedded_client_remembers_then_finds(tmp_path: Path) -> None:
    project, workspace, env = _project(tmp_path)
    listed = _python(env, project, "-c", LIST_TOOLS)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert sorted(listed.stdout.split()) == sorted(f"reme_{tool}" for tool in REME_TOOLS), listed.stdout

    with serve_chat_completions() as server:
        _config(project, server.url + "/v1")
        for thread, prompt in (("thread-remember", REMEMBER_PROMPT), ("thread-recall", RECALL_PROMPT)):
            done = _python(env, project, "-c", CHAT, prompt, thread)
            assert done.returncode == 0, done.stdout + done.stderr
        assert_remembered_then_found(server.script)
        bodies = [body for body in request_bodies(server) if body.get("model") == MODEL_ID]
    _assert_the_model_saw_reme(bodies, workspace)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=180) as answer:
        return json.loads(answer.read())


@contextmanager
def _langgraph_server(project: Path, env: dict[str, str]) -> Iterator[str]:
    """DeerFlow's graph served by `langgraph dev` in the project, as `deerflow-kernel run-runtime`
    would serve it if it passed --allow-blocking (without it every run fails on DeerFlow's own
    blocking calls); yields the server's URL."""
    (project / "langgraph.json").write_text(json.dumps(LANGGRAPH_JSON), encoding="utf-8")
    port = _free_port()
    argv = [str(_venv() / "bin" / "langgraph"), "dev", "--port", str(port), "--no-browser", "--no-reload"]
    log = project / "langgraph.log"
    # As docs/clients.md starts it: without the opt-out, `langgraph dev` posts its analytics from a
    # thread whose name lookup (glibc's getaddrinfo reads the environment) races the main thread's
    # setenv of the server's settings; glibc frees the old environment under the reader, and the
    # server can die of SIGSEGV in getenv before it serves.
    server_env = {**env, "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    with log.open("w") as sink:
        server = subprocess.Popen(
            [*argv, "--allow-blocking"], cwd=project, env=server_env, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                assert server.poll() is None, log.read_text(encoding="utf-8")[-3000:]
                assert time.monotonic() < deadline, log.read_text(encoding="utf-8")[-3000:]
                try:
                    with urllib.request.urlopen(url + "/ok", timeout=2):
                        break
                except (urllib.error.URLError, OSError):
                    time.sleep(0.3)
            yield url
        finally:
            stop(server, signal.SIGINT, timeout=20)


def test_deerflow_langgraph_server_remembers_then_finds(tmp_path: Path) -> None:
    project, workspace, env = _project(tmp_path)
    with serve_chat_completions() as server:
        _config(project, server.url + "/v1")
        with _langgraph_server(project, env) as url:
            for prompt in (REMEMBER_PROMPT, RECALL_PROMPT):
                thread = _post(url + "/threads", {})["thread_id"]
                run = {"assistant_id": "lead_agent", "input": {"messages": [{"role": "user", "content": prompt}]}}
                # DeerFlow's middleware needs the thread in the run's context (the web UI sends it).
                state = _post(f"{url}/threads/{thread}/runs/wait", {**run, "context": {"thread_id": thread}})
                assert "__error__" not in state, state
        assert_remembered_then_found(server.script)
        bodies = [body for body in request_bodies(server) if body.get("model") == MODEL_ID]
    _assert_the_model_saw_reme(bodies, workspace)
