"""The MCP prompts through the official client over stdio against the real `reme-mcp` process, with
`reme-mcp tidy --dry-run` run as a person runs it: a cluster listed, handed to the "model" by the
`consolidate` prompt, consolidated with `remember` + `supersedes`, and then gone from the list."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.ops.test_consolidation import FILLER

pytestmark = pytest.mark.anyio

COPIES = {
    "daily/2026-04-01/queue.md": "We decided to move the job queue from RabbitMQ to NATS JetStream.",
    "daily/2026-04-02/queue-teammate.md": "Decided: the job queue moves from RabbitMQ to NATS JetStream.",
    "daily/2026-04-03/queue-again.md": "Job queue: we move from RabbitMQ to NATS JetStream (decided).",
}


def _workspace(root: Path) -> None:
    notes = {f"daily/2026-03-0{n + 1}/filler-{n}.md": text for n, text in enumerate(FILLER)} | COPIES
    for rel, body in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"---\nname: {Path(rel).stem}\n---\n{body}\n", encoding="utf-8")


def _tidy(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REME_TIMEZONE": "UTC"}
    argv = [sys.executable, "-m", "reme_mcp", "tidy", "--workspace", str(root), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)


def _text(result: Any) -> str:
    return "\n".join(message.content.text for message in result.messages)


async def test_prompts_are_listed_fetched_and_lead_to_one_superseding_note(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _workspace(root)
    listed = _tidy(root, "--dry-run")
    assert listed.returncode == 0, listed.stderr
    ids = re.findall(r"^(duplicates-[0-9a-f]{8}) \(duplicates\)", listed.stdout, re.MULTILINE)
    assert len(ids) == 1, listed.stdout
    for rel in COPIES:
        assert f"{root}/{rel}" in listed.stdout  # the real path, for a person to open
    refused = _tidy(root)
    assert refused.returncode != 0 and "--dry-run" in refused.stderr

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "reme_mcp", "--workspace", str(root)],
        env={**os.environ, "REME_TIMEZONE": "UTC"},
    )
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as stderr:
        async with Client(stdio_client(params, errlog=stderr), read_timeout_seconds=60) as client:
            assert client.server_capabilities.prompts is not None
            tools = await client.list_tools()
            assert sorted(t.name for t in tools.tools) == sorted(
                ["search", "read", "traverse", "daily_list", "remember"]
            )
            prompts = await client.list_prompts()
            assert sorted(p.name for p in prompts.prompts) == ["consolidate", "keep_session"]

            handed = _text(await client.get_prompt("consolidate", {"cluster": ids[0]}))
            assert all(body in handed for body in COPIES.values())
            assert "<reme-context" in handed  # the notes are data inside the boundary
            supersedes = json.loads(re.search(r"supersedes: (\[.*\])", handed).group(1))  # type: ignore[union-attr]
            assert sorted(supersedes) == sorted(COPIES)
            # Empty argument: the first cluster, the same one here.
            assert _text(await client.get_prompt("consolidate", {})) == handed
            with pytest.raises(Exception, match="tidy --dry-run"):
                await client.get_prompt("consolidate", {"cluster": "duplicates-00000000"})
            assert "remember" in _text(await client.get_prompt("keep_session", {}))

            # The model does what the prompt says.
            content = "Consolidated decision: the job queue runs on NATS JetStream, replacing RabbitMQ."
            arguments = {"content": content, "supersedes": supersedes, "request_id": f"consolidate-{ids[0]}"}
            written = await client.call_tool("remember", arguments)
            assert not written.is_error and written.structured_content is not None
            new = written.structured_content["path"]
            found = await client.call_tool("search", {"query": "job queue NATS JetStream RabbitMQ", "limit": 10})
            hits = found.structured_content["results"]  # type: ignore[index]
            assert hits[0]["path"] == new
            old = {hit["path"]: hit["superseded_by"] for hit in hits if hit["path"] in COPIES}
            assert old and all(by == [new] for by in old.values()), hits
            assert "nothing to consolidate" in _text(await client.get_prompt("consolidate", {}))

    for rel in COPIES:  # nothing deleted or edited
        assert COPIES[rel] in (root / rel).read_text(encoding="utf-8")
    again = _tidy(root, "--dry-run")
    assert again.returncode == 0 and "Nothing to consolidate" in again.stdout, again.stdout
