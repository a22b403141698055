"""Real git repositories on disk for the project tests: a bare remote, clones, worktrees."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def repository(folder: Path, remote: Path | None = None) -> Path:
    """A work tree with one commit; with `remote`, a bare repository it is pushed to as origin."""
    folder.mkdir(parents=True)
    git(folder, "init", "-q")
    (folder / "README.md").write_text(f"# {folder.name}\n")
    (folder / "src").mkdir()
    (folder / "src" / "main.py").write_text("print('hi')\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    if remote is not None:
        git(folder.parent, "init", "-q", "--bare", str(remote))
        git(folder, "remote", "add", "origin", str(remote))
        git(folder, "push", "-q", "origin", "main")
    return folder


def clone(remote: Path, folder: Path) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    git(folder.parent, "clone", "-q", str(remote), str(folder))
    return folder


def worktree(repo: Path, folder: Path) -> Path:
    git(repo, "worktree", "add", "-q", "-b", f"wt-{folder.name}", str(folder))
    return folder


def user_env(reme_home: Path) -> dict[str, str]:
    """A person's environment with no reme-mcp or host settings of the tester's, memory under
    `reme_home`, the suite's private index folder and lexical search."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE_"))}
    return env | {"REME_HOME": str(reme_home), "REME_INDEX_DIR": os.environ["REME_INDEX_DIR"], "REME_SEMANTIC": "off"}


def reme(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`reme-mcp ARGS` as a person runs it in `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
