"""A project, found from any folder inside it: the enclosing git work tree and the keys that name it.

The same project must resolve the same way from a subfolder, a symlinked path, a second clone
or worktree, and after the repository moved on disk. So a project is known by several keys,
strongest first: its remotes' URLs (normalised: every clone of one repository has them), its
git folder (shared by its worktrees), its first commit (a repository without a remote, after
it moved), and its real path (a folder outside any repository). home.py says how they match. The folder is untrusted: git
reads it with hooks and the file-system monitor off, and nothing in it runs.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from reme_mcp.storage.file_names import legal_name
from reme_mcp.team.git import Git, GitError

# A folder's repository is asked for its first commit with a deadline: a huge or broken
# repository costs a session its project key, never its answers.
FIRST_COMMIT_TIMEOUT = 3.0
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(.+)$")
_UNSAFE_NAME = re.compile(r"[^a-z0-9._-]+")


@dataclass(frozen=True)
class Project:
    """A project: its work tree (or folder), a readable name and the keys that identify it."""

    root: Path
    name: str
    # Strongest first: "remote:<url>", "gitdir:<path>", "commit:<sha>", "path:<real path>".
    keys: tuple[str, ...]
    in_repository: bool

    @property
    def id(self) -> str:
        """A short id from the strongest key: the same on every machine for a shared remote."""
        return short_id(self.keys[0])


def short_id(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:10]


def find_project(folder: Path, home: Path | None = None) -> Project | None:
    """The project `folder` belongs to, or None when it is no project's (`/`, the home folder).

    The project is the enclosing git work tree; a work tree at the home folder or `/` (a
    repository of dotfiles) is too wide to be one, so a folder under it is its own project.
    """
    try:
        real = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_dir():
        real = real.parent
    home_dir = (home or Path.home()).resolve()
    if real == Path(real.anchor) or real == home_dir:
        return None
    top = _work_tree(real, stop_at={home_dir, Path(real.anchor)})
    if top is None:
        return Project(real, readable_name(real.name), (f"path:{real}",), in_repository=False)
    keys = [f"remote:{url}" for url in _remote_urls(top)]
    dirs = _git_dirs(top)
    if dirs is not None:
        keys.append(f"gitdir:{dirs[1]}")
    first = _first_commit(top)
    if first:
        keys.append(f"commit:{first}")
    keys.append(f"path:{top}")
    remote_name = keys[0].rstrip("/").rsplit("/", 1)[-1] if keys[0].startswith("remote:") else ""
    return Project(top, readable_name(remote_name or top.name), tuple(keys), in_repository=True)


def readable_name(text: str) -> str:
    """A folder-name-safe, lower-case form of a repository's name (at most 40 characters)."""
    name = _UNSAFE_NAME.sub("-", text.lower()).strip(".-_")[:40].strip(".-_")
    # The folder is `<name>-<id>`: `con.x` would make `con.x-<id>`, a Windows device name.
    return legal_name(name, "project")[:40].strip(".-_") if name else "project"


def normalise_remote(url: str) -> str:
    """One spelling for every way to write a remote: scheme, user, `.git`, case of the host and
    a trailing slash dropped; `git@host:org/repo.git` and `https://host/org/repo` agree."""
    url = url.strip()
    if "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme.lower() == "file":
            return _path_remote(rest)
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1].lower()
        if scheme.lower() in ("ssh", "git", "https", "http"):
            host = host.split(":", 1)[0]  # a port says how, not what
    else:
        scp = _SCP_LIKE.match(url)
        if scp is None or os.path.isabs(url):
            return _path_remote(url)
        host, path = scp.group(1).lower(), scp.group(2)
    path = path.strip("/")
    path = path[:-4] if path.endswith(".git") else path
    return f"{host}/{path.strip('/')}"


def _path_remote(path: str) -> str:
    """A remote on local disk: its real path, without a trailing `.git` or slash."""
    try:
        real = str(Path(path).resolve())
    except (OSError, RuntimeError):
        real = path
    real = real.rstrip("/")
    return real[:-4] if real.endswith(".git") else real


def _work_tree(start: Path, stop_at: set[Path]) -> Path | None:
    """The nearest folder from `start` up that holds `.git` (a folder, or a worktree's file)."""
    for folder in (start, *start.parents):
        if folder in stop_at:
            return None
        if (folder / ".git").exists():
            return folder
    return None


def _git_dirs(top: Path) -> tuple[Path, Path] | None:
    """The work tree's git folder and the common one (where a worktree's config lives)."""
    dot = top / ".git"
    try:
        if dot.is_dir():
            git_dir = dot
        else:
            line = dot.read_text("utf-8", errors="replace").strip()
            if not line.startswith("gitdir:"):
                return None
            git_dir = (top / line[len("gitdir:") :].strip()).resolve()
        common_file = git_dir / "commondir"
        common = git_dir
        if common_file.is_file():
            common = (git_dir / common_file.read_text("utf-8", errors="replace").strip()).resolve()
        return git_dir, common
    except (OSError, RuntimeError, ValueError):
        return None


def _remote_urls(top: Path) -> list[str]:
    """The remotes' URLs, `origin` first, normalised; read from the config file, nothing run."""
    dirs = _git_dirs(top)
    if dirs is None:
        return []
    try:
        text = (dirs[1] / "config").read_text("utf-8", errors="replace")[:1_000_000]
    except OSError:
        return []
    urls: dict[str, str] = {}
    section: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        header = re.match(r'^\[\s*remote\s+"([^"]*)"\s*\]', line)
        if header:
            section = header.group(1)
            continue
        if line.startswith("["):
            section = None
            continue
        if section is not None and section not in urls:
            key, sep, value = line.partition("=")
            if sep and key.strip().lower() == "url" and value.strip():
                urls[section] = normalise_remote(value.strip().strip('"'))
    ordered = sorted(urls, key=lambda name: (name != "origin", name))
    return list(dict.fromkeys(urls[name] for name in ordered))


def _first_commit(top: Path) -> str | None:
    """The repository's first commit (the smallest root, for merged histories), or None."""
    try:
        done = Git(top, interactive=False).run(
            "rev-list", "--max-parents=0", "HEAD", check=False, timeout=FIRST_COMMIT_TIMEOUT
        )
    except GitError:
        return None
    roots = sorted(line.strip() for line in done.out.splitlines() if re.fullmatch(r"[0-9a-f]{40,64}", line.strip()))
    return roots[0] if done.code == 0 and roots else None
