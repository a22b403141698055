"""What forgetting shows and answers: the plan a person agrees to, and what was removed.

Both are plain data (pydantic, JSON-able): the CLI prints them, the opt-in MCP tool returns
them as structured content, and the memory page can hand a plan back to `forget_apply`.
Paths are workspace-relative POSIX paths; no memory text is ever in them.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from reme_mcp.ops.wording import counted
from reme_mcp.safety.boundary import shown_path

__all__ = ["ForgetPlan", "ForgetResult", "Skipped"]


class _Model(BaseModel):
    model_config = ConfigDict(defer_build=True)


class Skipped(_Model):
    path: str
    why: str = Field(description="Why this selected file is not forgotten, and what to do instead.")


class ForgetPlan(_Model):
    """Exactly what `forget_apply` removes, and what it changes beside."""

    workspace: str = Field(description="The workspace's absolute path.")
    paths: list[str] = Field(default_factory=list, description="The files that go, workspace-relative.")
    day_indexes: list[str] = Field(default_factory=list, description="Day indexes whose block is rebuilt without them.")
    sessions: list[str] = Field(
        default_factory=list, description="Ingested dialogs among them: their sessions are never imported again."
    )
    linked_from: dict[str, list[str]] = Field(
        default_factory=dict,
        description="For a file that goes, the files that still link to it or say they supersede it (left as they are).",
    )
    skipped: list[Skipped] = Field(default_factory=list, description="Selected but not forgotten, with why.")

    def render(self, path: Callable[[str], str] = shown_path) -> str:
        """As text: paths as a model may read them (`shown_path`), or as `path` shows them to a person."""
        if not self.paths:
            lines = ["Nothing to forget: the selection matched no file."]
        else:
            lines = [f"{counted(len(self.paths), 'file')} to forget:"]
            lines += [f"  {path(p)}" for p in self.paths]
        lines += [f"  day index rebuilt: {path(d)}" for d in self.day_indexes]
        lines += [f"  never imported again: {path(s)}" for s in self.sessions]
        for target, sources in self.linked_from.items():
            lines.append(f"  still linked to by (left as is): {path(target)} <- {', '.join(map(path, sources))}")
        lines += [f"  not forgotten: {path(s.path)}: {s.why}" for s in self.skipped]
        return "\n".join(lines)


class ForgetResult(_Model):
    """What `forget_apply` did."""

    status: str = Field(description="forgotten, nothing, declined or refused.")
    removed: list[str] = Field(default_factory=list, description="The files removed from the workspace.")
    already_gone: list[str] = Field(default_factory=list, description="Planned files no longer there.")
    trash: str | None = Field(default=None, description="Where they wait before they are gone (None: removed at once).")
    trash_until: str | None = Field(default=None, description="When the trash of this forgetting is emptied (UTC).")
    day_indexes: list[str] = Field(default_factory=list)
    sessions: list[str] = Field(default_factory=list, description="Dialogs whose sessions are never imported again.")
    linked_from: dict[str, list[str]] = Field(default_factory=dict)
    message: str = Field(default="", description="One line for the person.")

    def render(self, path: Callable[[str], str] = shown_path) -> str:
        """As text: paths as a model may read them (`shown_path`), or as `path` shows them to a person."""
        lines = [self.message] if self.message else []
        if self.removed:
            lines.append(f"Forgot {counted(len(self.removed), 'file')}:")
            lines += [f"  {path(p)}" for p in self.removed]
        lines += [f"  already gone: {path(p)}" for p in self.already_gone]
        lines += [f"  day index rebuilt: {path(d)}" for d in self.day_indexes]
        lines += [f"  never imported again: {path(s)}" for s in self.sessions]
        for target, sources in self.linked_from.items():
            lines.append(f"  still linked to by (left as is): {path(target)} <- {', '.join(map(path, sources))}")
        if self.trash:
            lines.append(
                f"In the trash until {self.trash_until}: {self.trash} (reme-mcp forget --empty-trash removes it now)."
            )
        return "\n".join(lines)
