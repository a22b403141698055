"""Team sync against a remote that is untrusted input: hooks, links out, derived state, rewritten
history, and the conflicts reme-mcp must stop on, leaving the repository clean."""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory
from tests.team.team_git import DAY, MARKERS, bare_remote, files, git, isolate_git, sync

HOOKS = ("pre-receive", "update", "post-receive", "post-update", "reference-transaction", "push-to-checkout")
LOCAL_HOOKS = ("pre-commit", "commit-msg", "post-commit", "post-merge", "post-checkout", "pre-push", "pre-merge-commit")


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path, monkeypatch)


def note(ws: Path, name: str, text: str, day: str = DAY) -> Path:
    """A note as `remember` stores it (its day index refreshed)."""
    stored = Memory(load_settings(str(ws), "UTC")).remember(text, name=name, date=day)
    return ws / stored.path


def synced(ws: Path, init: str | None = None) -> str:
    """A sync through the Memory class in this process (the CLI's own runs are in the error cases)."""
    return Memory(load_settings(str(ws), "UTC")).team_sync(init=init).render()


def rogue_clone(tmp: Path, remote: Path) -> Path:
    """Someone with push access and plain git."""
    rogue = tmp / "rogue"
    git(tmp, "clone", "-q", str(remote), str(rogue))
    return rogue


