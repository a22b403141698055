"""Where memory lives: one workspace per project under a projects root, and a personal workspace.

A project's workspace is `<projects root>/<readable name>-<short id>/`, a normal ReMe workspace,
created on the first write only. The keys it was known by are kept in its private `metadata/`
(never served, never synced), so a project whose strongest key changed (a remote added later,
a repository moved) still finds its workspace by an older key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from reme_mcp.errors import ReMeError
from reme_mcp.projects.identity import Project, short_id
from reme_mcp.storage.files import write_whole
from reme_mcp.storage.workspace import NESTED_MEMORY_MARKER

PERSONAL = "personal"  # the `project` a personal hit carries; never a project folder's name
MARKER = NESTED_MEMORY_MARKER
IDENTITY = "metadata/reme-mcp-project.json"
_FOLDER = re.compile(r"[a-z0-9][a-z0-9._-]{0,40}-[0-9a-f]{10}")


@dataclass(frozen=True)
class KnownProject:
    """A project workspace on disk: its folder name (the `project` of its hits) and path."""

    name: str
    path: Path
    keys: tuple[str, ...]
    root: str  # the work tree it was last written from, for people reading a listing


@dataclass(frozen=True)
class MemoryHome:
    """The projects root and the personal workspace of one person."""

    projects_root: Path
    personal: Path

    def known(self) -> list[KnownProject]:
        """Every project workspace under the root, by name."""
        try:
            folders = sorted(p for p in self.projects_root.iterdir() if _FOLDER.fullmatch(p.name) and p.is_dir())
        except OSError:
            return []
        return [self._known(folder) for folder in folders]

    def _known(self, folder: Path) -> KnownProject:
        keys: tuple[str, ...] = ()
        root = ""
        try:
            data = json.loads((folder / IDENTITY).read_text("utf-8"))
            keys = tuple(k for k in data.get("keys", []) if isinstance(k, str))
            root = str(data.get("root", ""))
        except (OSError, ValueError, AttributeError):
            pass
        return KnownProject(folder.name, folder, keys, root)

    def workspace_of(self, project: Project) -> tuple[str, Path]:
        """The folder name and workspace of `project`: the one it already has, else the one it
        will get at its first write (named after its strongest key)."""
        known = self.known()
        for item in known:
            if _same_project(project, item):
                return item.name, item.path
        name = f"{project.name}-{project.id}"
        return name, self.projects_root / name

    def recorded(self, folder: Path) -> KnownProject | None:
        """The project whose workspace recorded `folder` (or a folder above it) as its place."""
        best: tuple[int, KnownProject] | None = None
        for item in self.known():
            for key in item.keys:
                if key.startswith("path:"):
                    root = Path(key[len("path:") :])
                    if (folder == root or folder.is_relative_to(root)) and (best is None or len(root.parts) > best[0]):
                        best = (len(root.parts), item)
        return best[1] if best else None

    def by_name(self, name: str) -> Path:
        """The workspace a hit's `project` names: `personal` or a project folder's name."""
        if name == PERSONAL:
            return self.personal
        if not _FOLDER.fullmatch(name):
            raise ReMeError(f"project {name!r} is not known: use a project a search result named, or 'personal'")
        path = self.projects_root / name
        if not path.is_dir():
            raise ReMeError(f"project {name!r} has no memory here: `reme-mcp project list` shows the projects")
        return path

    def prepare(self, workspace: Path, project: Project | None) -> None:
        """Before a first write: the folders, their markers, and the project's keys recorded
        (`project` None: a workspace already known, or the personal one)."""
        if workspace == self.personal:
            _mark(self.personal)
            return
        _mark(self.projects_root)
        workspace.mkdir(parents=True, exist_ok=True)
        if project is None:
            return
        identity = workspace / IDENTITY
        known = self._known(workspace)
        keys = tuple(dict.fromkeys((*project.keys, *known.keys)))
        if known.keys == keys and known.root == str(project.root):
            return
        data = json.dumps({"keys": list(keys), "root": str(project.root), "name": project.name}, indent=1)
        write_whole(identity, data + "\n", durable=False)


def _same_project(project: Project, item: KnownProject) -> bool:
    """Whether a workspace on disk is `project`'s: by a remote they share (a clone), the git
    folder (a worktree, the same repository), the first commit when the repository it was made
    for is no longer where it was (a move) and has no other remote (a fork is not the same
    project), or the folder (outside any repository)."""
    mine, theirs = set(project.keys), set(item.keys)
    named = {item.name.rsplit("-", 1)[-1]}
    strong = [key for key in project.keys if key.startswith(("remote:", "gitdir:"))]
    if any(key in theirs or short_id(key) in named for key in strong):
        return True
    # A clone of a repository on this disk names it as its remote, by path.
    if any(f"path:{key[len('remote:') :]}" in theirs for key in strong if key.startswith("remote:/")):
        return True
    commits = {key for key in mine if key.startswith("commit:")}
    if commits & theirs:
        their_remotes = {key for key in theirs if key.startswith("remote:")}
        mine_remotes = {key for key in mine if key.startswith("remote:")}
        if their_remotes and not their_remotes & mine_remotes:
            return False
        return not any(_alive_elsewhere(key, project) for key in theirs if key.startswith("gitdir:"))
    if not project.in_repository:
        return bool({key for key in mine if key.startswith("path:")} & theirs)
    return False


def _alive_elsewhere(gitdir_key: str, project: Project) -> bool:
    """Whether the repository a workspace was made for still exists and is not this one."""
    folder = Path(gitdir_key[len("gitdir:") :])
    return folder.is_dir() and gitdir_key not in project.keys


def _mark(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if not marker.exists():
        marker.write_text("reme-mcp keeps memory here; a workspace that contains this folder leaves it out.\n")
