"""A project's git checkout as search sees it: which paths are in the tree now, cached per HEAD and index.

The listing (`git ls-files`) is taken once and kept until HEAD, the branch it names or the
index changes, which a few stats of the git folder tell (a search pays no git call while
they hold). The repository is untrusted, as for its identity (identity.py): git runs with
hooks, the file-system monitor, pagers, replace objects and system configuration off, its
work tree pinned to the project's folder, and nothing it configures runs. A path is only
ever looked up inside the work tree, and no symbolic link on the way to it is followed.
"""

from __future__ import annotations

import enum
import os
import re
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reme_mcp.projects import path_history
from reme_mcp.projects.path_history import Departure
from reme_mcp.team.git import Git, GitError

# A listing that takes longer than this is not waited for: the checks are skipped, the answers stay.
LISTING_TIMEOUT = 3.0
# A folder with more tracked files than this is too large to hold a listing of in memory.
MAX_LISTED = 2_000_000
# A folder git could not tell the git folder of is asked again after this many seconds.
RETRY_AFTER = 60.0
# A gitlink (a submodule) in `git ls-files -z --stage`, anchored at its record's start so a tab or
# a new line in a path stays in the path.
_GITLINK = re.compile(r"(?:^|\0)160000 [0-9a-f]{40,64} [0-3]\t([^\0]+)")


def safe_git(root: Path) -> Git:
    """git in an untrusted work tree, for reading only: nothing the repository configures runs,
    and nothing is written (no optional index refresh, no lazy fetch of a partial clone)."""
    return Git(
        root,
        interactive=False,
        env={
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_WORK_TREE": str(root),
        },
    )


class Presence(enum.Enum):
    PRESENT = "present"
    ABSENT = "absent"
    UNKNOWN = "unknown"  # inside a submodule, or behind a symbolic link: not judged


@dataclass(frozen=True)
class Snapshot:
    """The tracked files and folders at one HEAD and index state."""

    head: str | None  # the commit HEAD names; None in a repository with no commit yet
    files: frozenset[str]
    folders: frozenset[str]
    submodules: tuple[str, ...]
    # What the paths a note names were judged at this state (stale_refs.py), dropped with it: an
    # untracked file made or removed since is seen at the next index write or HEAD move.
    judged: dict[tuple[str, ...], Any] = field(default_factory=dict)


