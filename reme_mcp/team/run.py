"""One sync: commit what changed here, fetch, vet, merge, rebuild day indexes, push.

Order and locks: the fetch and the push talk to the network and hold only the sync lock (one
sync at a time per workspace); committing and merging change files and hold the workspace's
write lock too, so a `remember` never lands half-way through a merge. A `remember` made while the
network is slow is committed by the next round. Nothing is ever forced: a push the remote
refuses because it moved on is fetched and merged again; a merge that cannot finish is aborted,
leaving the work tree exactly as it was.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from reme_mcp.errors import os_error_line
from reme_mcp.notes.day_index import DayIndexFile
from reme_mcp.notes.day_notes import DayNotes
from reme_mcp.storage.workspace import Workspace
from reme_mcp.team import changes, renames
from reme_mcp.team.changes import Change
from reme_mcp.team.git import GitError
from reme_mcp.team.repo import DERIVED, EXCLUDED, SEEN, Repo, Upstream
from reme_mcp.team.secret_gate import SecretGate, describe, refuse
from reme_mcp.team.status import SyncStatus
from reme_mcp.team.vetting import Refused, check_not_rewritten, check_untracked, incoming_entries, vet

INCOMING = "refs/reme-mcp/incoming"
MAX_ROUNDS = 5  # pushes refused because the remote moved on meanwhile
# How git says a push lost a race: the branch moved on (non-fast-forward, fetch first), or another
# push updated it between this push's check and its update (cannot lock ref ... but expected).
_MOVED_ON = ("non-fast-forward", "fetch first", "Updates were rejected", "cannot lock ref", "failed to update ref")


class Conflict(GitError):
    """A merge that reme-mcp cannot finish by itself: aborted, nothing lost."""


@dataclass
class SyncReport:
    remote: str
    branch: str
    dry_run: bool = False
    committed: list[Change] = field(default_factory=list)  # local changes committed (or to commit)
    went_out: list[Change] = field(default_factory=list)
    came_in: list[Change] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # incoming note -> where it was kept
    pushed: bool = False
    indexed: int = 0
    # Day indexes the merge could not rebuild (a full disk): the day (and why), left to the
    # process's batch of day indexes, which catches them up as soon as they can be written.
    days_behind: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)  # a dry run's findings in what would go out

    def render(self) -> str:
        verb = "would" if self.dry_run else ""
        where = f"{self.remote}/{self.branch}"
        lines = [f"{'dry run: ' if self.dry_run else ''}sync with {where}"]
        lines.append(f"  commit: {changes.summary(self.committed)}" + (" (would)" if verb and self.committed else ""))
        lines.append(f"  out: {changes.summary(self.went_out)}" + (" (would push)" if verb and self.went_out else ""))
        lines.append(f"  in: {changes.summary(self.came_in)}" + (" (would merge)" if verb and self.came_in else ""))
        lines.extend(f"  kept both: {old} came in as {new}" for old, new in self.renamed.items())
        if self.days_behind:
            why = next(iter(self.days_behind.values()))
            lines.append(
                f"  day indexes behind: {', '.join(self.days_behind)} ({why}); caught up as soon as they can be written"
            )
        lines.extend(self.secrets)
        if not self.dry_run:
            lines.append(f"  index: {self.indexed} {'file' if self.indexed == 1 else 'files'} caught up")
        return "\n".join(lines)


class Sync:
    """Sync one workspace with its remote."""

    def __init__(self, ws: Workspace, interactive: bool = True, status: SyncStatus | None = None) -> None:
        self.ws = ws
        # The process's record of the last sync (ops/memory.py keeps one a workspace): a record
        # this run cannot write is written by it later, and `doctor` shows it meanwhile.
        self.status = status or SyncStatus(ws)
        self.repo = Repo(ws, interactive)
        self.git = self.repo.git
        self.gate = SecretGate(ws, self.git)

    def run(self, dry_run: bool = False, init: str | None = None, allow: tuple[str, ...] = ()) -> SyncReport:
        """One sync (or its plan); the last sync's time and error are recorded for `doctor`.

        `allow`: files the person shares even when the secret rules flag them (recorded for
        later syncs; a dry run only assumes them)."""
        try:
            if init is not None and not dry_run:
                self.repo.init(init)
            elif init is not None and not (self.ws.root / ".git").exists():
                return self._plan_init(init, allow)
            self.repo.check()
            up = self.repo.upstream()
            with self.ws.lock("sync"):
                self.gate.permit(allow, record=not dry_run)
                report = self._plan(up) if dry_run else self._sync(up)
        except (GitError, OSError) as exc:  # OSError: a file of the sync's own (a full disk, a read-only folder)
            if not dry_run and self.ws.root.is_dir():
                self.status.record(str(exc) if isinstance(exc, GitError) else os_error_line(exc, "syncing"))
            raise
        if not dry_run:
            self.status.record(None, came_in=len(report.came_in), went_out=len(report.went_out))
        return report

    # ---- the steps ---------------------------------------------------------------------------

    def _sync(self, up: Upstream) -> SyncReport:
        self.repo.configure()
        report = SyncReport(up.remote, up.branch)
        for _ in range(MAX_ROUNDS):
            tip = self._fetch(up)
            with self.ws.lock("write"):
                report.committed += self._commit_local()
                head = self.repo.head()
                base = self._vet(up, head, tip)
                if tip is not None:
                    self.git.run("update-ref", f"refs/remotes/{up.remote}/{up.branch}", tip)
                    report.came_in += self._diff(base, tip)
                    self._merge(up, head, tip, base, report)
                if self.repo.write_gitignore():
                    self._rebuild(set(), "reme-mcp: .gitignore keeps derived state out of the repository", report)
            if tip is not None:
                self.git.run("update-ref", SEEN, tip)
            head = self.repo.head()
            if head is None or head == tip:
                return report
            report.went_out = self._diff(tip, head)  # what the remote gets (None: all of it)
            refuse(self.gate.outgoing(tip, head), "pushing")
            if self._push(up, head):
                report.pushed = True
                return report
        raise GitError(f"{up.remote} kept moving: {MAX_ROUNDS} pushes were refused; run the sync again")

    def _plan(self, up: Upstream) -> SyncReport:
        """What a sync would do; changes nothing in the work tree or its branches."""
        report = SyncReport(up.remote, up.branch, dry_run=True)
        tip = self._fetch(up)
        head = self.repo.head()
        report.committed = self._status()
        base = self._vet(up, head, tip, committed=False)
        if tip is not None:
            report.came_in = self._diff(base, tip)
        if head is not None and head != tip:
            report.went_out = self._diff(base if tip else None, head)
        found = self.gate.worktree(c.path for c in report.committed if c.status != "D")
        report.secrets = describe(found + (self.gate.outgoing(tip, head) if head else []))
        return report

    def _plan_init(self, url: str, allow: tuple[str, ...]) -> SyncReport:
        """What `--init URL` would commit from a workspace that is no git work tree yet, and any
        secret in it; changes nothing (git is not even started)."""
        if not self.ws.root.is_dir():
            raise GitError(f"dry run: no workspace at {self.ws.root}; --init {url} would fetch one")
        report = SyncReport(url, "(its default branch)", dry_run=True)
        paths = sorted(entry.path for entry in self.ws.walk())
        report.committed = [Change("A", path) for path in paths]
        with self.ws.lock("sync"):
            self.gate.permit(allow, record=False)
            report.secrets = describe(self.gate.worktree(paths))
        return report

    def _fetch(self, up: Upstream) -> str | None:
        """The remote branch's tip, fetched into a private ref (None: the remote has no such branch yet)."""
        self.git.run("update-ref", "-d", INCOMING, check=False)
        args = ["-c", "fetch.fsckObjects=true", "fetch", "-q", "--no-tags", "--no-recurse-submodules"]
        args += [*self.git.remote_options(up.url, "upload-pack"), up.remote, f"+refs/heads/{up.branch}:{INCOMING}"]
        done = self.git.run(*args, check=False)
        if done.code != 0:
            if "couldn't find remote ref" in done.err:
                return None
            raise self.git.error(args, done)
        return self.repo.ref(INCOMING)

    def _vet(self, up: Upstream, head: str | None, tip: str | None, committed: bool = True) -> str | None:
        """Stop on a rewritten remote or on what must not come in; the merge base (None: none)."""
        where = f"{up.remote}/{up.branch}"
        seen = self.repo.ref(SEEN)
        check_not_rewritten(seen, tip, tip is not None and seen is not None and self.repo.is_ancestor(seen, tip), where)
        if tip is None:
            return None
        base = self.repo.merge_base(head, tip) if head else None
        if base == tip:
            return base
        if base is None:
            raw = self.git.out("ls-tree", "-r", "-z", "--full-tree", tip)
        else:
            raw = self.git.out("diff-tree", "-r", "-z", "--no-renames", base, tip)
        entries = incoming_entries(raw, whole_tree=base is None)
        vet(entries, where)
        if committed:  # (a dry run has not committed: a new note here is untracked, and no obstacle)
            check_untracked(
                [path for _, path in entries],
                lambda path: os.path.lexists(self.ws.root / path),
                lambda path: head is not None and self.git.ok("cat-file", "-e", f"{head}:{path}"),
                where,
            )
        return base

    def _status(self) -> list[Change]:
        out = self.git.out(
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
            ".",
            *EXCLUDED,
        )
        found = []
        for record in out.split("\0"):
            if len(record) > 3:
                xy, path = record[:2], record[3:]
                found.append(Change("A" if xy in ("??", "A ") else "D" if "D" in xy else "M", path))
        return found

    def _commit_local(self) -> list[Change]:
        """Commit every change here (derived state left out); what was committed."""
        self._stage_all()
        self._hold_secrets(merging=False)
        staged = changes.parse_name_status(self.git.out("diff", "--cached", "--name-status", "-z", "--no-renames"))
        if not staged:
            return []
        person = sum(1 for c in staged if c.status == "M" and changes.kind(c.path) == "day index" and self._edited(c))
        subject = f"reme-mcp: {changes.summary(staged, person)}"
        body = f"{subject}\n\n{changes.listing(staged)}\n\nCommitted by reme-mcp sync on {socket.gethostname()}.\n"
        self.git.run(*self.repo.identity(), "commit", "-q", "--no-verify", "-F", "-", input=body.encode("utf-8"))
        return staged

    def _stage_all(self) -> None:
        """Stage every change, then unstage derived state whatever a .gitignore from elsewhere says."""
        self.git.run("add", "-A", "--", ".")
        self.git.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *DERIVED)

    def _hold_secrets(self, merging: bool) -> None:
        """Stop before a commit that would hold a secret: staged nothing (the merge aborted)."""
        head = self.repo.head()
        found = self.gate.staged(head, self.repo.ref("MERGE_HEAD") if merging else None)
        if not found:
            return
        if merging:
            self.git.run("merge", "--abort", check=False)
        elif head is not None:
            self.git.run("reset", "-q", check=False)
        else:
            self.git.run("read-tree", "--empty", check=False)
        refuse(found, "committing")

    def _edited(self, change: Change) -> bool:
        before = self.git.run("show", f"HEAD:{change.path}", check=False).out
        try:
            after = (self.ws.root / change.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return True
        return changes.person_edited(before, after)

    def _diff(self, base: str | None, to: str) -> list[Change]:
        if base is None:
            out = self.git.out("ls-tree", "-r", "-z", "--name-only", "--full-tree", to)
            return [Change("A", p) for p in out.split("\0") if p]
        return changes.parse_name_status(self.git.out("diff", "--name-status", "-z", "--no-renames", base, to))

    def _merge(self, up: Upstream, head: str | None, tip: str, base: str | None, report: SyncReport) -> None:
        """Merge `tip` into the work tree, under the write lock; day indexes rebuilt; committed."""
        if head is not None and self.repo.is_ancestor(tip, head):
            return  # nothing new there
        local = self._diff(base, head) if head is not None else []
        days = {d for c in report.came_in + local if (d := changes.day_of(c.path))}
        if head is None or self.repo.is_ancestor(head, tip):
            self.git.run("merge", "-q", "--ff-only", tip)
            self._rebuild(days, f"reme-mcp: day indexes rebuilt after sync from {up.remote}/{up.branch}", report)
            return
        args = ["merge", "-q", "--no-ff", "--no-commit", *(["--allow-unrelated-histories"] if base is None else [])]
        done = self.git.run(*args, tip, check=False)
        if done.code != 0:
            report.renamed.update(self._resolve(up, done.err or done.out, report))
        days |= {d for new in report.renamed.values() if (d := changes.day_of(new))}
        message = f"reme-mcp: merge {up.remote}/{up.branch}: {changes.summary(report.came_in)}"
        self._rebuild(days, message, report, merging=True)

    def _resolve(self, up: Upstream, said: str, report: SyncReport) -> dict[str, str]:
        """Keep both of two same-name notes; any other conflict aborts the merge with one line."""
        stuck = renames.unmerged(self.git)
        other = [u for u in stuck if not renames.is_same_name_note(u)]
        if not stuck or other:
            self.git.run("merge", "--abort", check=False)
            if not stuck:
                line = said.strip().splitlines()[-1] if said.strip() else "git merge failed"
                raise Conflict(f"merging {up.remote}/{up.branch} failed: {line}; nothing was merged")
            raise Conflict(
                f"{other[0].path}: changed on both sides in the same place; nothing was merged, your changes are "
                f"committed here: merge it by hand (git merge {up.remote}/{up.branch}) and sync again"
            )
        taken: set[str] = set()
        moved = {u.path: renames.keep_both(self.ws, self.git, u, taken) for u in stuck}
        arrived = [c.path for c in report.came_in if c.status == "A" and c.path not in moved]
        relinked = renames.relink(self.ws, arrived, moved)
        if relinked:
            self.git.run("add", "--", *relinked)
        return moved

    def _rebuild(self, days: set[str], message: str, report: SyncReport, merging: bool = False) -> None:
        """Rebuild the day indexes of these days from their notes, and commit (the merge, if one is open).

        A day index that cannot be written now is derived: the merge is committed without it and
        the day is named in `report.days_behind` for the process to catch up."""
        index_files, notes = DayIndexFile(self.ws), DayNotes(self.ws)
        for day in sorted(days):
            if (self.ws.root / "daily" / day).is_dir():
                try:
                    index_files.refresh(day, notes.notes(day))
                except OSError as exc:
                    report.days_behind[day] = os_error_line(exc, "rebuilding the day index")
        self._stage_all()
        self._hold_secrets(merging)
        if merging or self.git.run("diff", "--cached", "--quiet", check=False).code != 0:
            self.git.run(*self.repo.identity(), "commit", "-q", "--no-verify", "-m", message)

    def _push(self, up: Upstream, head: str) -> bool:
        """Push; False when the remote moved on meanwhile (fetched and merged again)."""
        args = ["push", "-q", "--no-verify", *self.git.remote_options(up.url, "receive-pack")]
        args += [up.remote, f"{head}:refs/heads/{up.branch}"]
        done = self.git.run(*args, check=False)
        if done.code == 0:
            self.git.run("update-ref", SEEN, head)
            self.git.run("update-ref", f"refs/remotes/{up.remote}/{up.branch}", head)
            return True
        if any(sign in done.err for sign in _MOVED_ON) and "hook declined" not in done.err:
            return False
        raise self.git.error(args, done)


__all__ = ["Conflict", "Refused", "Sync", "SyncReport"]
