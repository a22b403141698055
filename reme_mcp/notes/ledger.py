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
from collections.abc import Collection
from pathlib import Path

from reme_mcp.storage.documents import body_hash, split_front_matter
from reme_mcp.storage.files import read_regular
from reme_mcp.storage.workspace import Workspace


class Ledger:
    """Small JSON records, one file each, written atomically (not fsynced: derived state)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

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
        """Remove the temp files of writers killed mid-record (older than a minute); returns how many."""
        folders = [self.ws.state_dir / kind for kind in ("requests", "bodies")]
        return sum(self.ws.remove_stale_temp_files(folder) for folder in folders if not folder.is_symlink())

    def record_request(self, request_hash: str | None, path: str) -> None:
        if request_hash:
            record = self._request_file(request_hash, self.ws.state_folder("requests"))
            self.ws.write_atomic(record, json.dumps({"path": path}), durable=False)

    def record_body(self, digest: str, path: str) -> None:
        self.ws.write_atomic(
            self._body_file(digest, self.ws.state_folder("bodies")), json.dumps({"path": path}), durable=False
        )

    def forget(self, paths: Collection[str], kinds: tuple[str, ...] = ("requests", "bodies")) -> int:
        """Remove every record naming one of these notes (forgotten, or rewritten by scrub); how many.

        Records are named by hashes, so every one is read: forgetting is rare and explicit."""
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
