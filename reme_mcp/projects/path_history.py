"""When a path left a repository's history, and where git's rename detection says it went.

Asked only for paths a note names that are not in the checkout, once per HEAD: the answers
are kept until HEAD moves (a commit, a branch switch, a rebase rewrites what "since" means).
A lookup that git cannot answer in time is kept as "never left", so such a path is not
flagged: a false "gone" is worse than none.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from reme_mcp.team.git import Git, GitError

HISTORY_TIMEOUT = 2.0
# Paths asked of git at once: one `git log` walks the history for all of them.
BATCH = 64
# Renames followed from the named path to where it lives now (a -> b -> c).
MAX_HOPS = 4
# git's safe reading options for history: no external diff, no text conversion, no signature check.
_LOG_OPTIONS = ("--no-ext-diff", "--no-textconv", "--no-show-signature", "--no-color")


@dataclass(frozen=True)
class Departure:
    """The commit, on HEAD's history, in which a path last stopped being in the tree."""

    commit: str
    date: str  # YYYY-MM-DD, the commit's committer date


class History:
    """The departures and renames of paths, cached for one HEAD."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self._head: str | None = None
        self._left: dict[str, Departure | None] = {}
        self._renames: dict[str, dict[str, str]] = {}  # commit -> old path -> new path
        self._lock = threading.Lock()

    def at(self, head: str | None) -> None:
        """HEAD is now `head`: what was learnt of another HEAD is dropped."""
        with self._lock:
            if head != self._head:
                self._head, self._left, self._renames = head, {}, {}

    def departures(self, paths: list[str]) -> dict[str, Departure]:
        with self._lock:
            head = self._head
            unknown = [p for p in dict.fromkeys(paths) if p not in self._left]
        if head is not None:
            for start in range(0, len(unknown), BATCH):
                found = self._ask(head, unknown[start : start + BATCH])
                with self._lock:
                    if head == self._head:
                        self._left.update(found)
        with self._lock:
            return {p: left for p in paths if (left := self._left.get(p)) is not None}

    def renamed_to(self, path: str, departure: Departure) -> str | None:
        """Where `path` (a file or a folder) went in the commit it left in, when that was a rename."""
        with self._lock:
            renames = self._renames.get(departure.commit)
        if renames is None:
            renames = self._renames_in(departure.commit)
            with self._lock:
                self._renames[departure.commit] = renames
        if path in renames:
            return renames[path]
        # A folder: where its files went, when they all went to one folder.
        moved = {
            new[: len(new) - len(old) + len(path)]
            for old, new in renames.items()
            if old.startswith(path + "/") and new.endswith(old[len(path) :])
        }
        return moved.pop() if len(moved) == 1 else None

    def _ask(self, head: str, paths: list[str]) -> dict[str, Departure | None]:
        """Each path's last deletion on HEAD's history (`None`: it never left, or git did not say)."""
        found: dict[str, Departure | None] = dict.fromkeys(paths)
        try:
            done = self.git.run(
                "log", *_LOG_OPTIONS, "--no-renames", "--diff-filter=D", "--name-only", "-z",
                "--format=%x01%H%x00%cs", head, "--", *paths,
                check=False, timeout=HISTORY_TIMEOUT,
            )  # fmt: skip
        except GitError:
            return found
        if done.code != 0:
            return found
        for commit_block in done.out.split("\x01")[1:]:
            commit, _, rest = commit_block.partition("\0")
            date, _, names = rest.partition("\0")
            for name in names.lstrip("\n").split("\0"):
                for path in paths:
                    if found[path] is None and (name == path or name.startswith(path + "/")):
                        found[path] = Departure(commit, date)
        return found

    def _renames_in(self, commit: str) -> dict[str, str]:
        """The renames git's detection finds in one commit, against its first parent."""
        try:
            done = self.git.run(
                "diff-tree", *_LOG_OPTIONS[:2], "-r", "-z", "-M", "--name-status", f"{commit}^1", commit,
                check=False, timeout=HISTORY_TIMEOUT,
            )  # fmt: skip
        except GitError:
            return {}
        if done.code != 0:
            return {}
        fields = done.out.split("\0")
        renames: dict[str, str] = {}
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i]
            width = 3 if status[:1] in ("R", "C") else 2
            if status.startswith("R") and i + 2 < len(fields):
                renames[fields[i + 1]] = fields[i + 2]
            i += width
        return renames
