"""`reme-mcp ingest ...` and `reme-mcp --ingest` as people and hosts run them: real processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.fixtures.ingest.layout import LAYOUTS, PASSPHRASE

pytestmark = pytest.mark.anyio


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "HERMES_", "REME_"))}
    return {**env, "HOME": str(home), "REME_TIMEZONE": "UTC"}


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], env=_env(home), capture_output=True, text=True, timeout=120
    )


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*")) if root.exists() else []


def test_backfill_dry_run_then_real_then_rerun(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    log = LAYOUTS["claude-code"].install(home)
    source_before = _tree(home)
    dry = _run(home, "ingest", "backfill", "claude-code", "-w", str(ws), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would import 1 session(s), 5 message(s), 2026-11-28 to 2026-11-28" in dry.stdout
    assert f"{log.stat().st_size} bytes read" in dry.stdout
    assert not ws.exists() and _tree(home) == source_before  # nothing written anywhere, cursors included
    real = _run(home, "ingest", "backfill", "claude-code", "-w", str(ws))
    assert real.returncode == 0 and "imported 1 session(s), 5 message(s)" in real.stdout
    again = _run(home, "ingest", "backfill", "claude-code", "-w", str(ws))
    assert "imported 0 session(s), 0 message(s)" in again.stdout
    found = _run(home, "search", "蓝鲸-731", "-w", str(ws), "--json")
    assert json.loads(found.stdout)["results"][0]["path"].startswith("session/dialog/claude_code/")
    doctor = _run(home, "doctor", "-w", str(ws), "--json")
    assert json.loads(doctor.stdout)["ingest"]["claude-code"]["tracked"] == 1


def test_a_split_emoji_in_a_log_is_kept_as_its_escape_and_the_dialog_stays_utf8(tmp_path: Path) -> None:
    """A host logged half of an emoji (a JSON escape of a lone surrogate): the imported dialog keeps
    the escape as the log had it, the file stays UTF-8 (so ReMe and any reader can read it), and
    the message is found and shown with U+FFFD in its place."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    layout = LAYOUTS["claude-code"]
    log = layout.install(home)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(layout.line("The deploy key rotates on Mondays zqhalf HALF ok", 1).replace("HALF", "\\ud83d"))
    real = _run(home, "ingest", "backfill", "claude-code", "-w", str(ws))
    assert real.returncode == 0 and "Traceback" not in real.stderr, real.stderr
    data = b"".join(p.read_bytes() for p in (ws / "session" / "dialog").rglob("*.jsonl"))
    data.decode("utf-8")  # no byte a UTF-8 reader refuses
    assert b"zqhalf \\ud83d ok" in data
    found = _run(home, "search", "zqhalf", "-w", str(ws), "--json")
    assert found.returncode == 0, found.stderr
    assert "zqhalf \ufffd ok" in json.loads(found.stdout)["results"][0]["snippet"]


