"""Which project a session serves, resolved on the server and never asked of the model.

The candidates come in order: a folder the person named (`--project`, REME_PROJECT_DIR), the
client's MCP roots, the project folder a host puts in the server's environment, and the
server's working directory. The first that lies in a project wins. When none does (a host
that gives no roots and starts servers in the home folder or `/`), the session reads and
writes the personal workspace alone and every answer says so: never a silent mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from reme_mcp.projects.home import PERSONAL, MemoryHome
from reme_mcp.projects.identity import Project, find_project

# Project folders hosts put in their servers' environment (docs/clients.md has each host's).
HOST_PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR",)
PERSON_VARIABLE = "REME_PROJECT_DIR"


@dataclass(frozen=True)
class Candidate:
    """A folder that may name the project, and where it came from ("roots", "CLAUDE_PROJECT_DIR"...)."""

    source: str
    folder: Path


@dataclass(frozen=True)
class Placement:
    """The workspaces a session reads and writes."""

    home: MemoryHome
    project: Project | None
    # The project's folder name (a hit's `project`) and workspace, when a project is known.
    name: str | None
    workspace: Path | None
    source: str  # where the project came from, or why none is known
    notice: str | None  # one line for every answer when no project is known

    @property
    def write_target(self) -> tuple[str, Path]:
        """Where a `remember` without a scope goes: the project, else the personal workspace."""
        if self.name is not None and self.workspace is not None:
            return self.name, self.workspace
        return PERSONAL, self.home.personal


def candidates(
    explicit: Path | None, roots: list[str] | None, environ: dict[str, str], cwd: Path | None
) -> list[Candidate]:
    """The folders to try, in order; `roots` are the client's root URIs (None: it declared none)."""
    found: list[Candidate] = []
    if explicit is not None:  # --project, else REME_PROJECT_DIR (config.py)
        found.append(Candidate("--project", explicit))
    for uri in roots or []:
        folder = root_folder(uri)
        if folder is not None:
            found.append(Candidate("roots", folder))
    for variable in HOST_PROJECT_VARIABLES:
        value = environ.get(variable, "")
        if value and "${" not in value:  # a host that passed its placeholder through unexpanded
            found.append(Candidate(variable, Path(value)))
    if cwd is not None:
        found.append(Candidate("working directory", cwd))
    return found


def root_folder(uri: str) -> Path | None:
    """The local folder a `file://` root names; other schemes name no folder here."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = unquote(parsed.path)
    return Path(path) if path.startswith("/") else None


# What a person adds to a host's configuration so the server knows the project, by the name the
# host gives in its `initialize` (clientInfo.name); docs/clients.md has the measured details.
HOST_FIXES: dict[str, str] = {}


def host_fix(client: str | None) -> str | None:
    """The configuration line that names the project for this client, where one is known."""
    return HOST_FIXES.get((client or "").strip().lower())


def place(home: MemoryHome, tried: list[Candidate], fix: str | None = None, user_home: Path | None = None) -> Placement:
    """The first candidate in a project decides; with none, the personal workspace and a notice."""
    for candidate in tried:
        if not candidate.folder.is_absolute():
            continue
        project = find_project(candidate.folder, user_home)
        if project is not None:
            name, workspace = home.workspace_of(project)
            return Placement(home, project, name, workspace, f"{candidate.source}: {project.root}", None)
    where = ", ".join(f"{c.source} {c.folder}" for c in tried) or "nothing"
    how = fix or f"start the server in the project's folder, or set {PERSON_VARIABLE}=/path/to/project for it"
    notice = (
        f"no project is known (the client gave {where}): this session reads and writes the personal "
        f"memory alone; to keep project memory apart, {how}"
    )
    return Placement(home, None, None, None, f"none ({where})", notice)
