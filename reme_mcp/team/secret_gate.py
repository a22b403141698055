"""Sync never pushes a secret: what is about to be committed or pushed is read with `scrub`'s rules.

A team remote is shared with everyone on the team, so it is the one way a secret leaves the
machine. Before each commit the staged files are read (the blobs git would commit, not the work
tree, which may change meanwhile), and before each push every file the outgoing commits add or
change (a commit a person made by hand too). A finding stops the sync with the path, line and
kind, never the value. The way out is the person's: `scrub`, an edit, or an allowance for one
file (`reme-mcp sync --allow PATH`), kept in the workspace's own state for later syncs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reme_mcp.ingest.file_redaction import redacted_file
from reme_mcp.storage.workspace import MAX_INDEXED_BYTES, Workspace
from reme_mcp.team.git import Git, GitError

ALLOWED = ("sync", "allowed")  # under the workspace's state folder: one allowed path a line
_HEADER = "# reme-mcp sync shares these files even when the secret rules flag them (reme-mcp sync --allow)\n"
_LISTED = 3  # findings named in the one line; the rest are counted


@dataclass(frozen=True)
class Held:
    """A finding in a file on its way out: where and what kind (never the value)."""

    path: str
    line: int
    kind: str


class SecretHeld(GitError):
    """Something about to be committed or pushed looks like a secret: nothing was."""


class SecretGate:
    """Reads what a sync would share; refuses in one line when a secret is in it."""

    def __init__(self, ws: Workspace, git: Git) -> None:
        self.ws = ws
        self.git = git
        self._assumed: set[str] = set()  # a dry run's allowances, not recorded
        # (path, blob) pairs read and found clean in this sync: not read again before the push.
        self._clean: set[tuple[str, str]] = set()

    # ---- the person's allowances -----------------------------------------------------------

    def allowed(self) -> set[str]:
        """The allowed paths (read under the sync lock: a link in their place is not followed)."""
        path = self.ws.state_dir / ALLOWED[0] / ALLOWED[1]
        if path.is_symlink() or path.parent.is_symlink() or not path.is_file():
            return set(self._assumed)
        text = path.read_text(encoding="utf-8", errors="replace")
        return self._assumed | {line for line in text.split("\n") if line.strip() and not line.startswith("#")}

    def permit(self, paths: Iterable[str], record: bool) -> None:
        """Share these workspace files even when flagged: recorded for later syncs, or (a dry
        run) assumed for this one only. Call under the sync lock."""
        chosen = [self.ws.relative(self.ws.contained_path(path)) for path in paths]
        known = self.allowed()
        new = [path for path in chosen if path not in known]
        if not record:
            self._assumed.update(new)
        elif new:
            folder = self.ws.state_folder(ALLOWED[0])
            lines = sorted(known | set(new))
            self.ws.write_atomic(folder / ALLOWED[1], _HEADER + "".join(f"{p}\n" for p in lines))

    # ---- what goes out ---------------------------------------------------------------------

    def staged(self, head: str | None, tip: str | None = None) -> list[Held]:
        """Findings in the files staged for the next commit. While merging `tip`, a file staged
        as the remote has it came from there and is not this machine's to hold back."""
        entries = _raw_entries(self.git.out("diff", "--cached", *_RAW, *([head] if head else [])))
        if tip is not None:
            theirs = {path for path, _ in _raw_entries(self.git.out("diff", "--cached", *_RAW, tip))}
            entries = [(path, sha) for path, sha in entries if path in theirs]
        return self._read(entries)

    def outgoing(self, tip: str | None, head: str) -> list[Held]:
        """Findings in every file the commits between the remote's tip and `head` add or change."""
        since = [head, "--not", tip] if tip else [head]
        raw = self.git.out("log", "--no-merges", "--format=", *_RAW, *since)
        return self._read(_raw_entries(raw))

    def worktree(self, paths: Iterable[str]) -> list[Held]:
        """Findings in these work-tree files (a dry run: nothing is staged)."""
        found: list[Held] = []
        allowed = self.allowed()
        for path in sorted(set(paths) - allowed):
            try:
                data = (self.ws.root / path).read_bytes()
            except OSError:
                continue
            found += _findings(path, data)
        return found

    def _read(self, entries: list[tuple[str, str]]) -> list[Held]:
        allowed = self.allowed()
        wanted = sorted(
            {(path, sha) for path, sha in entries if path not in allowed and (path, sha) not in self._clean}
        )
        found: list[Held] = []
        for (path, sha), data in zip(wanted, self.git.blobs([sha for _, sha in wanted]), strict=True):
            held = _findings(path, data)
            if not held:
                self._clean.add((path, sha))
            found += held
        return found


def refuse(found: list[Held], doing: str) -> None:
    """Stop with one line naming where and what, and the ways out (never the value)."""
    if not found:
        return
    named = "; ".join(f"{h.path} line {h.line}: {h.kind}" for h in found[:_LISTED])
    more = f" (and {len(found) - _LISTED} more)" if len(found) > _LISTED else ""
    first = found[0].path
    raise SecretHeld(
        f"sync stopped before {doing}, nothing was pushed: {named}{more} looks like a secret; "
        f"run reme-mcp scrub, edit the file, or share it anyway with reme-mcp sync --allow {first}"
    )


def describe(found: list[Held]) -> list[str]:
    """A dry run's lines: each finding where and what."""
    return [f"  secret: {h.path} line {h.line}: {h.kind} (a sync would stop here)" for h in found]


_RAW = ("--raw", "-z", "--no-renames", "--no-abbrev", "--diff-filter=AM")


def _raw_entries(raw: str) -> list[tuple[str, str]]:
    """(path, new blob id) of each `--raw -z` record; submodules and links hold no text."""
    entries: list[tuple[str, str]] = []
    parts = raw.split("\0")
    index = 0
    while index < len(parts) - 1:
        head = parts[index].lstrip("\n")
        fields = head.lstrip(":").split(" ")
        if head.startswith(":") and len(fields) >= 5:
            if fields[1] not in ("120000", "160000"):
                entries.append((parts[index + 1], fields[3]))
            index += 2
        else:
            index += 1
    return entries


def _findings(path: str, data: bytes) -> list[Held]:
    if len(data) > MAX_INDEXED_BYTES or b"\0" in data[:4096]:
        return []  # as scrub reads the workspace: text within the indexed size
    text = data.decode("utf-8", "replace")
    return [Held(path, line, kind) for line, kind in redacted_file(path, text)[1]]
