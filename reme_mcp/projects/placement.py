"""Which project a session serves, resolved on the server and never asked of the model.

The candidates come in order: a folder the person named (`--project`, REME_PROJECT_DIR), the
client's MCP roots, the project folder a host puts in the server's environment, and the
server's working directory, unless that is the plugin's own folder (Codex and OpenClaw start
plugin servers there): then the folder of the host process that started us (or the one its
command line names, `codex -C DIR`). The first that lies in a project wins. When none does (a
host that gives no roots and starts servers in the home folder or `/`), the session reads and
writes the personal workspace alone and every answer says so: never a silent mix.
docs/clients.md has what each host gives, as measured.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from reme_mcp.projects.home import PERSONAL, MemoryHome
from reme_mcp.projects.identity import Project, find_project

# Project folders hosts put in their servers' environment (docs/clients.md has each host's):
# Claude Code's, and Cursor's list of workspace folders (the first is taken).
HOST_PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "WORKSPACE_FOLDER_PATHS")
PERSON_VARIABLE = "REME_PROJECT_DIR"
# Where plugin hosts say the plugin's own files are; a server started there is not in a project.
PLUGIN_ROOT_VARIABLES = ("PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT")
# How far up the process tree the host's folder is looked for (launcher, front, host).
MAX_ANCESTORS = 4
# Hosts whose command line may name the session's folder apart from their own (`-C`/`--cd`),
# by the name of the program that starts plugin servers (Codex's native binary).
CD_FLAG_HOSTS = frozenset({"codex"})


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
        value = environ.get(variable, "").split(os.pathsep)[0].strip()
        if value and "${" not in value:  # a host that passed its placeholder through unexpanded
            found.append(Candidate(variable, Path(value)))
    if cwd is not None and not is_plugin_folder(cwd, environ):
        found.append(Candidate("working directory", cwd))
    elif cwd is not None:
        host = host_folder(cwd, environ)
        if host is not None:
            found.append(Candidate("the host's folder", host))
    return found


def is_plugin_folder(folder: Path, environ: dict[str, str]) -> bool:
    """Whether `folder` holds this plugin's own files (a host's plugin cache), not a project."""
    for variable in PLUGIN_ROOT_VARIABLES:
        value = environ.get(variable)
        if value and _same(Path(value), folder):
            return True
    # A plugin as hosts copy it: the manifest and launcher, and no repository around them (a
    # checkout of reme-mcp itself is a project like any other). A repository at the home folder
    # (dotfiles) is no project's (identity.py), so the walk up stops there.
    if not ((folder / "plugin.json").is_file() and (folder / "bin" / "reme-mcp").is_file()):
        return False
    home = Path.home()
    for parent in (folder, *folder.parents):
        if parent == home:
            return True
        if (parent / ".git").exists():
            return False
    return True


def host_folder(cwd: Path, environ: dict[str, str]) -> Path | None:
    """The working folder of the nearest process above this one that is not in the plugin's
    folder: the host that started us, where it runs (Linux's /proc; elsewhere none)."""
    pid = os.getpid()
    for _ in range(MAX_ANCESTORS):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
            folder = Path(os.readlink(f"/proc/{pid}/cwd"))
        except (OSError, ValueError, IndexError):
            return None
        if pid <= 1:
            return None
        if not _same(folder, cwd) and not is_plugin_folder(folder, environ):
            return _session_folder(pid, folder)
    return None


def _session_folder(pid: int, folder: Path) -> Path:
    """The folder a host process works in: its own, or the one its command line names when the
    host works elsewhere than it runs (`codex -C DIR`, `codex exec --cd DIR`: Codex stays where
    it was started and tells a plugin server nothing of DIR)."""
    try:
        argv = [
            arg.decode("utf-8", "surrogateescape") for arg in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        ]
    except OSError:
        return folder
    if not argv or Path(argv[0]).name not in CD_FLAG_HOSTS:
        return folder
    named = _cd_flag(argv[1:])
    if named is None:
        return folder
    chosen = folder / named  # a relative DIR is relative to where the host runs
    return chosen if chosen.is_dir() else folder


def _cd_flag(args: list[str]) -> str | None:
    """The last `-C DIR` / `--cd DIR` (also `-CDIR`, `-C=DIR`, `--cd=DIR`) before `--`."""
    found = None
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            break
        if arg in ("-C", "--cd"):
            found = next(rest, None)
        elif arg.startswith("--cd="):
            found = arg[len("--cd=") :]
        elif arg.startswith("-C"):
            found = arg[2:].removeprefix("=")
    return found or None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def root_folder(uri: str) -> Path | None:
    """The local folder a `file://` root names; other schemes name no folder here."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = unquote(parsed.path)
    return Path(path) if path.startswith("/") else None


# What a person adds to a host's configuration so the server knows the project, by the name the
# host gives in its `initialize` (clientInfo.name); docs/clients.md has the measured details.
HOST_FIXES: dict[str, str] = {
    "codex-mcp-client": "start codex inside the project or with -C /path/to/project (a configured server "
    'may also pin one with args = ["--project", "/path/to/project"] in [mcp_servers.reme] of '
    "~/.codex/config.toml)",
    "claude-code": "start claude inside the project",
    "opencode": "start opencode inside the project",
    "pi": "start pi inside the project",
    "openclaw-bundle-mcp": 'add "cwd": "/path/to/project" (or "--project" in "args") to mcp.servers.reme in '
    "~/.openclaw/openclaw.json",
    "cursor-vscode": 'add "--project", "${workspaceFolder}" to "args" of reme in the project\'s .cursor/mcp.json',
    "mcp": 'add "REME_PROJECT_DIR": "/path/to/project" to the env of this host\'s reme server entry',
}


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
        # A folder that is gone (a session's, read back from a host's log): the project whose
        # workspace recorded it, if any.
        known = None if candidate.folder.exists() else home.recorded(candidate.folder)
        if known is not None:
            return Placement(home, None, known.name, known.path, f"{candidate.source}: {known.root} (gone)", None)
    where = ", ".join(f"{c.source} {c.folder}" for c in tried) or "nothing"
    how = fix or f"start the server in the project's folder, or set {PERSON_VARIABLE}=/path/to/project for it"
    notice = (
        f"no project is known (the client gave {where}): this session reads and writes the personal "
        f"memory alone; to keep project memory apart, {how}"
    )
    return Placement(home, None, None, None, f"none ({where})", notice)
