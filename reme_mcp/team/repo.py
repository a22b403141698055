"""The workspace as a git work tree, and the settings reme-mcp keeps in its local configuration.

Everything here is local to the clone (`.git/config`, `.git/info/`): a remote's files cannot
change it. The one shared file written is `.gitignore`, so derived state stays out even of the
commits a person makes by hand.
"""

from __future__ import annotations

import shlex
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from reme_mcp.storage.workspace import NESTED_MEMORY_MARKER, Workspace
from reme_mcp.team.git import Git, GitError

DRIVER = "reme-day-index"
# The highest-precedence attributes (info/attributes beats every .gitattributes): bytes are kept as
# they are (no end-of-line conversion, no filter), files merge as text (a remote's `merge=union`
# would silently duplicate lines), and day indexes go through reme-mcp's driver (driver.py).
ATTRIBUTES = f"""# Written by reme-mcp: local to this clone, above any .gitattributes a remote sends.
* -text -eol -ident -filter -working-tree-encoding merge=text
/daily/*.md merge={DRIVER}
"""
# Derived state and writers' temp files: never committed (pathspecs, whatever .gitignore says).
# The marker of a personal workspace (storage/workspace.py) is this machine's, not the team's.
EXCLUDED = (
    ":(exclude,top)metadata",
    ":(exclude,top)mem_session",
    ":(exclude,glob)**/.*.tmp-*",
    f":(exclude,top){NESTED_MEMORY_MARKER}",
)
DERIVED = (":(top)metadata", ":(top)mem_session", ":(glob)**/.*.tmp-*", f":(top){NESTED_MEMORY_MARKER}")
IGNORED_LINES = ("/metadata/", "/mem_session/", ".*.tmp-*", f"/{NESTED_MEMORY_MARKER}")
_IGNORE_HEADER = "# reme-mcp: derived state and temp files stay out of the repository"
DEFAULT_BRANCH = "main"
SEEN = "refs/reme-mcp/seen"  # the remote's tip as this clone last merged or pushed it


@dataclass(frozen=True)
class Upstream:
    remote: str
    url: str
    branch: str


