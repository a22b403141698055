"""reme's MCP prompts through a real host that shows them as commands: Claude Code lists a server's
prompts as slash commands (`/mcp__reme__consolidate ID`). The person runs the command headless
(`claude -p`); Claude Code fetches the prompt from the real `reme-mcp` and hands its text to a
scripted Anthropic model on 127.0.0.1, which does what the prompt says: one `remember` whose
`supersedes` names the cluster's notes. The consolidated note then supersedes its cluster."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hosts.anthropic import MODEL_ID, serve_anthropic
from tests.hosts.script import Call, Request, Say, Script, reme_tools
from tests.hosts.test_host_claude_code import _claude, _env
from tests.ops.test_consolidation import FILLER

pytestmark = [pytest.mark.node, pytest.mark.integration]

COPIES = {
    "daily/2026-04-01/queue.md": "We decided to move the job queue from RabbitMQ to NATS JetStream.",
    "daily/2026-04-02/queue-teammate.md": "Decided: the job queue moves from RabbitMQ to NATS JetStream.",
    "daily/2026-04-03/queue-again.md": "Job queue: we move from RabbitMQ to NATS JetStream (decided).",
}
CONSOLIDATED = "Consolidated decision: the job queue runs on NATS JetStream; RabbitMQ is retired."


@dataclass
class FollowsThePrompt(Script):
    """A model that, handed reme's consolidate prompt, calls `remember` with the arguments it names."""

    def next_step(self, offered: list[str], user_text: str, tool_results: list[str]) -> Call | Say:
        if "Consolidate this cluster of reme memory" not in user_text:
            return super().next_step(offered, user_text, tool_results)
        with self.lock:
            self.requests.append(Request(list(offered), user_text, list(tool_results)))
        if tool_results:
            return Say("Consolidated. " + tool_results[-1][:200])
        named = dict(re.findall(r"^  (supersedes|scope|request_id): (.*)$", user_text, re.MULTILINE))
        arguments = {key: json.loads(value) for key, value in named.items()}
        return Call(reme_tools(offered)["remember"], {"content": CONSOLIDATED, **arguments}, "call_consolidate")


def _workspace(root: Path) -> None:
    notes = {f"daily/2026-03-0{n + 1}/filler-{n}.md": text for n, text in enumerate(FILLER)} | COPIES
    for rel, body in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"---\nname: {Path(rel).stem}\n---\n{body}\n", encoding="utf-8")


def test_claude_code_runs_the_consolidate_prompt_as_a_slash_command(tmp_path: Path) -> None:
    project, workspace = tmp_path / "project", tmp_path / "workspace"
    project.mkdir()
    _workspace(workspace)
    listed = subprocess.run(
        [sys.executable, "-m", "reme_mcp", "tidy", "--dry-run", "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    cluster = re.findall(r"^(duplicates-[0-9a-f]{8}) ", listed.stdout, re.MULTILINE)
    assert len(cluster) == 1, listed.stdout

    with serve_anthropic() as server:
        server.script = FollowsThePrompt()
        env = _env(tmp_path / "home", server.url)
        command = [sys.executable, "-m", "reme_mcp", "--workspace", str(workspace)]
        _claude(env, project, "mcp", "add", "--scope", "user", "reme", "--", *command)
        _claude(
            env,
            project,
            "-p",
            "--model",
            MODEL_ID,
            "--allowedTools",
            "mcp__reme",
            "--",
            f"/mcp__reme__consolidate {cluster[0]}",
        )
        handed = [r for r in server.script.requests if "Consolidate this cluster of reme memory" in r.user_text]

    assert handed, [r.user_text[:300] for r in server.script.requests]
    assert all(body in handed[0].user_text for body in COPIES.values())
    assert handed[-1].tool_results and "error" not in handed[-1].tool_results[0].lower(), handed[-1].tool_results
    written = [p for p in workspace.glob("daily/*/*.md") if CONSOLIDATED in p.read_text(encoding="utf-8")]
    assert len(written) == 1, "no consolidated note was written"
    front = written[0].read_text(encoding="utf-8").split("---")[1]
    assert all(f"[[{rel}]]" in front for rel in COPIES), front
    for rel, body in COPIES.items():  # kept as they were
        assert (workspace / rel).read_text(encoding="utf-8") == f"---\nname: {Path(rel).stem}\n---\n{body}\n"
    again = subprocess.run(
        [sys.executable, "-m", "reme_mcp", "tidy", "--dry-run", "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "Nothing to consolidate" in again.stdout, again.stdout
