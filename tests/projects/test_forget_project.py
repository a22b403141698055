"""Forgetting a whole project's memory, by its name, from anywhere: the other project's stays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reme_mcp.config import load_settings
from reme_mcp.ops.memories import Memories
from tests.projects.repos import repository


def _reme(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_forget_everything_of_one_project_by_name(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_")}
    reme_home = tmp_path / "reme"
    env |= {"REME_HOME": str(reme_home), "REME_INDEX_DIR": os.environ["REME_INDEX_DIR"], "REME_SEMANTIC": "off"}
    env |= {"REME_TRASH_DIR": str(tmp_path / "trash")}
    a = repository(tmp_path / "alpha", remote=tmp_path / "alpha.git")
    b = repository(tmp_path / "beta", remote=tmp_path / "beta.git")
    for folder, fact in ((a, "Alpha deploys with the orca pipeline."), (b, "Beta deploys with the orca pipeline too.")):
        settings = load_settings(
            projects_root=str(reme_home / "projects"), personal=str(reme_home / "personal"), project=str(folder)
        )
        Memories(settings).scoped().remember(fact)
    listed = _reme(tmp_path, env, "project", "list").stdout
    alpha = next(line.split("\t")[0] for line in listed.splitlines() if line.startswith("alpha-"))

    dry = _reme(tmp_path, env, "forget", "--in", alpha, "--everything", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert [p for p in json.loads(dry.stdout)["paths"] if p.startswith("daily/") and p.count("/") == 2]
    done = _reme(tmp_path, env, "forget", "--in", alpha, "--everything", "--yes")
    assert done.returncode == 0, done.stderr

    assert _reme(a, env, "search", "orca pipeline").stdout.startswith("No memory matched")
    assert "Beta deploys" in _reme(b, env, "search", "orca pipeline").stdout
    refused = _reme(tmp_path, env, "forget", "--in", "../beta", "--everything", "--yes")
    assert refused.returncode != 0 and "not known" in refused.stderr
