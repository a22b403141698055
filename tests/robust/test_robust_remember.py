"""remember against a workspace from elsewhere (issue 12).

Proves: layout symlinks (daily/, daily/<date>/, daily/<date>.md, a linked note) never
lead a read or a write outside; a ledger record pointing outside is not obeyed; every
stored field is checked for secrets and size; the request_id is never on disk in plain
text; names are checked by UTF-8 bytes, link-breaking and invisible characters refused,
case and normalisation twins one name, COM0/COM¹/LPT³ refused; a recalled boundary is
stripped before storing and de-duplicating; wrong-type lock files do not block writes.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError
from reme_mcp.ops.memory import Memory
from reme_mcp.safety import boundary

DAY = "2026-11-28"
CANARY = "CANARY-outside-7f3e"


def memory(ws: Path) -> Memory:
    return Memory(load_settings(workspace=str(ws), timezone="UTC"))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / DAY).mkdir(parents=True)
    (out / "secret.txt").write_text(f"{CANARY}\n", encoding="utf-8")
    (out / f"{DAY}.md").write_text(f"---\nname: x\n---\n{CANARY}\n", encoding="utf-8")
    (out / "note.md").write_text(f"---\nname: outside\ndescription: {CANARY}\n---\nbody\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("link", ["daily", "daily/DAY", "daily/DAY.md"])
def test_layout_links_to_outside_are_refused(tmp_path: Path, outside: Path, link: str) -> None:
    ws = tmp_path / "ws"
    where = ws / link.replace("DAY", DAY)
    where.parent.mkdir(parents=True, exist_ok=True)
    target = {"daily": outside, "daily/DAY": outside / DAY, "daily/DAY.md": outside / f"{DAY}.md"}[link]
    where.symlink_to(target)
    before = snapshot(outside)
    with pytest.raises(ReMeError, match="link") as info:
        memory(ws).remember("A fact that must stay inside.", date=DAY)
    assert "\n" not in str(info.value) and CANARY not in str(info.value)
    assert snapshot(outside) == before


def test_a_linked_note_is_not_read_into_the_day_index(tmp_path: Path, outside: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "daily" / DAY).mkdir(parents=True)
    (ws / "daily" / DAY / "linked.md").symlink_to(outside / "note.md")
    mem = memory(ws)
    mem.remember("A real fact of the day.", date=DAY)
    assert CANARY not in (ws / "daily" / f"{DAY}.md").read_text(encoding="utf-8")
    listed = mem.daily_list(date=DAY).days[0].notes
    assert CANARY not in json.dumps([n.model_dump() for n in listed])


def test_a_ledger_record_pointing_outside_is_not_obeyed(tmp_path: Path, outside: Path) -> None:
    ws = tmp_path / "ws"
    mem = memory(ws)
    first = mem.remember("Seed fact so the state folder exists.", date=DAY, request_id="seed")
    assert first.created
    for record in (ws / "metadata/reme-mcp/requests").glob("*.json"):
        record.write_text(json.dumps({"path": "../outside/secret.txt"}), encoding="utf-8")
    for record in (ws / "metadata/reme-mcp/bodies").glob("*.json"):
        record.write_text(json.dumps({"path": str(outside / "secret.txt")}), encoding="utf-8")
    # Every ledger record now points outside. The retry finds its own note, and a new
    # request is stored; neither answer names or confirms the outside file.
    again = mem.remember("Seed fact so the state folder exists.", date=DAY, request_id="seed")
    assert again.path == first.path
    other = mem.remember("A different fact, same forged ledger.", date=DAY, request_id="seed")
    assert other.path == first.path  # the request's note on disk, not the ledger's claim
    (ws / first.path).unlink()
    third = mem.remember("A third fact after the note was deleted.", date=DAY, request_id="seed")
    assert third.created and third.path.startswith(f"daily/{DAY}/"), third


def test_request_id_is_never_on_disk_in_plain_text(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    rid = "req-plain-6c1d9a77"
    memory(ws).remember("A fact stored with a request id.", date=DAY, request_id=rid)
    for path in ws.rglob("*"):
        if path.is_file():
            assert rid.encode() not in path.read_bytes(), path


SECRETS = {
    "description": {"content": "Deploy notes.", "description": "key AKIAIOSFODNN7EXAMPLE for deploys"},
    "tags": {"content": "Deploy notes.", "tags": ["ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"]},
    "name": {"content": "Deploy notes.", "name": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3"},
    "placeholder-word": {"content": 'db_password: "MySecret#2024"'},
    "wrapped-jwt": {
        "content": "token:\neyJhbGciOiJIUzI1NiIsInR5cCI6IkpX\nVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6\n"
        "IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    },
    "slack-app": {"content": "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef0123456789abcdef"},
    "aws-prose": {"content": "The AWS secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY for prod."},
    "telegram": {"content": "The bot uses 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw3 to post."},
    "discord": {"content": "Bot token MTA4NjYxMDk2NzQ1MjY0NjQ2NQ.GkXb3a.abcdefghijklmnopqrstuvwxyz0123AB here."},
}


@pytest.mark.parametrize("case", sorted(SECRETS))
def test_secrets_are_refused_in_every_field(tmp_path: Path, case: str) -> None:
    ws = tmp_path / "ws"
    with pytest.raises(ReMeError, match="secrets are never stored"):
        memory(ws).remember(date=DAY, **SECRETS[case])  # type: ignore[arg-type]
    assert not (ws / "daily").exists()


def test_the_size_limit_covers_the_whole_note(tmp_path: Path) -> None:
    mem = memory(tmp_path / "ws")
    with pytest.raises(ReMeError, match="description is"):
        mem.remember("Small fact.", description="d" * 2_000_000, date=DAY)
    with pytest.raises(ReMeError, match="tag"):
        mem.remember("Small fact.", tags=["t" * 1_000_000], date=DAY)
    assert not (tmp_path / "ws" / "daily").exists()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("长" * 79, "bytes in UTF-8"),
        ("see#section", "break the day index"),
        ("a[b", "break the day index"),
        ("x]]y", "break the day index"),
        ("evil\u202etxt.md", "invisible"),
        ("zero\u200bwidth", "invisible"),
        ("\ufeffbom", "invisible"),
        ("line\u2028sep", "invisible"),
        ("COM0", "device"),
        ("COM\u00b9", "device"),
        ("LPT\u00b3.txt", "device"),
    ],
)
def test_names_are_refused_with_the_reason(tmp_path: Path, name: str, reason: str) -> None:
    with pytest.raises(ReMeError, match=reason):
        memory(tmp_path / "ws").remember("A fact with a bad name.", name=name, date=DAY)


def test_case_and_normalisation_twins_are_one_name(tmp_path: Path) -> None:
    mem = memory(tmp_path / "ws")
    first = mem.remember("Fact one about cafés.", name="Caf\u00e9", date=DAY)
    second = mem.remember("Fact two about cafés.", name="cafe\u0301", date=DAY)
    third = mem.remember("Fact three about cafés.", name="CAFÉ", date=DAY)
    stems = [Path(r.path).stem for r in (first, second, third)]
    folded = {unicodedata.normalize("NFC", s).casefold() for s in stems}
    assert len(folded) == 3, stems  # three notes, no two that one file system would merge


def test_a_recalled_boundary_is_stripped_before_storing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    mem = memory(ws)
    fact = "The build server restarts every Sunday at 03:00."
    stored = mem.remember(fact, date=DAY)
    pasted = boundary.wrap(fact, "search")
    again = mem.remember(pasted, date=DAY)
    assert again.created is False and again.path == stored.path
    mem.remember(f"Note: {boundary.wrap('a zqrecalled detail', 'read')}", date=DAY)
    for note in (ws / "daily" / DAY).glob("*.md"):
        text = note.read_text(encoding="utf-8")
        assert "reme-context" not in text and "untrusted historical data" not in text, text


@pytest.mark.parametrize("kind", ["locks-is-a-file", "lock-is-a-folder", "locks-link-outside"])
def test_wrong_type_lock_files_do_not_block_writes(tmp_path: Path, outside: Path, kind: str) -> None:
    ws = tmp_path / "ws"
    state = ws / "metadata" / "reme-mcp"
    state.mkdir(parents=True)
    if kind == "locks-is-a-file":
        (state / "locks").write_text("junk", encoding="utf-8")
    elif kind == "lock-is-a-folder":
        (state / "locks" / "write.lock").mkdir(parents=True)
    else:
        (state / "locks").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    assert memory(ws).remember("A fact despite odd lock files.", date=DAY).created
    assert memory(ws).remember("A second fact despite odd lock files.", date=DAY).created
    assert snapshot(outside) == before
