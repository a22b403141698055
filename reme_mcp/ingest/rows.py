"""Read a host's SQLite database without ever getting in its way.

Read-only URI (`mode=ro`): nothing is written, not even a journal; a WAL database
is read through its WAL like any reader, and a short busy timeout means a host
mid-checkpoint costs us a skipped tick, never a lock on the host.

A WAL database whose host is not running has no -wal file, and even a read-only
reader would create -wal and -shm beside it. Then it is opened `immutable`: with
no WAL there is nothing uncommitted, and a host that starts meanwhile writes to a
new WAL, not to the main file we read (until a checkpoint, long after our read).
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from pathlib import Path


def _wal_without_log(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    is_wal = len(header) == 20 and header[18] == 2 and header[19] == 2
    return is_wal and not Path(f"{path}-wal").exists()


def connect_ro(path: Path) -> sqlite3.Connection:
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    if _wal_without_log(path):
        uri += "&immutable=1"
    conn = sqlite3.connect(uri, uri=True, timeout=0.2, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    return conn


def tables(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """Each table's column names, to tell a known schema from an unknown one."""
    found: dict[str, set[str]] = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        found[name] = {row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')}
    return found


def schema_problem(path: Path, source: str, needed: dict[str, set[str]]) -> str | None:
    """One line when `path` is missing, unreadable or lacks the tables and columns the parser reads."""
    if not path.is_file():
        return f"{source}: no database at {path}"
    try:
        conn = connect_ro(path)
        try:
            have = tables(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"{source}: cannot read {path} ({exc})"
    for table, columns in needed.items():
        missing = columns - have.get(table, set())
        if missing:
            return (
                f"{source}: {path} is of an unknown version (table {table} lacks {', '.join(sorted(missing))}); "
                "nothing was imported"
            )
    return None