class Checkout:
    """One work tree's snapshot and the history of its gone paths, refreshed when its state moves."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git = safe_git(root)
        self._lock = threading.Lock()
        self._dirs: tuple[str, str] | None = None
        self._dirs_tried = -RETRY_AFTER
        self._state: tuple[object, ...] | None = None
        self._snapshot: Snapshot | None = None
        self._history = path_history.History(self.git)

    def snapshot(self) -> Snapshot | None:
        """The tree now, or None when git cannot list it (not a repository, too slow, too large):
        a failure is not retried until the state moves (or, for the git folder, for a while)."""
        with self._lock:
            if self._dirs is None:
                if time.monotonic() - self._dirs_tried < RETRY_AFTER:
                    return None
                self._dirs_tried = time.monotonic()
                self._dirs = self._git_dirs()
                if self._dirs is None:
                    return None
            state = _state(*self._dirs)
            if state != self._state:
                self._snapshot = self._listing()
                self._state = state
                self._history.at(self._snapshot.head if self._snapshot else None)
            return self._snapshot

    def presence(self, snap: Snapshot, path: str) -> Presence:
        """Whether a path a note names is in the checkout: tracked, a tracked folder, the tail of a
        tracked path (`payments/retry.py` for `src/payments/retry.py`) or on disk untracked."""
        bare = path.rstrip("/")
        parts = bare.split("/")
        if not bare or bare.startswith("/") or any(p in ("", ".", "..") for p in parts):
            return Presence.UNKNOWN
        if any(bare == sub or bare.startswith(sub + "/") for sub in snap.submodules):
            return Presence.PRESENT if bare in snap.files else Presence.UNKNOWN
        if bare in snap.files or bare in snap.folders:
            return Presence.PRESENT
        tail = "/" + bare
        if any(known.endswith(tail) for known in snap.files) or any(known.endswith(tail) for known in snap.folders):
            return Presence.PRESENT  # a scan, for the few paths not found at once; judged once per snapshot
        on_disk = _on_disk(self.root, parts)
        if on_disk is None:
            return Presence.UNKNOWN
        return Presence.PRESENT if on_disk else Presence.ABSENT

    def departures(self, paths: list[str]) -> dict[str, Departure]:
        """When each of these paths last left HEAD's history (the ones that never did are left out)."""
        return self._history.departures([p.rstrip("/") for p in paths])

    def moved_to(self, path: str, departure: Departure) -> str | None:
        """Where git's rename detection says a path went, followed while the target left too."""
        snap = self.snapshot()
        bare, hops = path.rstrip("/"), 0
        while snap is not None and hops < path_history.MAX_HOPS:
            target = self._history.renamed_to(bare, departure)
            if target is None:
                return None
            if target in snap.files or target in snap.folders:
                return target
            later = self._history.departures([target]).get(target)
            if later is None:
                return None
            bare, departure, hops = target, later, hops + 1
        return None

    def _git_dirs(self) -> tuple[str, str] | None:
        try:
            done = self.git.run("rev-parse", "--git-dir", "--git-common-dir", check=False, timeout=LISTING_TIMEOUT)
        except GitError:
            return None
        lines = done.out.splitlines()
        if done.code != 0 or len(lines) != 2:
            return None
        return str((self.root / lines[0]).resolve()), str((self.root / lines[1]).resolve())

    def _listing(self) -> Snapshot | None:
        try:
            head = self.git.run("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False, timeout=LISTING_TIMEOUT)
            listed = self.git.run("ls-files", "-z", check=False, timeout=LISTING_TIMEOUT)
            if listed.code != 0:
                return None
            files = frozenset(name for name in listed.out.split("\0") if name)
            submodules: tuple[str, ...] = ()
            if ".gitmodules" in files:  # only then can an entry be a submodule: its mode says which
                staged = self.git.run("ls-files", "-z", "--stage", check=False, timeout=LISTING_TIMEOUT)
                submodules = tuple(_GITLINK.findall(staged.out)) if staged.code == 0 else tuple(files)
        except GitError:
            return None
        return snapshot_of(files, submodules, head.out.strip() if head.code == 0 else None)


def snapshot_of(files: frozenset[str], submodules: tuple[str, ...], head: str | None) -> Snapshot | None:
    """The snapshot of a listing of tracked files (a listing of 100k files is read in tens of ms)."""
    if len(files) > MAX_LISTED:
        return None
    folders: set[str] = set()
    for parent in {path.rpartition("/")[0] for path in files}:
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    return Snapshot(head, files, frozenset(folders), submodules)


def _on_disk(root: Path, parts: list[str]) -> bool | None:
    """Whether the path exists in the work tree, looked at part by part without following links:
    None when a folder on the way is a symbolic link (it may lead out of the tree)."""
    here = root
    for i, part in enumerate(parts):
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return False
        except (OSError, ValueError):
            return None
        if i < len(parts) - 1:
            if stat.S_ISLNK(mode):
                return None
            if not stat.S_ISDIR(mode):
                return False
    return True


def _state(git_dir: str, common: str) -> tuple[object, ...]:
    """What changes when HEAD moves, a branch it names moves, or the index is written: HEAD's
    text and the stats of the branch's ref, packed refs, reftable list and index (a few stats:
    this runs on every search that names a path)."""
    head = _small_text(os.path.join(git_dir, "HEAD"))
    ref = head[len("ref: ") :].strip() if head and head.startswith("ref: ") else ""
    ref_file = os.path.join(common, ref) if ref.startswith("refs/") and ".." not in ref.split("/") else None
    watched = (
        os.path.join(git_dir, "index"),
        os.path.join(common, "packed-refs"),
        os.path.join(common, "reftable", "tables.list"),
        ref_file,
    )
    return (head, *(_stat(path) for path in watched))


def _stat(path: str | None) -> tuple[int, int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _small_text(path: str) -> str | None:
    """A regular file's text when it is small (HEAD): never a pipe or device someone left there."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
            return None
        with open(path, "rb") as handle:
            return handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None


class Checkouts:
    """Each served work tree's Checkout, made on first use and kept for the process."""

    def __init__(self) -> None:
        self._open: dict[Path, Checkout] = {}
        self._lock = threading.Lock()

    def of(self, root: Path) -> Checkout:
        with self._lock:
            found = self._open.get(root)
            if found is None:
                found = self._open[root] = Checkout(root)
            return found
