"""Memory kept before each project had its own workspace: where it may be, so `doctor` and
`reme-mcp project` can point at it and `reme-mcp project adopt` can sort it."""

from __future__ import annotations

from pathlib import Path

# What makes a folder a workspace with memory in it (workspace-format.md).
MEMORY_FOLDERS = ("daily", "digest", "session", "resource")
# The plugins' workspace before projects: in the host's data folder for the plugin.
PLUGIN_DATA_VARIABLES = ("PLUGIN_DATA", "CLAUDE_PLUGIN_DATA")


def old_workspaces(environ: dict[str, str], project_root: Path | None, memory_home: Path) -> list[Path]:
    """The workspaces written before projects that hold memory: the plugin's, the project's
    `./.reme`, and a `~/.reme` used as one workspace."""
    found: list[Path] = []
    for variable in PLUGIN_DATA_VARIABLES:
        value = environ.get(variable, "")
        if value and "${" not in value:
            found.append(Path(value) / "workspace")
    if project_root is not None:
        found.append(project_root / ".reme")
    found.append(memory_home)
    seen: set[Path] = set()
    kept = []
    for folder in found:
        try:
            real = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if real not in seen and _holds_memory(real):
            seen.add(real)
            kept.append(real)
    return kept


def _holds_memory(folder: Path) -> bool:
    try:
        return any(any((folder / name).iterdir()) for name in MEMORY_FOLDERS if (folder / name).is_dir())
    except OSError:
        return False
