"""A real `reme-mcp view --no-open --port 0` process and a workspace to show, for the page's tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from queue import Empty, Queue

from tests.processes import stop

URL_RE = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_\-]+)$")


@dataclass
class ViewProcess:
    proc: subprocess.Popen[str]
    url: str  # the one-time link, as printed
    port: int
    token: str
    stderr: list[str]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _lines(stream: object, into: Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line.rstrip("\n"))


@contextmanager
def view_process(ws: Path, *args: str) -> Iterator[ViewProcess]:
    """Starts the page on a free port and yields it once it printed its link."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "view", "-w", str(ws), "--no-open", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "REME_SEMANTIC": "off"},
    )
    out: Queue[str] = Queue()
    err: Queue[str] = Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True).start()
    threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True).start()
    try:
        try:
            url = out.get(timeout=60)
        except Empty:
            raise AssertionError("reme-mcp view printed no link within 60 s") from None
        found = URL_RE.match(url)
        assert found, f"not a loopback link with a token: {url!r}"
        yield ViewProcess(proc, url, int(found.group(1)), found.group(2), list(err.queue))
    finally:
        stop(proc)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def message(text: str, when: str, role: str = "user") -> str:
    return json.dumps(
        {
            "id": f"m{time.monotonic_ns()}",
            "name": role,
            "role": role,
            "content": [{"type": "text", "text": text}],
            "created_at": when,
        }
    )


# The notes of a fact that changed twice: v1 <- v2 <- v3.
CHAIN = (
    "daily/2026-11-20/port-v1.md",
    "daily/2026-11-25/port-v2.md",
    "daily/2026-12-01/port-v3.md",
)


def seed(root: Path, hostile_port: int | None = None) -> Path:
    """A workspace of three days, a supersede chain, two hosts' sessions and, with `hostile_port`,
    a note whose every payload would reach that port if anything in it ran or loaded."""
    write(root, CHAIN[0], "---\nname: port-v1\ndescription: The API port\n---\nThe billing API listens on port 8080.\n")
    write(
        root,
        CHAIN[1],
        f"---\nname: port-v2\ndescription: The API port, moved\nsupersedes: ['[[{CHAIN[0]}]]']\n---\n"
        "The billing API listens on port 9090 since the move.\n",
    )
    write(
        root,
        CHAIN[2],
        f"---\nname: port-v3\ndescription: The API port, final\nsupersedes: ['[[{CHAIN[1]}]]']\n"
        "session_id: s-codex-1\n---\nThe billing API listens on port 7070 after the cut-over.\n",
    )
    write(
        root,
        "daily/2026-12-01/deploy-window.md",
        "---\nname: deploy-window\ndescription: When deploys happen\n---\n"
        "Deploys run on Tuesdays; see [[digest/wiki/deploy.md]].\n",
    )
    write(
        root,
        "daily/2026-11-25/grafana.md",
        "---\nname: grafana\ndescription: Dashboards\n---\nThe billing dashboards live in Grafana under Payments.\n",
    )
    write(root, "digest/wiki/deploy.md", "---\nname: deploy\n---\n# Deploy\n\nBilling deploys go through staging.\n")
    write(
        root,
        "session/dialog/codex/s-codex-1.jsonl",
        message("Which port does billing use now?", "2026-12-01T09:00:00+00:00")
        + "\n"
        + message("Port 7070 after the cut-over.", "2026-12-01T09:00:05+00:00", "assistant")
        + "\n",
    )
    write(
        root,
        "session/dialog/claude-code/s-claude-1.jsonl",
        message("Set up the billing dashboards", "2026-11-25T15:00:00+00:00") + "\n",
    )
    if hostile_port is not None:
        write(root, "daily/2026-11-30/hostile.md", hostile_note(hostile_port))
    return root


def hostile_note(port: int) -> str:
    target = f"http://127.0.0.1:{port}"
    return (
        f"---\nname: hostile\ndescription: <img src={target}/desc onerror=alert(1)>\n---\n"
        f"<script>alert('script'); fetch('{target}/script')</script>\n\n"
        f'<img src="{target}/img" onerror="alert(\'img\')">\n\n'
        f'<iframe src="{target}/frame"></iframe>\n\n'
        f"[click me](javascript:alert('link')) and [data](data:text/html,<script>alert(1)</script>)\n\n"
        f"![tracker]({target}/markdown-image)\n\n"
        f'<a href="{target}/auto" onmouseover="alert(1)">raw anchor</a>\n\n'
        f"<style>body {{ background: url({target}/style) }}</style>\n\n" + "hugeline" * 40_000 + "\n"
    )
