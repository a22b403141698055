"""The change feed: which workspace files may have changed since the last look, told by the kernel.

A scan stats every file, so before a search it cost a 14,000-file workspace
about 120 ms. On Linux the kernel can say what changed instead (inotify): one
watch per folder, and before a search the events that queued up since the last
one are read without waiting. Events are queued as the writing call returns,
so an edit another process finished is always seen by the next search.

Used only where it is sound: on Linux, on a local file system (a network file
system does not report other machines' writes), with no folder reached through a
symlink (one folder would have two names). If the kernel's queue overflows the
feed says so and the caller scans everything once; if watches run out
(fs.inotify.max_user_watches) the caller goes back to throttled scans.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

from reme_mcp.storage.workspace import PRIVATE_DIRS, FileEntry, Workspace

log = logging.getLogger("reme_mcp.index.watch")

# File systems whose changes on other machines or in other kernels inotify never hears of.
_REMOTE = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "afs", "ceph", "glusterfs", "9p", "virtiofs", "vboxsf", "lustre", "gpfs"}
)


def file_system_type(path: Path) -> str | None:
    """The type of the file system `path` lives on, from /proc/self/mountinfo (None if unknown)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    target, best, kind = str(path.resolve()), -1, None
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right:
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, kind = len(point), right.split()[0]
    return kind


class ChangeFeed:
    """inotify watches on every folder of a workspace, drained without blocking."""

    def __init__(self, root: Path, inotify: Any, flags: Any) -> None:
        self.root = str(root)
        self._cut = len(self.root) + 1
        self._inotify = inotify
        self._flags = flags
        self._mask = (
            flags.CREATE
            | flags.DELETE
            | flags.MODIFY
            | flags.ATTRIB
            | flags.CLOSE_WRITE
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.DELETE_SELF
            | flags.MOVE_SELF
            | flags.ONLYDIR
        )
        self._dirs: dict[int, str] = {}  # watch descriptor -> workspace-relative folder ("" is the root)
        self._wds: dict[str, int] = {}
        self.usable = True

    @classmethod
    def open(cls, root: Path) -> ChangeFeed | None:
        """A feed for this workspace, or None where the kernel cannot be trusted to tell every change."""
        if not sys.platform.startswith("linux"):
            return None
        kind = file_system_type(root)
        if kind is None or kind in _REMOTE or kind.startswith("fuse"):
            return None
        try:
            from inotify_simple import INotify, flags

            return cls(root, INotify(nonblocking=True), flags)
        except (ImportError, OSError, AttributeError) as exc:
            log.info("reme-mcp: no file change feed (%s); the workspace is scanned instead", exc)
            return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._inotify.close()
        self.usable = False

    def watch(self, path: str, through_link: bool) -> None:
        """Watch a folder (the walk's on_dir): call before listing it, so nothing written meanwhile is missed."""
        if not self.usable:
            return
        if through_link:
            self.usable = False  # the same folder under two names: events could not be placed
            return
        try:
            wd = self._inotify.add_watch(path, self._mask)
        except OSError as exc:
            log.warning("reme-mcp: cannot watch %s (%s); the workspace is scanned instead", path, exc)
            self.usable = False
            return
        rel = (path[self._cut :] if len(path) > len(self.root) else "").replace(os.sep, "/")
        before = self._dirs.get(wd)  # the same folder watched before under another name (moved)
        if before is not None and before != rel:
            self._wds.pop(before, None)
        self._dirs[wd] = rel
        self._wds[rel] = wd

    def changes(self) -> set[str] | None:
        """Workspace-relative paths (files or folders) that may have changed since the last call.

        None when events were lost (the kernel's queue overflowed): scan everything once.
        """
        f = self._flags
        changed: set[str] = set()
        lost = False
        for event in self._inotify.read(timeout=0):
            if event.mask & f.Q_OVERFLOW:
                lost = True
                continue
            base = self._dirs.get(event.wd)
            if base is None:
                continue
            if event.mask & (f.IGNORED | f.DELETE_SELF | f.MOVE_SELF):
                changed.add(base)
                self._forget(base)
                continue
            name = event.name
            if not name or name[0] == "." or (not base and name in PRIVATE_DIRS):
                continue
            rel = f"{base}/{name}" if base else name
            if event.mask & f.ISDIR and event.mask & (f.MOVED_FROM | f.DELETE):
                self._forget(rel)
            changed.add(rel)
        return None if lost else changed

    def _forget(self, folder: str) -> None:
        """Stop watching a folder that went away or moved, and every folder under it."""
        prefix = f"{folder}/" if folder else ""
        for rel in [r for r in self._wds if r == folder or r.startswith(prefix)]:
            wd = self._wds.pop(rel)
            self._dirs.pop(wd, None)
            with contextlib.suppress(OSError):
                self._inotify.rm_watch(wd)


class FileView:
    """The workspace's memory files, kept current by the change feed once watching starts.

    Until then (and wherever the feed cannot be used) every call walks the
    whole workspace; while watching, only the paths the kernel reported are
    looked at again.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.feed: ChangeFeed | None = None
        self.tried = False  # watching is tried once per process
        self._files: dict[str, FileEntry] = {}

    @property
    def watching(self) -> bool:
        return self.feed is not None and bool(self._files)

    def start_watching(self) -> None:
        """Use the change feed from the next call on, if this workspace can have one."""
        if not self.tried:
            self.tried = True
            self.feed = ChangeFeed.open(self.ws.root)

    def files(self) -> tuple[dict[str, FileEntry], set[str] | None]:
        """Every memory file, and the paths that may have changed since the last call (None: any)."""
        feed = self.feed
        if feed is not None and self._files:
            paths = feed.changes()
            if paths is not None and "" not in paths:
                touched: set[str] = set()
                for rel in paths:
                    touched |= self._look_again(rel)
                if feed.usable:
                    return self._files, touched
        files = {e.path: e for e in self.ws.walk(on_dir=feed.watch if feed is not None else None)}
        if feed is not None and not feed.usable:
            feed.close()
            self.feed = None
        self._files = files if self.feed is not None else {}
        return files, None

    def _look_again(self, rel: str) -> set[str]:
        """Bring the view of one changed path (a file or a folder) up to date; returns the paths it touched."""
        entry = self.ws.entry(rel)
        if entry is not None:
            self._files[rel] = entry
            return {rel}
        touched = {rel}
        if self._files.pop(rel, None) is not None and not (self.ws.root / rel).is_dir():
            return touched  # a file that went: nothing under it
        prefix = f"{rel}/"
        for gone in [p for p in self._files if p.startswith(prefix)]:  # a folder that went or was replaced
            del self._files[gone]
            touched.add(gone)
        folder = self.ws.root / rel
        if self.feed is not None and folder.is_dir():
            for e in self.ws.walk(folder, on_dir=self.feed.watch):
                self._files[e.path] = e
                touched.add(e.path)
        return touched