def plant_hooks(folder: Path, names: tuple[str, ...], marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        hook = folder / name
        hook.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\n", encoding="utf-8")
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def one_line_error(done: object, *words: str) -> str:
    err = str(getattr(done, "stderr", "")).strip()
    assert getattr(done, "returncode", 0) == 1, err
    assert len(err.splitlines()) == 1, err
    assert all(w in err for w in words), err
    return err


def clean(ws: Path) -> None:
    assert git(ws, "status", "--porcelain") == ""
    assert not (ws / ".git" / "MERGE_HEAD").exists()


def test_no_hook_of_the_remote_or_the_clone_runs_and_bytes_are_kept(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    note(amber, "go", "Go for services.")
    synced(amber, init=str(remote))
    rogue = rogue_clone(tmp_path, remote)
    # The remote's own attributes ask for CRLF on checkout and union merges: a clone's local ones win.
    (rogue / ".gitattributes").write_text("* eol=crlf merge=union\n", encoding="utf-8")
    git(rogue, "add", ".gitattributes")
    git(rogue, "commit", "-qm", "attributes")
    git(rogue, "push", "-q", "origin", "HEAD:main")
    marker = tmp_path / "ran"
    plant_hooks(remote / "hooks", HOOKS, marker)
    git(remote, "config", "core.fsmonitor", f"echo fsmonitor >> '{marker}'")
    synced(birch, init=str(remote))
    plant_hooks(amber / ".git" / "hooks", LOCAL_HOOKS, marker)
    plant_hooks(birch / ".git" / "hooks", LOCAL_HOOKS, marker)
    # The hooks are live: plain git runs them, locally and on the remote.
    git(rogue, "commit", "-q", "--allow-empty", "-m", "poke")
    git(rogue, "push", "-q", "origin", "HEAD:main")
    git(amber, "commit", "-q", "--allow-empty", "-m", "poke")
    assert {"pre-receive", "post-receive", "pre-commit", "post-commit"} <= set(marker.read_text().split())
    marker.unlink()
    note(birch, "rust", "Rust for tools.\nSecond line.")
    note(amber, "zig", "Zig for fun.")
    for ws in (amber, birch, amber, birch):
        synced(ws)
    assert not marker.exists(), marker.read_text()
    assert files(amber) == files(birch)
    assert b"\r" not in (birch / "daily" / DAY / "go.md").read_bytes()
    assert b"\r" not in (amber / "daily" / DAY / "rust.md").read_bytes()


def test_a_symbolic_link_out_is_refused_and_nothing_is_checked_out(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber = tmp_path / "amber"
    note(amber, "go", "Go for services.")
    synced(amber, init=str(remote))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\nname: secret\n---\nnot memory\n", encoding="utf-8")
    rogue = rogue_clone(tmp_path, remote)
    os.symlink(outside / "secret.md", rogue / "daily" / DAY / "secret.md")
    os.symlink("../../outside", rogue / "resource")
    git(rogue, "add", "-A")
    git(rogue, "commit", "-qm", "links out")
    git(rogue, "push", "-q", "origin", "HEAD:main")
    note(amber, "mine", "Written while the remote turned hostile.")
    head = git(amber, "rev-parse", "HEAD")
    one_line_error(sync(amber), "symbolic link", "refused")
    assert not (amber / "daily" / DAY / "secret.md").exists() and not (amber / "resource").exists()
    assert (amber / "daily" / DAY / "mine.md").is_file()  # kept, and committed here
    assert git(amber, "rev-parse", "HEAD") != head
    assert git(amber, "log", "-1", "--format=%s") == "reme-mcp: 1 new note, 1 day index\n"
    clean(amber)
    one_line_error(sync(amber), "symbolic link")  # and again, until the remote is fixed


# METADATA/ is metadata/ on macOS and Windows, where a teammate's clone folds case.
@pytest.mark.parametrize("folder", ["metadata", "METADATA"])
def test_derived_state_coming_in_is_refused(tmp_path: Path, folder: str) -> None:
    remote = bare_remote(tmp_path)
    amber = tmp_path / "amber"
    note(amber, "go", "Go for services.")
    synced(amber, init=str(remote))
    rogue = rogue_clone(tmp_path, remote)
    record = rogue / folder / "reme-mcp" / "requests" / "x.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"path": "daily/2026-11-28/go.md"}', encoding="utf-8")
    git(rogue, "add", "-f", folder)
    git(rogue, "commit", "-qm", "state")
    git(rogue, "push", "-q", "origin", "HEAD:main")
    one_line_error(sync(amber), f"{folder}/reme-mcp/requests/x.json", "derived state")
    assert not (amber / folder / "reme-mcp" / "requests" / "x.json").exists()
    clean(amber)


def test_rewritten_history_stops_with_one_line(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    note(amber, "go", "Go for services.")
    synced(amber, init=str(remote))
    synced(birch, init=str(remote))
    rogue = rogue_clone(tmp_path, remote)
    git(rogue, "checkout", "-q", "--orphan", "fresh")
    git(rogue, "rm", "-rq", "--cached", ".")
    (rogue / "README.md").write_text("a new start\n", encoding="utf-8")
    git(rogue, "add", "README.md")
    git(rogue, "commit", "-qm", "rewritten")
    git(rogue, "push", "-q", "--force", "origin", "fresh:main")
    note(birch, "rust", "Rust for tools.")
    before = files(birch)
    one_line_error(sync(birch), "rewritten (force-pushed)")
    assert files(birch) == before and not (birch / "README.md").exists()
    assert git(remote, "ls-tree", "--name-only", "main") == "README.md\n"  # nothing pushed over it
    clean(birch)


def test_a_persons_conflicting_edits_stop_the_merge_cleanly(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    note(amber, "go", "Go for services.")
    synced(amber, init=str(remote))
    index = amber / "daily" / f"{DAY}.md"
    index.write_text(index.read_text().replace("---\n\n", "---\nOwner: Ann\n\n", 1), encoding="utf-8")
    synced(amber)
    assert git(amber, "log", "-1", "--format=%s") == "reme-mcp: 1 day index, a person's edits to 1 file\n"
    synced(birch, init=str(remote))
    for ws, owner in ((amber, "Bob"), (birch, "Cy")):
        path = ws / "daily" / f"{DAY}.md"
        path.write_text(path.read_text().replace("Owner: Ann", f"Owner: {owner}"), encoding="utf-8")
    note(birch, "rust", "Rust for tools.")
    synced(amber)
    err = one_line_error(sync(birch), f"daily/{DAY}.md", "nothing was merged")
    assert "git merge origin/main" in err
    clean(birch)
    mine = (birch / "daily" / f"{DAY}.md").read_text()
    assert "Owner: Cy" in mine and not any(m in mine for m in MARKERS)
    assert (birch / "daily" / DAY / "rust.md").is_file()


def test_same_name_notes_both_kept_and_links_follow_the_rename(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    synced(amber, init=str(remote))
    synced(birch, init=str(remote))
    note(amber, "plan", "Amber's plan: ship Friday.")
    digest = amber / "digest" / "wiki" / "plans.md"
    digest.parent.mkdir(parents=True)
    digest.write_text(f"---\nname: plans\n---\nSee [[daily/{DAY}/plan.md#L5]].\n", encoding="utf-8")
    note(birch, "plan", "Birch's plan: ship Monday.")
    synced(amber)
    out = synced(birch)
    assert f"kept both: daily/{DAY}/plan.md came in as daily/{DAY}/plan-2.md" in out, out
    synced(amber)
    for ws in (amber, birch):
        assert "Birch's plan" in (ws / "daily" / DAY / "plan.md").read_text()
        renamed = (ws / "daily" / DAY / "plan-2.md").read_text()
        assert "Amber's plan" in renamed and "\nname: plan-2\n" in renamed
        assert f"[[daily/{DAY}/plan-2.md#L5]]" in (ws / "digest" / "wiki" / "plans.md").read_text()
        index = (ws / "daily" / f"{DAY}.md").read_text()
        assert f"[[daily/{DAY}/plan.md]]" in index and f"[[daily/{DAY}/plan-2.md]]" in index
    assert files(amber) == files(birch)


def test_two_workspaces_with_notes_of_their_own_join_one_remote(tmp_path: Path) -> None:
    """--init on two filled workspaces: unrelated histories merged, both day indexes' person text kept."""
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    note(amber, "go", "Go for services.")
    note(birch, "go", "Go is for the CLI only.")
    note(birch, "rust", "Rust for tools.")
    index = birch / "daily" / f"{DAY}.md"
    index.write_text(index.read_text() + "\nBirch's own line.\n", encoding="utf-8")
    synced(amber, init=str(remote))
    out = synced(birch, init=str(remote))
    assert "came in as" in out, out
    synced(amber)
    assert files(amber) == files(birch)
    names = sorted(p.name for p in (amber / "daily" / DAY).iterdir())
    assert names == ["go-2.md", "go.md", "rust.md"]
    text = (amber / "daily" / f"{DAY}.md").read_text()
    assert "Birch's own line." in text and "3 note(s) today." in text
    clean(amber)
    clean(birch)


def test_an_ignored_file_here_is_never_overwritten_by_one_coming_in(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    amber, birch = tmp_path / "amber", tmp_path / "birch"
    note(amber, "go", "Go for services.")
    synced(amber, init=str(remote))
    synced(birch, init=str(remote))
    with (birch / ".git" / "info" / "exclude").open("a", encoding="utf-8") as fh:
        fh.write("/resource/scratch.md\n")
    scratch = birch / "resource" / "scratch.md"
    scratch.parent.mkdir()
    scratch.write_text("birch's private scratch\n", encoding="utf-8")
    (amber / "resource").mkdir()
    (amber / "resource" / "scratch.md").write_text("amber's shared scratch\n", encoding="utf-8")
    synced(amber)
    one_line_error(sync(birch), "resource/scratch.md", "move it away")
    assert scratch.read_text(encoding="utf-8") == "birch's private scratch\n"
    clean(birch)


def test_syncs_at_the_same_time_all_finish(tmp_path: Path) -> None:
    """Three clones pushing at once: a push refused because the remote moved on is merged and pushed again."""
    remote = bare_remote(tmp_path)
    clones = [tmp_path / name for name in ("amber", "birch", "cedar")]
    for ws in clones:
        synced(ws, init=str(remote))
    for round_ in range(2):
        for n, ws in enumerate(clones):
            topic = ("kayaks", "lanterns", "marmots", "nectarines", "origami", "pelicans")[round_ * 3 + n]
            stored = note(ws, f"{ws.name}-{round_}", f"{ws.name} keeps a list of {topic}.")
            assert stored.name == f"{ws.name}-{round_}.md" and stored.is_file()
        with ThreadPoolExecutor(3) as pool:  # each sync raises if it cannot finish
            list(pool.map(synced, clones))
    for ws in clones:
        synced(ws)
    assert files(clones[0]) == files(clones[1]) == files(clones[2])
    written = sorted(f"{ws.name}-{r}.md" for ws in clones for r in range(2))
    assert sorted(p.name for p in (clones[0] / "daily" / DAY).iterdir()) == written
