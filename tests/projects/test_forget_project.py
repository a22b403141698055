"""Forgetting a whole project's memory, by its name, from anywhere: the other project's stays."""

from __future__ import annotations

import json
from pathlib import Path

from reme_mcp.config import load_settings
from reme_mcp.ops.workspace_memories import WorkspaceMemories
from tests.projects.repos import reme, repository, user_env


def test_forget_everything_of_one_project_by_name(tmp_path: Path) -> None:
    reme_home = tmp_path / "reme"
    env = user_env(reme_home)
    env |= {"REME_TRASH_DIR": str(tmp_path / "trash")}
    a = repository(tmp_path / "alpha", remote=tmp_path / "alpha.git")
    b = repository(tmp_path / "beta", remote=tmp_path / "beta.git")
    for folder, fact in ((a, "Alpha deploys with the orca pipeline."), (b, "Beta deploys with the orca pipeline too.")):
        settings = load_settings(
            projects_root=str(reme_home / "projects"), personal=str(reme_home / "personal"), project=str(folder)
        )
        WorkspaceMemories(settings).scoped().remember(fact)
    listed = reme(tmp_path, env, "project", "list").stdout
    alpha = next(line.split("\t")[0] for line in listed.splitlines() if line.startswith("alpha-"))

    dry = reme(tmp_path, env, "forget", "--in", alpha, "--everything", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert [p for p in json.loads(dry.stdout)["paths"] if p.startswith("daily/") and p.count("/") == 2]
    done = reme(tmp_path, env, "forget", "--in", alpha, "--everything", "--yes")
    assert done.returncode == 0, done.stderr

    assert reme(a, env, "search", "orca pipeline").stdout.startswith("No memory matched")
    assert "Beta deploys" in reme(b, env, "search", "orca pipeline").stdout
    refused = reme(tmp_path, env, "forget", "--in", "../beta", "--everything", "--yes")
    assert refused.returncode != 0 and "not known" in refused.stderr
