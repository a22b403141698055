"""`reme-mcp forget` as a person runs it: real processes, a real workspace, index and trash on disk."""

from __future__ import annotations

import json
import os
import pty
import shutil
from pathlib import Path

import pytest

from tests.ops.forget_helpers import (
    DAY,
    KEPT_FACT,
    PERSON_LINE,
    SECRET_FACT,
    SESSION_ID,
    SESSION_WORD,
    Setup,
    hashes,
    holding,
    outside_block,
)

SECRET_WORD = "quokka-meridian-4471"


def test_dry_run_and_refusal_change_nothing_then_forgetting_leaves_no_trace(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    day_index = s.ws / "daily" / f"{DAY}.md"
    person_before = outside_block(day_index.read_text(encoding="utf-8"))
    assert PERSON_LINE in person_before
    # The test can fail: before forgetting, the index on disk holds the words.
    assert holding(s.index, SECRET_WORD) and holding(s.index, SESSION_WORD)
    before = hashes(s.ws, s.index, s.trash)

    args = ("forget", paths["secret"], "--session", f"claude-code:{SESSION_ID}")
    dry = s.reme(*args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert paths["secret"] in dry.stdout and paths["dialog"] in dry.stdout
    assert f"still linked to by (left as is): {paths['secret']} <- {paths['linker']}" in dry.stdout
    assert hashes(s.ws, s.index, s.trash) == before  # byte-identical: workspace, index, vectors, trash

    refused = s.reme(*args)  # no terminal, no --yes
    assert refused.returncode == 1
    assert refused.stderr.strip().count("\n") == 0 and "--yes" in refused.stderr
    assert hashes(s.ws, s.index, s.trash) == before

    done = s.reme(*args, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "forgotten"
    assert result["removed"] == [paths["secret"], paths["dialog"]]
    assert result["sessions"] == [paths["dialog"]]
    assert result["linked_from"] == {paths["secret"]: [paths["linker"]]}
    assert result["day_indexes"] == [f"daily/{DAY}.md"]

    # Gone from the workspace and from everything derived on disk: index, records, ledger.
    assert not (s.ws / paths["secret"]).exists() and not (s.ws / paths["dialog"]).exists()
    assert holding(s.ws, SECRET_WORD) == [] and holding(s.ws, SESSION_WORD) == []
    assert holding(s.index, SECRET_WORD) == [] and holding(s.index, SESSION_WORD) == []
    assert not [p for p in holding(s.ws / "metadata", paths["secret"])]  # no ledger record names it
    # The day index: its block without the note, the person's text byte for byte.
    after = day_index.read_text(encoding="utf-8")
    assert paths["secret"] not in after and paths["kept"] in after
    assert outside_block(after) == person_before
    # The linking note is left as the person (here: remember) wrote it.
    assert f"[[{paths['secret']}]]" in (s.ws / paths["linker"]).read_text(encoding="utf-8")
    # In the private trash, outside the workspace.
    trash = Path(result["trash"])
    assert trash.is_relative_to(s.trash) and (trash / paths["secret"]).read_text(encoding="utf-8").count(SECRET_FACT)

    # No command finds it again; the note kept is still found.
    for query in (SECRET_WORD, "quokka meridian unlock", SESSION_WORD, "ledger service database"):
        assert json.loads(s.ok("search", query, "--json"))["results"] == [], query
    assert KEPT_FACT.split()[0] in s.ok("search", "standups Tuesdays")

    # The session is not imported again, not even with its cursors lost.
    assert "imported 0 session(s)" in s.ok("ingest", "backfill", "claude-code")
    shutil.rmtree(s.ws / "metadata" / "reme-mcp" / "ingest")
    again = s.ok("ingest", "backfill", "claude-code")
    assert "imported 0 session(s)" in again and "forgotten sessions" in again
    assert not (s.ws / paths["dialog"]).exists()

    # The trash is emptied on request.
    assert "1 forgetting removed" in s.ok("forget", "--empty-trash")
    assert not trash.exists()


def test_remember_of_the_forgotten_text_stores_it_anew(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    s.ok("forget", paths["secret"], "--yes")
    again = s.remember(SECRET_FACT, "vault-phrase")  # same content, same request id as before
    assert again == paths["secret"] and SECRET_FACT in (s.ws / again).read_text(encoding="utf-8")
    assert SECRET_WORD in s.ok("search", SECRET_WORD)


def test_by_date_range_and_by_query(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    plan = json.loads(s.ok("forget", "--since", DAY, "--until", DAY, "--dry-run", "--json"))
    # The day's notes and the session held wholly on that day; the day index itself is rebuilt, not forgotten.
    assert set(plan["paths"]) == {paths["secret"], paths["kept"], paths["dialog"]}
    assert {s["path"] for s in plan["skipped"]} == set()
    by_query = json.loads(s.ok("forget", "--query", "vault unlock phrase", "--limit", "1", "--dry-run", "--json"))
    assert by_query["paths"] == [paths["secret"]]
    s.ok("forget", "--since", "2026-11-29", "--yes")
    assert not (s.ws / paths["linker"]).exists() and (s.ws / paths["secret"]).exists()
    assert not (s.ws / "daily" / "2026-11-29").exists()  # the emptied day's folder goes too


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "nothing selected"),
        (("../outside.md",), "outside"),
        (("daily/2026-01-01/none.md",), "not a memory file"),
        (("--session", "claude-code:no-such-session"), "no imported dialog"),
        (("--session", "just-an-id"), "HOST:ID"),
        (("--since", "yesterday"), "not a date"),
        (("--keep-days", "-3", "x.md"), "not a number of days"),
    ],
)
def test_bad_selections_are_one_line_and_change_nothing(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    s = Setup(tmp_path)
    (s.ws / "daily").mkdir(parents=True)
    before = hashes(s.ws, s.index, s.trash)
    done = s.reme("forget", *args, "--yes")
    assert done.returncode == 1 and said in done.stderr, done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert hashes(s.ws, s.index, s.trash) == before


def test_no_trash_retention_removes_at_once(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    out = json.loads(s.ok("forget", paths["kept"], "--yes", "--keep-days", "0", "--json"))
    assert out["trash"] is None and not s.trash.exists()


@pytest.mark.parametrize("answer", ["n", "y"])
def test_on_a_terminal_it_shows_the_plan_and_asks(tmp_path: Path, answer: str) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    before = hashes(s.ws, s.index, s.trash)
    leader, follower = pty.openpty()
    try:
        os.write(leader, f"{answer}\n".encode())
        done = s.reme("forget", paths["kept"], stdin=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert paths["kept"] in done.stderr and "Forget this file? [y/N]" in done.stderr
    if answer == "n":
        assert done.returncode == 1 and "Nothing was forgotten." in done.stderr
        assert hashes(s.ws, s.index, s.trash) == before
    else:
        assert done.returncode == 0, done.stderr
        assert f"Forgot 1 file:\n  {paths['kept']}" in done.stdout and not (s.ws / paths["kept"]).exists()


def test_the_trash_keeps_each_forgetting_for_its_retention_then_sweeps_it(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    first = json.loads(s.ok("forget", paths["kept"], "--yes", "--json"))
    manifest = Path(first["trash"]) / "forgotten.json"
    assert json.loads(manifest.read_text(encoding="utf-8"))["paths"] == [paths["kept"]]
    second = json.loads(s.ok("forget", paths["linker"], "--yes", "--keep-days", "2", "--json"))
    assert Path(first["trash"]).is_dir() and Path(second["trash"]).is_dir()  # both within their time
    # The first forgetting's time is up (its manifest says so): the next forgetting sweeps it.
    held = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps({**held, "until": 0}), encoding="utf-8")
    s.ok("forget", paths["secret"], "--yes")
    assert not Path(first["trash"]).exists() and Path(second["trash"]).is_dir()


def test_a_trash_others_can_write_is_refused_and_nothing_is_forgotten(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    paths = s.build()
    s.trash.mkdir()
    s.trash.chmod(0o777)
    before = hashes(s.ws, s.index)
    done = s.reme("forget", paths["kept"], "--yes")
    assert done.returncode == 1 and "not private" in done.stderr and "REME_TRASH_DIR" in done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert hashes(s.ws, s.index) == before
