"""Helpers for the forgetting tests: a workspace with notes, a person's text and an ingested
session; real `reme-mcp` processes; hashes of every file of the workspace, index and trash."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.ingest.layout import LAYOUTS

DAY = "2026-11-28"
SECRET_FACT = "The vault unlock phrase for staging is quokka-meridian-4471."
KEPT_FACT = "Standups moved to 9:30 on Tuesdays."
SESSION_ID = "1b7e0c52-8f0e-4d0b-9a51-3c2d6f1e9a01"  # the claude-code fixture's session
SESSION_WORD = "PostgreSQL"  # said in that session; ASCII, so its term is plain bytes in the index files
PERSON_LINE = "My own line in the day index: keep it exactly.\n"


class Setup:
    """One test's folders: HOME (a host's logs), the workspace, the index home and the trash."""

    def __init__(self, tmp: Path, semantic: str = "off") -> None:
        self.home, self.ws = tmp / "home", tmp / "ws"
        self.index, self.trash = tmp / "index-home", tmp / "trash"
        self.semantic = semantic

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "REME_"))}
        env.update(
            HOME=str(self.home),
            REME_TIMEZONE="UTC",
            REME_INDEX_DIR=str(self.index),
            REME_TRASH_DIR=str(self.trash),
            REME_SEMANTIC=self.semantic,
        )
        if "REME_MODELS_DIR" in os.environ:
            env["REME_MODELS_DIR"] = os.environ["REME_MODELS_DIR"]
        return env

    def reme(self, *args: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
        """`reme-mcp ARGS -w WS` as a person runs it (stdin not a terminal unless given)."""
        return subprocess.run(
            [sys.executable, "-m", "reme_mcp", *args, "-w", str(self.ws)],
            env=self.env(),
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    def ok(self, *args: str) -> str:
        done = self.reme(*args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def build(self) -> dict[str, str]:
        """Notes (one to forget, one that links to it, one kept), a person's line in the day index,
        and an imported claude-code session; the index brought up to date. Returns the paths."""
        LAYOUTS["claude-code"].install(self.home)
        self.ok("ingest", "backfill", "claude-code")
        secret = self.remember(SECRET_FACT, "vault-phrase")
        kept = self.remember(KEPT_FACT, "standups")
        linker = self.remember(f"Where the phrase lives: see [[{secret}]].", "pointer", day="2026-11-29")
        day_index = self.ws / "daily" / f"{DAY}.md"
        text = day_index.read_text(encoding="utf-8")
        front_end = text.index("\n---\n", 3) + len("\n---\n")
        day_index.write_text(text[:front_end] + PERSON_LINE + text[front_end:], encoding="utf-8")
        self.ok("search", "anything", "--wait", "60")  # the index (and vectors) up to date
        dialogs = sorted((self.ws / "session" / "dialog" / "claude_code").glob("*.jsonl"))
        assert len(dialogs) == 1
        return {
            "secret": secret,
            "kept": kept,
            "linker": linker,
            "dialog": dialogs[0].relative_to(self.ws).as_posix(),
        }

    def remember(self, content: str, name: str, day: str = DAY) -> str:
        """A note written by `remember` in a real server process (the MCP tool, over stdio)."""
        code = (
            "import anyio, sys, json\n"
            "from mcp import Client, StdioServerParameters\n"
            "async def main():\n"
            "    params = StdioServerParameters(command=sys.executable, args=['-m', 'reme_mcp', '-w', sys.argv[1]])\n"
            "    async with Client(params, read_timeout_seconds=60) as c:\n"
            "        r = await c.call_tool('remember', json.loads(sys.argv[2]))\n"
            "        assert not r.is_error, r.content\n"
            "        print(r.structured_content['path'])\n"
            "anyio.run(main)\n"
        )
        args = {"content": content, "name": name, "date": day, "request_id": f"req-{name}"}
        import json

        done = subprocess.run(
            [sys.executable, "-c", code, str(self.ws), json.dumps(args)],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]


def hashes(*roots: Path) -> dict[str, str]:
    """Every file under these folders, by path, with its SHA-256 (lock files left out: taking a
    lock is no change, and a lock file's bytes are empty anyway)."""
    found: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def holding(root: Path, text: str) -> list[str]:
    """Files under `root` whose bytes hold `text`, in any case: the index keeps a word's term
    lower-cased in its term dictionary (and may keep stored text compressed, which the term
    check covers: every indexed word of a chunk is a term)."""
    needle = text.lower().encode("utf-8")
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes().lower())


def outside_block(day_index: str) -> str:
    """A day index's text with its machine-managed block cut out: the person's part."""
    start, end = day_index.index("<!-- notes:auto -->"), day_index.index("<!-- /notes:auto -->")
    body_start = day_index.index("\n---\n", 3) + len("\n---\n")
    return day_index[body_start:start] + day_index[end:]