def test_since_and_project_filters(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    LAYOUTS["codex"].install(home)
    later = _run(home, "ingest", "backfill", "codex", "-w", str(ws), "--since", "2026-11-29", "--dry-run")
    assert "would import 0 session(s)" in later.stdout
    other = _run(home, "ingest", "backfill", "codex", "-w", str(ws), "--project", "/somewhere/else")
    assert "imported 0 session(s)" in other.stdout
    mine = _run(home, "ingest", "backfill", "codex", "-w", str(ws), "--project", "/home/user/projects")
    assert "imported 1 session(s), 5 message(s)" in mine.stdout
    bad = _run(home, "ingest", "backfill", "codex", "-w", str(ws), "--since", "yesterday")
    assert bad.returncode != 0 and "use YYYY-MM-DD" in bad.stderr


def test_sources_and_bad_names_are_one_line(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    LAYOUTS["pi"].install(home)
    listing = _run(home, "ingest", "sources", "-w", str(ws))
    assert listing.returncode == 0
    assert "pi: " in listing.stdout and "available: 1 session(s), 5 message(s)" in listing.stdout
    assert "hermes: no hermes database" in listing.stdout.replace("Hermes Agent ", "hermes ")
    unknown = _run(home, "ingest", "backfill", "nosuchhost", "-w", str(ws))
    assert unknown.returncode != 0 and "known sources are claude-code" in unknown.stderr
    missing = _run(home, "ingest", "backfill", "codex", "-w", str(ws))
    assert missing.returncode != 0 and len(missing.stderr.strip().splitlines()) == 1


def test_watch_follows_stops_on_sigterm_and_resumes_from_its_cursors(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    layout = LAYOUTS["claude-code"]
    log = layout.install(home)

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "reme_mcp", "ingest", "watch", "claude-code", "-w", str(ws), "--interval", "0.1"],
            env=_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def lines() -> list[str]:
        return [
            line for path in ws.rglob("session/dialog/claude_code/*.jsonl") for line in path.read_text().splitlines()
        ]

    proc = start()
    try:
        _wait(lambda: len(lines()) == 5)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(layout.line("Appended while watching.", 1))
        _wait(lambda: any("Appended while watching." in line for line in lines()))
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    with log.open("a", encoding="utf-8") as fh:
        fh.write(layout.line("Appended while stopped.", 2))
    proc = start()
    try:
        _wait(lambda: any("Appended while stopped." in line for line in lines()))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    assert len(lines()) == 7  # resumed from the cursor: nothing twice


@pytest.mark.parametrize("asked_by", ["REME_INGEST", "--ingest"])
async def test_server_follows_a_host_in_the_background_without_delaying_tools(tmp_path: Path, asked_by: str) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    layout = LAYOUTS["pi"]
    log = layout.install(home)
    env = {**_env(home), "REME_INGEST": "pi"} if asked_by == "REME_INGEST" else _env(home)
    flag = ["--ingest", "pi"] if asked_by == "--ingest" else []
    params = StdioServerParameters(command=sys.executable, args=["-m", "reme_mcp", *flag, "-w", str(ws)], env=env)
    async with Client(params, read_timeout_seconds=60) as client:
        tools = await client.list_tools()
        assert {tool.name for tool in tools.tools} >= {"search", "remember"}
        deadline = time.monotonic() + 20
        hits: list[dict[str, object]] = []
        while time.monotonic() < deadline and not hits:
            result = await client.call_tool("search", {"query": "蓝鲸-731"})
            hits = result.structured_content["results"]  # type: ignore[index]
        assert hits and str(hits[0]["path"]).startswith("session/dialog/pi/")
        with log.open("a", encoding="utf-8") as fh:
            fh.write(layout.line("The staging cluster is called heron.", 3))
        hits = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not hits:
            result = await client.call_tool("search", {"query": "heron staging cluster"})
            hits = result.structured_content["results"]  # type: ignore[index]
        assert hits
    assert PASSPHRASE in "".join(p.read_text() for p in ws.rglob("session/dialog/pi/*.jsonl"))


def _wait(condition: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def test_a_long_history_shared_out_to_workers_imports_what_one_process_does(tmp_path: Path) -> None:
    """Past WORTH_SHARING logs a backfill can use worker processes: same dialogs, cursors kept, a rerun adds nothing."""
    from reme_mcp.ingest.parallel_backfill import WORTH_SHARING
    from reme_mcp.ingest.runner import Importer
    from reme_mcp.ingest.sources import get_source
    from reme_mcp.storage.workspace import Workspace

    home = tmp_path / "home"
    layout = LAYOUTS["claude-code"]
    first = layout.install(home)
    template = first.read_text(encoding="utf-8")
    for k in range(WORTH_SHARING + 60):
        log = first.parent / f"copy-{k:04d}.jsonl"
        log.write_text(template.replace("1b7e0c52", f"{k:08x}") + layout.line(f"Copy {k} fact zqcopy{k}.", k % 60))
    shared, alone = tmp_path / "shared", tmp_path / "alone"
    logs = home / ".claude" / "projects"
    two = Importer(Workspace(shared), get_source("claude-code"), logs).run_once(processes=2)
    tally = Importer(Workspace(alone), get_source("claude-code"), logs).run_once(processes=1)
    assert two.line() == tally.line()
    assert tally.sessions == WORTH_SHARING + 61
    files = sorted(p.relative_to(shared) for p in (shared / "session").rglob("*.jsonl"))
    assert files == sorted(p.relative_to(alone) for p in (alone / "session").rglob("*.jsonl"))
    assert all((shared / f).read_bytes() == (alone / f).read_bytes() for f in files)
    again = _run(home, "ingest", "backfill", "claude-code", "-q", "-w", str(shared))
    assert "imported 0 session(s), 0 message(s)" in again.stdout, again.stdout
    sources = _run(home, "ingest", "sources", "-w", str(shared))
    assert f"imported: {WORTH_SHARING + 61} session(s)" in sources.stdout, sources.stdout


async def test_a_configured_host_starts_the_follower_with_only_home_and_path(tmp_path: Path) -> None:
    """`reme-mcp config HOST --ingest SOURCE` puts the source in the command: hosts that pass only a few
    variables (OpenClaw, Hermes) still start the follower."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    LAYOUTS["pi"].install(home)
    printed = _run(home, "config", "claude-code", "--ingest", "pi", "-w", str(ws))
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["reme"]
    assert entry["args"][-2:] == ["--ingest", "pi"]
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    async with Client(params, read_timeout_seconds=60) as client:
        hits: list[dict[str, object]] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not hits:
            result = await client.call_tool("search", {"query": "蓝鲸-731"})
            hits = result.structured_content["results"]  # type: ignore[index]
        assert hits and str(hits[0]["path"]).startswith("session/dialog/pi/")
