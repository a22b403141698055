"""The command line for people: search, reindex, doctor, config, --help everywhere, workspace choice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from reme_mcp.config import resolve_workspace
from reme_mcp.faces.cli import cli
from tests.conftest import make_reme_workspace


@pytest.mark.parametrize("command", [[], ["serve"], ["search"], ["reindex"], ["doctor"], ["config"]])
def test_help_everywhere(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output and "--workspace" in result.output


def test_search_reindex_doctor_on_a_reme_workspace(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    runner = CliRunner()
    found = runner.invoke(cli, ["--workspace", str(root), "search", "Go backend", "--json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.output)["results"][0]["path"] == "daily/2026-11-28/go-backend.md"
    rebuilt = runner.invoke(cli, ["reindex", "-w", str(root), "--quiet"])
    assert rebuilt.exit_code == 0 and "indexed 8 files" in rebuilt.output
    report = runner.invoke(cli, ["doctor", "-w", str(root), "--json"])
    data = json.loads(report.output)
    assert data["files_by_kind"] == {
        "daily": 2,
        "day_index": 1,
        "dialog": 1,
        "digest": 2,
        "resource": 2,
    }
    assert data["index"]["exists"] is True and data["index"]["stale_files"] == 0
    assert data["index"]["files_without_text"] == 1  # the PNG
    (root / "digest/wiki/new.md").write_text("new")
    data = json.loads(runner.invoke(cli, ["doctor", "-w", str(root), "--json"]).output)
    assert data["index"]["stale_files"] == 1


def test_search_takes_the_same_max_chars_as_the_tool(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    (root / "digest/wiki/long.md").write_text("# Long\n\n" + "filler words here. " * 100 + "walrus at the end.\n")
    runner = CliRunner()
    found = runner.invoke(cli, ["search", "walrus", "-w", str(root), "--max-chars", "120", "--json"])
    assert found.exit_code == 0, found.output
    data = json.loads(found.output)
    inner = "\n".join(data["results"][0]["snippet"].split("\n")[2:-1])
    assert data["truncated"] and "walrus" in inner and len(inner) <= 122  # the budget plus two ellipses
    refused = runner.invoke(cli, ["search", "Go", "-w", str(root), "--max-chars", "99"])
    assert refused.exit_code == 2 and "100<=x<=100000" in refused.output


def test_bad_input_is_one_line_on_stderr(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["search", "x", "-w", str(tmp_path), "--start-date", "nope"])
    assert result.exit_code == 1
    assert "YYYY-MM-DD" in result.output and "Traceback" not in result.output


def test_workspace_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_workspace(str(tmp_path / "flag"), {"REME_WORKSPACE": "/elsewhere"})[0] == tmp_path / "flag"
    assert resolve_workspace(None, {"REME_WORKSPACE": str(tmp_path / "env")})[0] == tmp_path / "env"
    monkeypatch.chdir(tmp_path)
    assert resolve_workspace(None, {}) == (tmp_path / ".reme", None)
    monkeypatch.chdir("/")
    path, notice = resolve_workspace(None, {})
    assert path == Path.home().resolve() / ".reme" and notice and "~" not in str(path)


def test_started_in_the_root_no_project_is_known_and_doctor_says_so(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_")} | {"HOME": str(tmp_path)}
    env |= {"REME_SEMANTIC": "off", "REME_INDEX_DIR": os.environ["REME_INDEX_DIR"]}
    proc = subprocess.run(
        [sys.executable, "-m", "reme_mcp", "doctor", "--json"], cwd="/", env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    personal = str(tmp_path / ".reme" / "personal")
    assert report["workspace"] == personal and report["project"]["workspace"] == personal
    assert report["project"].get("project") is None and "no project is known" in report["project"]["notice"]
    assert not (tmp_path / ".reme").exists()  # nothing created until the first write


def test_http_refuses_non_loopback_without_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_MCP_TOKEN")}
    proc = subprocess.run(
        [sys.executable, "-m", "reme_mcp", "serve", "--transport", "http", "--host", "0.0.0.0", "-w", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "needs a bearer token" in proc.stderr and "Traceback" not in proc.stderr
