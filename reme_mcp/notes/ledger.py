"""The ledger: which note holds which request or content, so a retry stores nothing twice.

Derived state under metadata/ like the index: losing it loses no memory. A retry
with the same request_id then falls back to the content check, and the content
check to the index (MemoryIndex.find_body). It exists because the index commit
of a note may still be pending when the next writer checks for duplicates.

Its records come from a folder anyone may have written (a workspace from elsewhere),
so a stored path counts only when it is a daily note the walk itself would serve;
the request_id is never written, only its hash.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Collection
from pathlib import Path

from reme_mcp.storage.batching import CommitBatcher
from reme_mcp.storage.documents import body_hash, split_front_matter
from reme_mcp.storage.files import read_regular
from reme_mcp.storage.workspace import Workspace


class Ledger:
    """Small JSON records, one file each, written atomically (not fsynced: derived state).

    A record that cannot be written now (a full disk, a read-only folder) is owed, and written
    by a batch as soon as it can be (reme_mcp/storage/batching.py); meanwhile a retry finds its
    note on disk, or in the index.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._owed: dict[tuple[str, str], str] = {}  # (folder, file name) -> the note's path
        self._owed_lock = threading.Lock()
        self._batch = CommitBatcher(
            self._write_owed,
            lambda: len(self._owed),
            idle=0.0,
            max_age=0.0,
            doing="recording the request ledger",
            meanwhile="a retry finds its note on disk, and the ledger is caught up once it can be written",
        )

    def _request_file(self, request_hash: str, folder: Path | None = None) -> Path:
        key = hashlib.sha256(request_hash.encode("utf-8")).hexdigest()[:40]
        return (folder or self.ws.state_dir / "requests") / f"{key}.json"

    def _body_file(self, digest: str, folder: Path | None = None) -> Path:
        return (folder or self.ws.state_dir / "bodies") / f"{digest[:40]}.json"

    def _stored_path(self, record: Path) -> str | None:
        if record.parent.is_symlink():  # a link someone put in our folder's place: not our record
            return None
        try:
            stored = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        path = stored.get("path") if isinstance(stored, dict) else None
        if not isinstance(path, str) or len(path.split("/")) != 3 or not path.startswith("daily/"):
            return None
        return path if self.ws.entry(path) is not None else None  # inside, not a link out, a regular file

    def request(self, request_hash: str) -> str | None:
        """The note a request (by the hash of its id) stored, if that note still exists."""
        return self._stored_path(self._request_file(request_hash))

    def body(self, digest: str) -> str | None:
        """The note stored with this body, if it still exists and still holds it."""
        path = self._stored_path(self._body_file(digest))
        if path is None:
            return None
        try:
            text = read_regular(self.ws.root / path, path).decode("utf-8")
        except (OSError, ValueError):
            return None
        _, body_start = split_front_matter(text)
        return path if body_hash("\n".join(text.split("\n")[body_start:])) == digest else None

    def sweep(self) -> int:
        """Remove the temp files of writers killed mid-record (storage.temp_files); returns how many."""
        folders = [self.ws.state_dir / kind for kind in ("requests", "bodies")]
        return sum(self.ws.remove_stale_temp_files(folder) for folder in folders if not folder.is_symlink())

    @property
    def owed(self) -> int:
        """Records this process could not write yet."""
        return len(self._owed)

    def record(self, request_hash: str | None, digest: str, path: str) -> None:
        """Record the note holding this request (when it has an id) and this body; what cannot be
        written now is written by the batch once it can."""
        records = [self._body_file(digest)]
        if request_hash:
            records.append(self._request_file(request_hash))
        with self._owed_lock:
            self._owed.update({(r.parent.name, r.name): path for r in records})
        try:
            self._write_owed()
        except OSError:
            self._batch.wrote()

    def _write_owed(self) -> None:
        with self._owed_lock:
            owed = dict(self._owed)
        for (kind, name), path in owed.items():
            self.ws.write_atomic(self.ws.state_folder(kind) / name, json.dumps({"path": path}), durable=False)
            with self._owed_lock:
                if self._owed.get((kind, name)) == path:
                    del self._owed[(kind, name)]

    def forget(self, paths: Collection[str], kinds: tuple[str, ...] = ("requests", "bodies")) -> int:
        """Remove every record naming one of these notes (forgotten, or rewritten by scrub); how many.

        Records are named by hashes, so every one is read: forgetting is rare and explicit."""
        with self._owed_lock:  # a record still owed to the disk is never written for them
            self._owed = {k: p for k, p in self._owed.items() if not (k[0] in kinds and p in paths)}
        removed = 0
        for kind in kinds:
            folder = self.ws.state_dir / kind
            if folder.is_symlink() or not folder.is_dir():
                continue
            for record in folder.glob("*.json"):
                try:
                    stored = json.loads(record.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                if isinstance(stored, dict) and stored.get("path") in paths:
                    record.unlink(missing_ok=True)
                    removed += 1
        return removed
