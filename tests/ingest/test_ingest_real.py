"""Logs the real hosts wrote (Pi 1.6.0, OpenCode 1.18.33, Hermes 0.19.0, driven by the scripted model), as they are."""

from __future__ import annotations

import datetime
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from reme_mcp.config import Settings
from reme_mcp.ingest.runner import Importer
from reme_mcp.ingest.sources import get_source
from reme_mcp.ops.memory import Memory
from reme_mcp.storage.workspace import Workspace
from tests.fixtures.ingest.layout import FIXTURES, PASSPHRASE


def _install(name: str, home: Path) -> None:
    if name == "pi":
        folder = home / ".pi" / "agent" / "sessions" / "--home-user-project--"
        folder.mkdir(parents=True)
        for n in (1, 2):
            shutil.copy(FIXTURES / f"pi-1.6.0.real-session{n}.jsonl", folder / f"session{n}.jsonl")
    elif name == "hermes":
        db = home / ".hermes" / "state.db"
        db.parent.mkdir(parents=True)
        conn = sqlite3.connect(db)
        conn.executescript((FIXTURES / "hermes-0.19.0.real.sql").read_text(encoding="utf-8"))
        conn.commit()
        conn.close()
    else:
        db = home / ".local" / "share" / "opencode" / "opencode.db"
        db.parent.mkdir(parents=True)
        conn = sqlite3.connect(db)
        conn.executescript((FIXTURES / "opencode-1.18.33.real.sql").read_text(encoding="utf-8"))
        conn.commit()
        conn.close()


def test_real_hermes_session_imports_without_its_system_prompt(tmp_path: Path) -> None:
    # Hermes ran without reme configured: the scripted model answered "OK." to the passphrase.
    _install("hermes", tmp_path / "home")
    importer = Importer(Workspace(tmp_path / "ws"), get_source("hermes"), env={"HOME": str(tmp_path / "home")})
    tally = importer.run_once()
    assert (tally.sessions, tally.messages) == (1, 2)
    [dialog] = (tmp_path / "ws" / "session" / "dialog" / "hermes").glob("*.jsonl")
    records = [json.loads(line) for line in dialog.read_text(encoding="utf-8").splitlines()]
    assert [(r["role"], r["content"][0]["text"]) for r in records] == [("user", PASSPHRASE), ("assistant", "OK.")]
    assert records[0]["metadata"]["project"] == "/home/user/project"
    assert importer.run_once().messages == 0
    memory = Memory(Settings(workspace=(tmp_path / "ws").resolve(), timezone=datetime.UTC))
    assert memory.search("蓝鲸-731").results[0].path == f"session/dialog/hermes/{dialog.name}"


@pytest.mark.parametrize("name", ["pi", "opencode"])
def test_real_host_sessions_import_once_and_are_searchable(tmp_path: Path, name: str) -> None:
    _install(name, tmp_path / "home")
    importer = Importer(Workspace(tmp_path / "ws"), get_source(name), env={"HOME": str(tmp_path / "home")})
    tally = importer.run_once()
    assert tally.sessions == 2 and tally.messages == 4  # the two prompts and the two replies
    assert tally.skipped["tool calls"] >= 2
    dialogs = sorted((tmp_path / "ws" / "session" / "dialog" / get_source(name).host).glob("*.jsonl"))
    records = [json.loads(line) for path in dialogs for line in path.read_text(encoding="utf-8").splitlines()]
    first_lines = [json.loads(path.read_text(encoding="utf-8").splitlines()[0]) for path in dialogs]
    assert all(record["role"] == "user" for record in first_lines)  # in the order they were said
    assert PASSPHRASE in [record["content"][0]["text"] for record in records]
    raw = "".join(path.read_text(encoding="utf-8") for path in dialogs)
    assert "mcp__reme__remember" not in raw and "reme-context" not in raw and "You are a coding assistant" not in raw
    assert importer.run_once().messages == 0
    memory = Memory(Settings(workspace=(tmp_path / "ws").resolve(), timezone=datetime.UTC))
    hits = memory.search("蓝鲸-731").results
    assert hits and hits[0].path.startswith(f"session/dialog/{get_source(name).host}/")
