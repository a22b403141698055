"""What `remember` says of the older notes a new one may replace (may_replace.py finds them)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from reme_mcp.safety.boundary import shown_path, wrap


class MayReplace(BaseModel):
    """An older note the stored one reads as a newer version of (same subject, another value)."""

    model_config = ConfigDict(defer_build=True)

    path: str
    date: str
    line: str = Field(description="The older note's fact, one line (memory text, escaped).")


def versions_said(may_replace: list[MayReplace], added: list[str]) -> str:
    """The sentences a remember's text answer adds for them: the links just added, or the notes the
    new one may replace and how to confirm it."""
    if added:
        return f" Its supersedes now names {', '.join(shown_path(p) for p in added)}."
    if not may_replace:
        return ""
    lines = "\n".join(f"{o.path} ({o.date}): {o.line}" for o in may_replace)
    paths = ", ".join(f'"{o.path}"' for o in may_replace)
    return (
        f"\nIt may replace {len(may_replace)} older note(s) on the same subject:\n{wrap(lines, 'remember')}\n"
        f"If it does, call remember again with the same request_id and supersedes: [{paths}]."
    )