class Repo:
    """The workspace's repository, reached only through `Git`."""

    def __init__(self, ws: Workspace, interactive: bool = True) -> None:
        self.ws = ws
        self.git = Git(ws.root, interactive)

    # ---- what it is ------------------------------------------------------------------------

    def check(self) -> None:
        """The workspace is the top of its own work tree, or one line saying what to do."""
        if not self.ws.root.is_dir():
            raise GitError(f"no workspace at {self.ws.root}: run reme-mcp sync --init REMOTE to fetch one")
        done = self.git.run("rev-parse", "--show-toplevel", check=False)
        if done.code != 0:
            raise GitError(f"{self.ws.root} is not a git work tree: run reme-mcp sync --init REMOTE first")
        top = Path(done.out.strip()).resolve()
        if top != self.ws.root:
            raise GitError(
                f"the workspace {self.ws.root} is inside the git work tree {top}: "
                "sync needs the workspace to be the top of its own repository (reme-mcp sync --init REMOTE makes one)"
            )

    def init(self, url: str) -> None:
        """Make the workspace a work tree with `url` as its remote `origin` (kept if it already is one).

        A new repository takes the remote's default branch (main, master, ...), and the branch
        tracks it, so a person's own `git status` and `git pull` work too.
        """
        self.ws.root.mkdir(parents=True, exist_ok=True)
        if not (self.ws.root / ".git").exists():
            self.git.run("init", "-q", "-b", DEFAULT_BRANCH)
        self.check()
        remote = self.upstream_name()
        known = self.git.run("remote", "get-url", remote, check=False)
        if known.code == 0:
            if known.out.strip() != url:
                # Another remote: what this clone saw of the old one says nothing of the new one's history.
                self.git.run("update-ref", "-d", SEEN, check=False)
                self.git.run("remote", "set-url", remote, url)
        else:
            self.git.run("remote", "add", remote, url)
        default = self._remote_default(url)
        if default is not None and self.head() is None:
            self.git.run("symbolic-ref", "HEAD", f"refs/heads/{default}")
        branch = self.branch()
        self.git.run("config", "--local", f"branch.{branch}.remote", remote)
        self.git.run("config", "--local", f"branch.{branch}.merge", f"refs/heads/{branch}")

    def _remote_default(self, url: str) -> str | None:
        """The branch the remote's HEAD names (None: an empty remote), a name git accepts."""
        args = ["ls-remote", "--symref", *self.git.remote_options(url, "upload-pack"), url, "HEAD"]
        for line in self.git.out(*args).splitlines():
            target, _, name = line.removeprefix("ref: ").partition("\t")
            if line.startswith("ref: ") and name == "HEAD" and target.startswith("refs/heads/"):
                branch = target.removeprefix("refs/heads/")
                if self.git.ok("check-ref-format", "--branch", branch):
                    return branch
        return None

    def branch(self) -> str:
        done = self.git.run("symbolic-ref", "--short", "-q", "HEAD", check=False)
        if done.code != 0:
            raise GitError("the workspace's repository is not on a branch (detached HEAD): check out a branch first")
        return done.out.strip()

    def upstream_name(self) -> str:
        done = self.git.run("config", "--get", f"branch.{self.branch()}.remote", check=False)
        return done.out.strip() or "origin"

    def upstream(self) -> Upstream:
        branch = self.branch()
        remote = self.upstream_name()
        done = self.git.run("remote", "get-url", remote, check=False)
        if done.code != 0:
            raise GitError(f"the workspace's repository has no remote {remote!r}: run reme-mcp sync --init REMOTE")
        merge = self.git.run("config", "--get", f"branch.{branch}.merge", check=False).out.strip()
        return Upstream(remote, done.out.strip(), merge.removeprefix("refs/heads/") or branch)

    def head(self) -> str | None:
        done = self.git.run("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
        return done.out.strip() or None

    def ref(self, name: str) -> str | None:
        done = self.git.run("rev-parse", "--verify", "-q", f"{name}^{{commit}}", check=False)
        return done.out.strip() or None

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.git.ok("merge-base", "--is-ancestor", older, newer)

    def merge_base(self, a: str, b: str) -> str | None:
        done = self.git.run("merge-base", a, b, check=False)
        return done.out.strip() or None

    def identity(self) -> list[str]:
        """Options naming the committer when the person's git names no one (a fresh CI box)."""
        if self.git.run("config", "user.email", check=False).out.strip():
            return []
        host = socket.gethostname() or "localhost"
        return ["-c", "user.name=reme-mcp", "-c", f"user.email=reme-mcp@{host}"]

    # ---- the local settings ----------------------------------------------------------------

    def configure(self) -> None:
        """Write the merge driver, attributes and excludes (every sync: the interpreter may move)."""
        driver = f"{shlex.quote(sys.executable)} -m reme_mcp.team.driver %O %A %B %L %P"
        self.git.run("config", "--local", f"merge.{DRIVER}.name", "reme-mcp: day index, its block rebuilt")
        self.git.run("config", "--local", f"merge.{DRIVER}.driver", driver)
        info = Path(self.git.out("rev-parse", "--git-path", "info").strip())
        info = info if info.is_absolute() else self.ws.root / info
        info.mkdir(parents=True, exist_ok=True)
        _write_if_changed(info / "attributes", ATTRIBUTES)
        exclude = info / "exclude"
        current = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
        missing = [line for line in IGNORED_LINES if line not in current.splitlines()]
        if missing:
            lead = "" if current.endswith("\n") or not current else "\n"
            _write_if_changed(exclude, current + lead + "\n".join(missing) + "\n")

    def write_gitignore(self) -> bool:
        """Add reme-mcp's lines to .gitignore when missing (after merging: a remote's file comes first)."""
        path = self.ws.root / ".gitignore"
        if path.is_symlink():
            raise GitError(".gitignore in the workspace is a symbolic link: replace it with a plain file")
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        missing = [line for line in IGNORED_LINES if line not in current.splitlines()]
        if not missing:
            return False
        lead = "" if not current or current.endswith("\n") else "\n"
        self.ws.write_atomic(path, current + lead + "\n".join([_IGNORE_HEADER, *missing]) + "\n")
        return True


def _write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
