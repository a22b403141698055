"""What the upkeep commands answer: `doctor`'s report (the workspace, the index, the project)
and `reindex`'s result, each rendering itself as text for a person or a client that reads text."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from reme_mcp.ops.results import _Result


class IndexReport(_Result):
    directory: str = Field(description="Where the index is kept.")
    exists: bool
    files: int = Field(description="Files the index holds.")
    chunks: int = Field(description="Searchable chunks in all.")
    stale_files: int = Field(description="Files that changed since they were indexed (the next search syncs them).")
    files_without_text: int = Field(description="Files listed but not searchable (binary or too big).")


class ProjectReport(_Result):
    """Which project a session from here serves, where it came from, and where its memory lives."""

    mode: Literal["per project", "one workspace"]
    project: str | None = Field(default=None, description="The project's name (its workspace folder's name).")
    root: str | None = Field(default=None, description="The project's folder: its git work tree, or the folder.")
    source: str = Field(description="What named the project: --project, roots, a host variable, the folder.")
    workspace: str = Field(description="Where `remember` writes (the project's workspace, else the personal one).")
    workspace_exists: bool
    personal: str | None = Field(default=None, description="The personal workspace every project reads.")
    keys: list[str] = Field(default_factory=list, description="What identifies the project (remotes, first commit).")
    notice: str | None = None
    unsorted: list[str] = Field(
        default_factory=list, description="Workspaces from before projects still holding memory: adopt them."
    )

    def render(self) -> str:
        if self.mode == "one workspace":
            return f"one workspace (--workspace or REME_WORKSPACE): {self.workspace}"
        lines = [f"project: {self.project or '(none known)'}"]
        if self.root:
            lines.append(f"folder: {self.root}")
        lines.append(f"from: {self.source}")
        made = "" if self.workspace_exists else " (made at the first remember)"
        lines.append(f"memory: {self.workspace}{made}")
        lines.append(f"personal: {self.personal}")
        lines.extend(f"key: {key}" for key in self.keys)
        if self.notice:
            lines.append(f"note: {self.notice}")
        for folder in self.unsorted:
            lines.append(
                f"unsorted: {folder} holds memory from before projects: reme-mcp project adopt --from {folder}"
            )
        return "\n".join(lines)


IN_LINE = "nothing: every day index lists its notes, and the index holds every file as it is"


class DoctorReport(_Result):
    """The workspace, its files by kind, the index's state and the configuration."""

    workspace: str
    workspace_exists: bool
    project: ProjectReport | None = Field(default=None, description="The project served, where it came from.")
    timezone: str
    today: str
    files_by_kind: dict[str, int]
    version: str
    index: IndexReport | None = Field(default=None, description="Absent when there is no workspace yet.")
    ingest: dict[str, Any] | str = Field(description="Each followed source's cursor, or why ingest is off.")
    sync: dict[str, Any] | str = Field(default="off", description="The last team sync and its error (reme-mcp sync).")
    secrets_refused: dict[str, Any] | str = Field(
        default="none", description="Secrets remember refused, by kind (never a value), and the last time."
    )
    semantic: dict[str, Any] | str = Field(
        default="off",
        description="Search by meaning: the model, its status and how far embedding is, or why it is off.",
    )
    behind: dict[str, str] | str = Field(
        default=IN_LINE,
        description="Derived files not in line with the notes (after a full disk, say), and what catches each up.",
    )

    def render(self) -> str:
        lines: list[str] = []
        for key, value in self.model_dump(exclude_none=True).items():
            if key == "project" and self.project is not None:
                lines.append("project:")
                lines.extend(f"  {line}" for line in self.project.render().splitlines())
            else:
                lines.extend(_readable(key, value, ""))
        return "\n".join(lines)


def _readable(key: str, value: Any, indent: str) -> list[str]:
    """A report's field as a person reads it: words for names, yes/no, nested fields indented."""
    label = key.replace("_", " ")
    if isinstance(value, dict):
        if not value:
            return [f"{indent}{label}: none"]
        return [f"{indent}{label}:"] + [line for k, v in value.items() for line in _readable(str(k), v, indent + "  ")]
    if isinstance(value, list | tuple):
        return [f"{indent}{label}: {', '.join(map(str, value)) or 'none'}"]
    if isinstance(value, bool):
        return [f"{indent}{label}: {'yes' if value else 'no'}"]
    return [f"{indent}{label}: {value}"]


class ReindexResult(_Result):
    files: int
    chunks: int
    directory: str

    def render(self) -> str:
        return f"indexed {self.files} files, {self.chunks} chunks into {self.directory}"
