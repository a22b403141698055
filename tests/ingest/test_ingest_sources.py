"""Each source, on its fixture: import, idempotence, following, broken and rotated logs, what is kept."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from reme_mcp.config import Settings
from reme_mcp.errors import ReMeError
from reme_mcp.ingest.runner import Importer
from reme_mcp.ingest.sources import get_source
from reme_mcp.ops.memory import Memory
from reme_mcp.storage.workspace import Workspace
from tests.fixtures.ingest.layout import LAYOUTS, PASSPHRASE, SECRET, Layout

ALL = sorted(LAYOUTS)
JSONL = [name for name in ALL if not LAYOUTS[name].is_sqlite]
SQLITE = [name for name in ALL if LAYOUTS[name].is_sqlite]
KEPT = {
    PASSPHRASE,
    "好的，我记住了：测试口令是蓝鲸-731。",
    "Which database do we use for the ledger service?",
    "The ledger service uses PostgreSQL 16.",
    "My key is [redacted: an Anthropic API key] please keep it out of notes",
}


def _importer(tmp_path: Path, name: str, **kwargs: object) -> Importer:
    env = {"HOME": str(tmp_path / "home")}
    return Importer(Workspace(tmp_path / "ws"), get_source(name), env=env, **kwargs)  # type: ignore[arg-type]


def _install(tmp_path: Path, name: str) -> tuple[Layout, Path]:
    layout = LAYOUTS[name]
    return layout, layout.install(tmp_path / "home")


def _dialogs(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "ws" / "session" / "dialog").rglob("*.jsonl"))


def _texts(tmp_path: Path) -> list[str]:
    texts = []
    for path in _dialogs(tmp_path):
        for line in path.read_text(encoding="utf-8").splitlines():
            texts.append(json.loads(line)["content"][0]["text"])
    return texts


def _append(layout: Layout, log: Path, text: str, n: int) -> None:
    if layout.is_sqlite:
        layout.add_row(log, text, n)
    else:
        with log.open("a", encoding="utf-8") as fh:
            fh.write(layout.line(text, n))


@pytest.mark.parametrize("name", ALL)
def test_full_import_keeps_user_and_assistant_text_only(tmp_path: Path, name: str) -> None:
    _install(tmp_path, name)
    tally = _importer(tmp_path, name).run_once()
    [dialog] = _dialogs(tmp_path)
    assert dialog.parent.name == get_source(name).host
    texts = _texts(tmp_path)
    assert set(texts) >= KEPT
    assert tally.sessions == 1 and tally.messages == len(texts)
    raw = dialog.read_text(encoding="utf-8")
    for dropped in ("MARKER", "reme-context", "iVBORw0KGgo", SECRET, "Zx9Zx9"):
        assert dropped not in raw
    first = json.loads(raw.splitlines()[0])
    assert first["role"] == first["name"] == "user"
    assert first["created_at"].startswith("2026-11-28")
    assert first["metadata"]["source"] == name and first["metadata"]["native_id"] == first["id"]
    assert first["metadata"]["source_path"].startswith(str(tmp_path / "home"))


@pytest.mark.parametrize("name", ALL)
def test_unknown_event_types_are_counted_not_fatal(tmp_path: Path, name: str) -> None:
    _, log = _install(tmp_path, name)
    if name == "hermes":  # a role Hermes might add later
        conn = sqlite3.connect(log)
        conn.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('x', 'critic', 'hm', 1)")
        conn.commit()
        conn.close()
    tally = _importer(tmp_path, name).run_once()
    assert any(why.startswith("unknown") for why in tally.skipped), tally.skipped
    assert tally.messages >= len(KEPT)


@pytest.mark.parametrize("name", ALL)
def test_rerun_and_lost_cursors_add_nothing(tmp_path: Path, name: str) -> None:
    _install(tmp_path, name)
    _importer(tmp_path, name).run_once()
    before = [p.read_bytes() for p in _dialogs(tmp_path)]
    assert _importer(tmp_path, name).run_once().messages == 0
    for cursor in (tmp_path / "ws" / "metadata").rglob("ingest/*.json"):
        cursor.unlink()  # derived state: rebuilt from the source and the imported files
    assert _importer(tmp_path, name).run_once().messages == 0
    assert [p.read_bytes() for p in _dialogs(tmp_path)] == before


@pytest.mark.parametrize("name", ALL)
def test_watch_picks_up_appended_messages(tmp_path: Path, name: str) -> None:
    layout, log = _install(tmp_path, name)
    importer = _importer(tmp_path, name)
    stop = threading.Event()
    thread = threading.Thread(target=importer.watch, args=(stop, 0.05), daemon=True)
    thread.start()
    try:
        _wait(lambda: PASSPHRASE in _texts(tmp_path))
        _append(layout, log, "The deploy window is Thursday at 14:00.", 1)
        _wait(lambda: "The deploy window is Thursday at 14:00." in _texts(tmp_path))
    finally:
        stop.set()
        thread.join(5)
    assert _texts(tmp_path).count(PASSPHRASE) == 1


@pytest.mark.parametrize("name", JSONL)
def test_half_written_last_line_waits_for_its_end(tmp_path: Path, name: str) -> None:
    layout, log = _install(tmp_path, name)
    _importer(tmp_path, name).run_once()
    line = layout.line("Half a line, then the rest.", 2)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(line[:25])
    assert _importer(tmp_path, name).run_once().messages == 0
    with log.open("a", encoding="utf-8") as fh:
        fh.write(line[25:])
    assert _importer(tmp_path, name).run_once().messages == 1
    assert _texts(tmp_path).count("Half a line, then the rest.") == 1


@pytest.mark.parametrize("name", SQLITE)
def test_uncommitted_rows_wait_and_the_host_is_never_locked(tmp_path: Path, name: str) -> None:
    layout, db = _install(tmp_path, name)
    _importer(tmp_path, name).run_once()
    host = sqlite3.connect(db, timeout=0)
    host.execute("BEGIN IMMEDIATE")
    layout.add_row(db, "Written but not yet committed.", 3, conn=host)
    assert _importer(tmp_path, name).run_once().messages == 0  # reads past the host's open write
    layout.add_row(db, "A second row in the same transaction.", 4, conn=host)
    host.commit()  # never blocked by our reader
    host.close()
    assert _importer(tmp_path, name).run_once().messages == 2


@pytest.mark.parametrize("name", JSONL)
def test_truncated_or_rotated_log_is_read_again_without_duplicates(tmp_path: Path, name: str) -> None:
    layout, log = _install(tmp_path, name)
    _importer(tmp_path, name).run_once()
    head = log.read_text(encoding="utf-8").splitlines(keepends=True)[:2]
    log.write_text("".join(head) + layout.line("After the truncation.", 5), encoding="utf-8")
    tally = _importer(tmp_path, name).run_once()
    assert tally.messages == 1 and "logs truncated or replaced (read again)" in tally.skipped
    rotated = log.with_name(log.name + ".new")
    rotated.write_text(log.read_text(encoding="utf-8") + layout.line("After the rotation.", 6), encoding="utf-8")
    rotated.replace(log)  # a new file (inode) under the old name
    assert _importer(tmp_path, name).run_once().messages == 1
    texts = _texts(tmp_path)
    assert texts.count(PASSPHRASE) == 1 and "After the rotation." in texts


@pytest.mark.parametrize("name", SQLITE)
def test_replaced_database_is_read_again_without_duplicates(tmp_path: Path, name: str) -> None:
    layout, db = _install(tmp_path, name)
    _importer(tmp_path, name).run_once()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    layout.install(tmp_path / "home")
    layout.add_row(db, "After the restore.", 7)
    assert _importer(tmp_path, name).run_once().messages == 1
    assert _texts(tmp_path).count(PASSPHRASE) == 1


@pytest.mark.parametrize("name", ALL)
def test_dry_run_leaves_no_trace(tmp_path: Path, name: str) -> None:
    _, log = _install(tmp_path, name)
    listing = sorted(p.name for p in log.parent.iterdir())
    stamp = log.stat().st_mtime_ns
    tally = _importer(tmp_path, name, dry_run=True).run_once()
    assert tally.messages >= len(KEPT)
    assert not (tmp_path / "ws").exists()
    assert sorted(p.name for p in log.parent.iterdir()) == listing and log.stat().st_mtime_ns == stamp


@pytest.mark.parametrize("name", ALL)
def test_passphrase_is_found_by_search_after_import(tmp_path: Path, name: str) -> None:
    _install(tmp_path, name)
    _importer(tmp_path, name).run_once()
    memory = Memory(Settings(workspace=(tmp_path / "ws").resolve(), timezone=__import__("datetime").UTC))
    result = memory.search("蓝鲸-731", limit=5)
    assert result.results, "the imported passphrase is not searchable"
    top = result.results[0]
    assert top.path.startswith(f"session/dialog/{get_source(name).host}/")
    assert "蓝鲸-731" in top.snippet and top.date == "2026-11-28"


@pytest.mark.parametrize("name", ALL)
def test_missing_source_is_one_clear_line(tmp_path: Path, name: str) -> None:
    with pytest.raises(ReMeError) as info:
        _importer(tmp_path, name).run_once()
    assert "\n" not in str(info.value) and name in str(info.value)
    assert not (tmp_path / "ws").exists()


def test_symlinks_out_of_the_source_folder_are_not_followed(tmp_path: Path) -> None:
    _install(tmp_path, "claude-code")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "other.jsonl").write_text(LAYOUTS["claude-code"].line("Private, outside the folder.", 8))
    projects = tmp_path / "home" / ".claude" / "projects"
    (projects / "linked").symlink_to(outside)
    (projects / "linked-file.jsonl").symlink_to(outside / "other.jsonl")
    _importer(tmp_path, "claude-code").run_once()
    assert "Private, outside the folder." not in _texts(tmp_path)


def test_a_dialog_folder_linked_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    _install(tmp_path, "pi")
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "ws" / "session" / "dialog").mkdir(parents=True)
    (tmp_path / "ws" / "session" / "dialog" / "pi").symlink_to(outside)
    with pytest.raises(ReMeError):
        _importer(tmp_path, "pi").run_once()
    assert list(outside.iterdir()) == []


def test_unknown_session_format_version_is_skipped_and_counted(tmp_path: Path) -> None:
    _, log = _install(tmp_path, "pi")
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["version"] = 99
    log.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    tally = _importer(tmp_path, "pi").run_once()
    assert tally.messages == 0 and tally.skipped["events of an unknown format version"] > 0


def test_database_of_an_unknown_schema_is_one_clear_line(tmp_path: Path) -> None:
    db = tmp_path / "home" / ".hermes" / "state.db"
    db.parent.mkdir(parents=True)
    sqlite3.connect(db).execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT)").connection.close()
    with pytest.raises(ReMeError, match="unknown version"):
        _importer(tmp_path, "hermes").run_once()


def _wait(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")
