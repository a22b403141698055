"""Team sync per workspace: a project's memory goes to that project's remote, and the personal
memory never does, through `reme-mcp sync` and real bare repositories on disk."""

from __future__ import annotations

from pathlib import Path

from reme_mcp.config import load_settings
from reme_mcp.ops.workspace_memories import WorkspaceMemories
from tests.projects.repos import git, reme, repository, user_env


def test_a_personal_note_never_reaches_the_projects_remote(tmp_path: Path) -> None:
    reme_home = tmp_path / "reme"
    env = user_env(reme_home)
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    app = repository(tmp_path / "app", remote=tmp_path / "app.git")
    memory_remote = tmp_path / "app-memory.git"
    git(tmp_path, "init", "-q", "--bare", str(memory_remote))
    personal_remote = tmp_path / "me.git"
    git(tmp_path, "init", "-q", "--bare", str(personal_remote))

    view = WorkspaceMemories(
        load_settings(projects_root=str(reme_home / "projects"), personal=str(reme_home / "personal"), project=str(app))
    ).scoped()
    view.remember("The app deploys with Helm chart app-7.")
    view.remember("The person signs commits with the key on the yubikey.", scope="personal")

    done = reme(app / "src", env, "sync", "--init", str(memory_remote))
    assert done.returncode == 0, done.stderr
    done = reme(app, env, "sync", "--personal", "--init", str(personal_remote))
    assert done.returncode == 0, done.stderr

    project_copy = tmp_path / "project-copy"
    git(tmp_path, "clone", "-q", str(memory_remote), str(project_copy))
    shared = "".join(p.read_text() for p in project_copy.rglob("*.md"))
    assert "Helm chart app-7" in shared
    assert "yubikey" not in shared
    assert not list(project_copy.rglob(".reme-mcp-root")) and not (project_copy / "metadata").exists()

    personal_copy = tmp_path / "personal-copy"
    git(tmp_path, "clone", "-q", str(personal_remote), str(personal_copy))
    mine = "".join(p.read_text() for p in personal_copy.rglob("*.md"))
    assert "yubikey" in mine and "Helm chart" not in mine
    assert not (personal_copy / ".reme-mcp-root").exists()
