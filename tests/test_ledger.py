"""The ledger of requests and bodies that makes remember idempotent."""

from __future__ import annotations

from pathlib import Path

from reme_mcp.documents import body_hash
from reme_mcp.ledger import Ledger
from reme_mcp.workspace import Workspace


def test_records_point_at_notes_only_while_they_hold_what_was_stored(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ledger = Ledger(ws)
    note = tmp_path / "daily/2026-11-28/a.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\nname: a\n---\nThe fact.\n", encoding="utf-8")
    digest = body_hash("The fact.")
    assert ledger.request("r1") is None and ledger.body(digest) is None
    ledger.record_request("r1", "daily/2026-11-28/a.md")
    ledger.record_body(digest, "daily/2026-11-28/a.md")
    ledger.record_request(None, "ignored")
    assert ledger.request("r1") == "daily/2026-11-28/a.md"
    assert ledger.body(digest) == "daily/2026-11-28/a.md"
    note.write_text("---\nname: a\n---\nEdited by a person.\n", encoding="utf-8")
    assert ledger.body(digest) is None  # no longer holds that content
    note.unlink()
    assert ledger.request("r1") is None  # the note is gone: a retry stores it again


def test_a_damaged_record_is_no_record(tmp_path: Path) -> None:
    ledger = Ledger(Workspace(tmp_path))
    ledger.record_request("r2", "daily/x.md")
    for record in (tmp_path / "metadata/reme-mcp/requests").iterdir():
        record.write_text("{not json", encoding="utf-8")
    assert ledger.request("r2") is None
