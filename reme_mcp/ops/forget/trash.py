"""The trash: forgotten files wait here, outside the workspace, until their retention ends.

Under the trash home (`Settings.trash_home`: REME_TRASH_DIR, else the user's data folder, which
cache cleaners leave alone), one private folder per workspace (named as its index folder is), and in
it one folder per forgetting: `<UTC time>-<random>/` holding the files at their workspace paths
and `forgotten.json` (when, until when, which paths). Nothing here is walked, indexed, served
or synced. Each forgetting first removes the folders whose time is up; `empty()` removes all.
A retention of 0 days keeps nothing: the files are removed at once. Forgettings from when the
trash lived in the cache folder are moved into the trash home the first time it is looked at.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from reme_mcp.config import default_trash_home, former_trash_home
from reme_mcp.errors import ReMeError
from reme_mcp.index.home import ensure_folder, unsafe_reason, workspace_key
from reme_mcp.storage.files import fsync_dir
from reme_mcp.storage.workspace import Workspace

MANIFEST = "forgotten.json"
DAY = 86400.0


@dataclass(frozen=True)
class Batch:
    """One forgetting's folder in the trash, and when it is emptied (UTC, ISO 8601)."""

    folder: Path | None
    until: str | None


class Trash:
    """One workspace's trash."""

    def __init__(self, home: Path, ws: Workspace, days: float) -> None:
        self.ws = ws
        self.home = home
        self.folder = home / workspace_key(ws)
        self.days = days
        former = former_trash_home() if home == default_trash_home() else None
        self.former = former / workspace_key(ws) if former is not None and former != home else None

    def sweep(self, now: float | None = None) -> int:
        """Remove the forgettings whose retention is over; how many."""
        now = time.time() if now is None else now
        removed = 0
        for batch in self._batches():
            try:
                until = float(json.loads((batch / MANIFEST).read_text(encoding="utf-8"))["until"])
            except (OSError, ValueError, KeyError, TypeError):
                until = batch.stat().st_mtime + self.days * DAY  # a torn manifest: by the folder's age
            if until <= now:
                shutil.rmtree(batch, ignore_errors=True)
                removed += 1
        return removed

    def empty(self) -> int:
        """Remove every forgetting of this workspace now; how many."""
        batches = self._batches()
        for batch in batches:
            shutil.rmtree(batch, ignore_errors=True)
        return len(batches)

    def _batches(self) -> list[Path]:
        self._move_in_former()
        if not self.folder.is_dir() or self.folder.is_symlink():
            return []
        return sorted(p for p in self.folder.iterdir() if p.is_dir() and not p.is_symlink())

    def take(self, paths: list[str]) -> tuple[Batch, list[str], OSError | None]:
        """Move these workspace files into a new forgetting (or remove them, with no retention).

        Returns the batch, the paths taken out of the workspace, and the error that stopped it
        part-way (None when all went). Call under the workspace's write lock."""
        now = time.time()
        batch = Batch(None, None)
        if self.days > 0:
            self._check_private()
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
            folder = self.folder / f"{stamp}-{secrets.token_hex(3)}"
            ensure_folder(folder)
            until = now + self.days * DAY
            manifest = {"workspace": str(self.ws.root), "forgotten_at": now, "until": until, "paths": paths}
            (folder / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
            batch = Batch(folder, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(until)))
        taken: list[str] = []
        try:
            for rel in paths:
                self._take_one(rel, batch.folder)
                taken.append(rel)
        except OSError as exc:
            return batch, taken, exc
        return batch, taken, None

    def _take_one(self, rel: str, folder: Path | None) -> None:
        source = self.ws.root / rel
        if folder is None:
            source.unlink()
        else:
            target = folder / rel
            ensure_folder(target.parent)
            try:
                os.rename(source, target)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                # Another file system (the cache on its own disk): copied whole, then removed.
                shutil.copy2(source, target, follow_symlinks=False)
                with open(target, "rb+") as fh:
                    os.fsync(fh.fileno())
                source.unlink()
        fsync_dir(source.parent)
        with contextlib.suppress(OSError):  # a folder left empty goes too (git keeps no folders)
            if source.parent != self.ws.root and not any(source.parent.iterdir()):
                source.parent.rmdir()

    def _move_in_former(self) -> None:
        """This workspace's forgettings from the former trash home (the cache), moved here whole."""
        former = self.former
        if former is None or former.is_symlink() or not former.is_dir() or unsafe_reason(former) is not None:
            return
        batches = [p for p in former.iterdir() if p.is_dir() and not p.is_symlink()]
        if batches:
            self._check_private()
        for batch in batches:
            target = self.folder / batch.name
            if not target.exists():
                with contextlib.suppress(OSError):
                    shutil.move(batch, target)  # a rename, or a copy and removal across file systems
        with contextlib.suppress(OSError):
            former.rmdir()  # only when every forgetting moved

    def _check_private(self) -> None:
        for folder in (self.home, self.folder):
            reason = unsafe_reason(folder)
            if reason is not None:
                raise ReMeError(
                    f"the trash folder {folder} is not private ({reason}): make it yours with mode 700, "
                    "or set REME_TRASH_DIR to another folder; nothing was forgotten"
                )
        ensure_folder(self.folder)
