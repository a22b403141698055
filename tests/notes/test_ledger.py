"""The ledger of requests and bodies that makes remember idempotent."""

from __future__ import annotations

import os
import time
from pathlib import Path

from reme_mcp.notes.ledger import Ledger
from reme_mcp.storage.documents import body_hash
from reme_mcp.storage.workspace import Workspace


def test_records_point_at_notes_only_while_they_hold_what_was_stored(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ledger = Ledger(ws)
    note = tmp_path / "daily/2026-11-28/a.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\nname: a\n---\nThe fact.\n", encoding="utf-8")
    digest = body_hash("The fact.")
    assert ledger.request("r1") is None and ledger.body(digest) is None
    ledger.record("r1", digest, "daily/2026-11-28/a.md")
    assert ledger.request("r1") == "daily/2026-11-28/a.md"
    assert ledger.body(digest) == "daily/2026-11-28/a.md"
    note.write_text("---\nname: a\n---\nEdited by a person.\n", encoding="utf-8")
    assert ledger.body(digest) is None  # no longer holds that content
    note.unlink()
    assert ledger.request("r1") is None  # the note is gone: a retry stores it again


def test_a_damaged_record_is_no_record(tmp_path: Path) -> None:
    ledger = Ledger(Workspace(tmp_path))
    ledger.record("r2", "cd" * 20, "daily/x.md")
    for record in (tmp_path / "metadata/reme-mcp/requests").iterdir():
        record.write_text("{not json", encoding="utf-8")
    assert ledger.request("r2") is None


def test_sweep_removes_only_old_temp_files_of_killed_writers(tmp_path: Path) -> None:
    ledger = Ledger(Workspace(tmp_path))
    ledger.record(None, "ab" * 20, "daily/x.md")
    bodies = tmp_path / "metadata/reme-mcp/bodies"
    old = bodies / ".abab.json.tmp-0123456789ab"
    fresh = bodies / ".cdcd.json.tmp-ba9876543210"
    for temp in (old, fresh):
        temp.write_text('{"path": "daily/', encoding="utf-8")  # cut off mid-write
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert ledger.sweep() == 1
    assert not old.exists() and fresh.exists()  # a writer may still be writing the fresh one
    assert [p.name for p in bodies.glob("*.json")] == [f"{'ab' * 20}.json"]  # the record is untouched
