"""`reme-mcp project adopt`: an old shared workspace sorted into projects and the personal one."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tests.projects.repos import reme, repository, user_env


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_adopt_sorts_by_the_dialogs_folder_and_moves_the_rest_to_personal(tmp_path: Path) -> None:
    reme_home = tmp_path / "reme"
    env = user_env(reme_home)
    app = repository(tmp_path / "app", remote=tmp_path / "app.git")
    old = tmp_path / "plugin-data" / "workspace"
    (old / "session/dialog/claude_code").mkdir(parents=True)
    line = {
        "id": "m1",
        "name": "user",
        "role": "user",
        "content": [{"type": "text", "text": "Let us use pnpm here."}],
        "metadata": {"session_id": "s-42", "project": str(app / "src")},
        "created_at": "2026-11-01T10:00:00+00:00",
    }
    (old / "session/dialog/claude_code/s-42-abc.jsonl").write_text(json.dumps(line) + "\n")
    (old / "daily/2026-11-01").mkdir(parents=True)
    (old / "daily/2026-11-01/pnpm.md").write_text("---\nname: pnpm\nsession_id: s-42\n---\nThis repo uses pnpm.\n")
    (old / "daily/2026-11-01/tea.md").write_text("---\nname: tea\n---\nThe person drinks green tea.\n")
    (old / "daily/2026-11-01.md").write_text("My own words.\n\n<!-- notes:auto -->\n(none)\n<!-- /notes:auto -->\n")
    before = _tree(old)

    dry = reme(app, env, "project", "adopt", "--from", str(old), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "pnpm.md -> app-" in dry.stdout and "tea.md -> personal" in dry.stdout, dry.stdout
    assert _tree(old) == before and not reme_home.exists()  # a dry run moves nothing

    done = reme(app, env, "project", "adopt", "--from", str(old))
    assert done.returncode == 0, done.stderr
    (project,) = (reme_home / "projects").glob("app-*")
    assert (project / "daily/2026-11-01/pnpm.md").read_text().endswith("This repo uses pnpm.\n")
    assert (project / "session/dialog/claude_code/s-42-abc.jsonl").is_file()
    assert "[[daily/2026-11-01/pnpm.md]]" in (project / "daily/2026-11-01.md").read_text()
    assert (reme_home / "personal/daily/2026-11-01/tea.md").is_file()
    assert not (old / "daily/2026-11-01/pnpm.md").exists() and not (old / "daily/2026-11-01/tea.md").exists()
    assert "My own words.\n" in (old / "daily/2026-11-01.md").read_text()  # a person's text stays

    found = reme(app / "src", env, "search", "pnpm")
    assert "pnpm.md" in found.stdout and "[app-" in found.stdout, found.stdout
    elsewhere = repository(tmp_path / "other")
    assert reme(elsewhere, env, "search", "pnpm").stdout.startswith("No memory matched")
    assert "green tea" in reme(elsewhere, env, "search", "green tea").stdout


def test_ingest_files_each_session_under_the_project_it_ran_in(tmp_path: Path) -> None:
    from tests.fixtures.ingest.layout import LAYOUTS

    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "REME_"))}
    env |= {"HOME": str(home), "REME_INDEX_DIR": os.environ["REME_INDEX_DIR"], "REME_SEMANTIC": "off"}
    app = repository(tmp_path / "app", remote=tmp_path / "app.git")
    log = LAYOUTS["claude-code"].install(home)
    # The host logged the session as run in a subfolder of the repository.
    log.write_text(log.read_text().replace("/home/user/projects/demo", str(app / "src")))
    done = reme(tmp_path, env, "ingest", "backfill", "claude-code")
    assert done.returncode == 0 and "imported 1 session(s)" in done.stdout, done.stdout + done.stderr
    (project,) = (home / ".reme" / "projects").glob("app-*")
    assert list(project.glob("session/dialog/claude_code/*.jsonl"))
    assert not (home / ".reme" / "personal" / "session").exists()
    found = reme(app, env, "search", "蓝鲸-731", "--json")
    hits = json.loads(found.stdout)["results"]
    assert hits and hits[0]["project"] == project.name and hits[0]["path"].startswith("session/dialog/claude_code/")
