"""The contract of the memory operations: each one's limits (from `limits`), and its typed result.

Each result model becomes a tool's output schema and renders itself as compact text for
clients that read only text. Memory text in these models is already escaped or wrapped
in the <reme-context> boundary.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reme_mcp.ops.limits import (
    MAX_QUERY_SHOWN,
    Direction,
)
from reme_mcp.ops.stale.marks import StaleRef, stale_line
from reme_mcp.ops.versions.results import MayReplace, versions_said
from reme_mcp.safety.boundary import escape, inside, one_line, quoted_path, shown_path, wrap
from reme_mcp.storage.documents import split_front_matter

__all__ = [
    "DailyListResult",
    "DailyNote",
    "Day",
    "GraphEdge",
    "GraphNode",
    "MayReplace",
    "ReadResult",
    "RememberResult",
    "SearchHit",
    "SearchResult",
    "TraverseResult",
    "shown_query",
]


class _Result(BaseModel):
    # A model's validator is built when it is first used, not at import: a server answers its
    # first search before the other tools' results are ever made.
    model_config = ConfigDict(defer_build=True)


def shown_query(query: str) -> str:
    return query if len(query) <= MAX_QUERY_SHOWN else query[: MAX_QUERY_SHOWN - 1] + "…"


class SearchHit(_Result):
    path: str = Field(description="Workspace-relative path of the file that matched.")
    start_line: int = Field(description="First line (1-based) of the chunk that matched.")
    end_line: int = Field(description="Last line (inclusive) of the chunk that matched.")
    score: float = Field(description="Relevance on the index's own scale; only the order matters.")
    name: str | None = Field(default=None, description="Front-matter name, where the file has one.")
    description: str | None = Field(default=None, description="Front-matter description, where present.")
    date: str | None = Field(default=None, description="The note's date (YYYY-MM-DD), where known.")
    snippet: str = Field(description="The matching text, cut to the budget, inside <reme-context>.")
    superseded_by: list[str] = Field(
        default_factory=list,
        description="The notes that replace this one (their front matter says so); empty when it is current.",
    )
    possibly_outdated_by: list[str] = Field(
        default_factory=list,
        description="Newer notes that read as another version of the same fact; a hint, not a correction.",
    )
    by_meaning: bool = Field(
        default=False,
        description="Found by meaning (the semantic stage), not by the query's words: check that it answers.",
    )
    project: str | None = Field(
        default=None,
        description="The project this comes from ('personal': the person's own memory); pass it to read.",
    )
    stale_refs: list[StaleRef] = Field(
        default_factory=list,
        description="Files and folders of the project's git checkout it names that are gone or renamed now.",
    )


class SearchResult(_Result):
    query: str
    results: list[SearchHit]
    total_hits: int = Field(description="How many chunks matched in all, before the limit.")
    truncated: bool = Field(description="Whether the character budget cut any snippet.")
    notice: str | None = Field(default=None, description="Said when no project is known, with the fix.")

    def render(self) -> str:
        query = one_line(repr(shown_query(self.query)))
        if not self.results:
            return _noticed(f"No memory matched {query}.", self.notice)
        lines = [f"{len(self.results)} of {self.total_hits} hits for {query}:"]
        for i, hit in enumerate(self.results, start=1):
            # Name and description are memory text: they go inside the hit's boundary.
            label = " - ".join(x for x in (hit.name, hit.description) if x)
            when = f" ({hit.date})" if hit.date else ""
            meaning = " [by meaning]" if hit.by_meaning else ""
            lines.append(
                f"{i}. {shown_path(hit.path)}#L{hit.start_line}-L{hit.end_line}{_of(hit.project)}{when}{meaning}"
                f"{_currency(hit)}"
            )
            block = inside(hit.snippet, stale_line(hit.stale_refs)) if hit.stale_refs else hit.snippet
            block = inside(block, label) if label else block
            # A path that is not plain is workspace text: given exactly, inside the boundary.
            lines.append(block if shown_path(hit.path) == hit.path else inside(block, f"path: {quoted_path(hit.path)}"))
        if self.truncated:
            lines.append("(snippets were cut to the budget: use read for the whole text)")
        return _noticed("\n".join(lines), self.notice)


def _of(project: str | None) -> str:
    """A hit's project after its path; project names are folder names reme-mcp made, plain text."""
    return f" [{project}]" if project else ""


def _noticed(text: str, notice: str | None) -> str:
    return f"Note: {notice}\n{text}" if notice else text


def _currency(hit: SearchHit) -> str:
    if hit.superseded_by:
        return f" [superseded by {', '.join(shown_path(p) for p in hit.superseded_by)}]"
    if hit.possibly_outdated_by:
        return f" [possibly outdated: newer {', '.join(shown_path(p) for p in hit.possibly_outdated_by)}]"
    return ""


class ReadResult(_Result):
    path: str
    start_line: int
    end_line: int = Field(description="Last line returned (inclusive); 0 for an empty file.")
    total_lines: int
    content: str = Field(description="The lines, inside <reme-context>.")
    metadata: dict[str, Any] | None = Field(default=None, description="Front matter, where the file has it.")
    truncated: bool
    next_line: int | None = Field(default=None, description="Where to continue reading when truncated.")
    superseded_by: list[str] = Field(
        default_factory=list, description="The notes that replace this one; empty when it is current."
    )
    project: str | None = Field(
        default=None,
        description="The project this comes from ('personal': the person's own memory); pass it to read.",
    )
    notice: str | None = Field(default=None, description="Said when no project is known, with the fix.")

    def render(self) -> str:
        head = (
            f"{shown_path(self.path)}{_of(self.project)} lines {self.start_line}-{self.end_line} of {self.total_lines}"
        )
        if self.superseded_by:
            head += f" [superseded by {', '.join(shown_path(p) for p in self.superseded_by)}]"
        tail = f"\n(truncated: continue with start_line={self.next_line})" if self.truncated else ""
        return _noticed(f"{head}\n{self.content}{tail}", self.notice)


class GraphNode(_Result):
    path: str
    kind: Literal["file", "folder"]
    depth: int
    name: str | None = None
    description: str | None = None
    exists: bool = Field(default=True, description="False for a link target that is not in the workspace.")
    project: str | None = Field(
        default=None,
        description="The project this comes from ('personal': the person's own memory); pass it to read.",
    )


class GraphEdge(_Result):
    source: str
    target: str
    kind: Literal["link", "contains"]


class TraverseResult(_Result):
    path: str
    direction: Direction | None = None
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    omitted: int = Field(default=0, description="Entries left out to keep the answer bounded.")
    notice: str | None = Field(default=None, description="Said when no project is known, with the fix.")

    def render(self) -> str:
        lines = [f"{self.path or '(workspace root)'}: {len(self.nodes)} nodes, {len(self.edges)} edges"]
        for node in self.nodes:
            label = " - ".join(x for x in (node.name, node.description) if x)
            mark = "/" if node.kind == "folder" else ""
            missing = " (missing)" if not node.exists else ""
            lines.append(f"{'  ' * node.depth}{node.path}{mark}{_of(node.project)}{missing} {label}".rstrip())
        for edge in self.edges:
            if edge.kind == "link":
                lines.append(f"link: {edge.source} -> {edge.target}")
        if self.omitted:
            lines.append(f"({self.omitted} more entries left out)")
        # Paths, names and descriptions all come from the workspace: the whole answer is memory text.
        return _noticed(wrap("\n".join(lines), "traverse"), self.notice)


class DailyNote(_Result):
    path: str
    name: str | None = None
    description: str | None = None
    session_id: str | None = None
    superseded_by: list[str] = Field(
        default_factory=list, description="The notes that replace this one; empty when it is current."
    )
    project: str | None = Field(
        default=None,
        description="The project this comes from ('personal': the person's own memory); pass it to read.",
    )


class Day(_Result):
    date: str
    notes: list[DailyNote]


class DailyListResult(_Result):
    days: list[Day]
    notice: str | None = Field(default=None, description="Said when no project is known, with the fix.")

    def render(self) -> str:
        if not self.days:
            return _noticed(wrap("No daily notes in that range.", "daily_list"), self.notice)
        lines: list[str] = []
        for day in self.days:
            lines.append(f"{day.date}: {len(day.notes)} note(s)")
            for note in day.notes:
                label = " - ".join(x for x in (note.name, note.description) if x)
                replaced = (
                    f" [superseded by {', '.join(note.superseded_by)}]" if note.superseded_by else ""
                )  # inside wrap
                lines.append(f"  {note.path}{_of(note.project)}{replaced} {label}".rstrip())
        return _noticed(wrap("\n".join(lines), "daily_list"), self.notice)


class RememberResult(_Result):
    path: str = Field(description="The note that holds the content.")
    created: bool = Field(description="False when nothing changed (a retry or the same content).")
    duplicate_of: str | None = Field(default=None, description="The note already holding this request or content.")
    day_index: str = Field(description="The day index file refreshed for the note's date.")
    day_index_behind: str | None = Field(
        default=None,
        description="Why the day index could not be refreshed now (a full disk): the note is stored and "
        "searchable, and the day index is caught up as soon as it can be written.",
    )
    superseded_by: list[str] = Field(
        default_factory=list, description="When the note already holding it is superseded: the current notes."
    )
    possibly_outdated_by: list[str] = Field(
        default_factory=list, description="Newer notes that read as another version of the same fact."
    )
    may_replace: list[MayReplace] = Field(
        default_factory=list,
        description="Older notes the new one reads as a newer version of. If it replaces them, call remember "
        "again with the same request_id and supersedes: the link is added to this note, nothing is stored twice.",
    )
    supersedes_added: list[str] = Field(
        default_factory=list, description="Paths this call added to the stored note's supersedes."
    )
    project: str | None = Field(
        default=None, description="The project whose memory holds the note ('personal': the person's own)."
    )
    notice: str | None = Field(default=None, description="Said when no project is known, with the fix.")

    def render(self) -> str:
        return _noticed(self._said() + versions_said(self.may_replace, self.supersedes_added), self.notice)

    def naming(self, older: list[MayReplace]) -> RememberResult:
        """This result naming the older notes the stored one may replace (lines escaped here)."""
        shown = [o.model_copy(update={"line": escape(one_line(o.line))}) for o in older]
        return self.model_copy(update={"may_replace": shown})

    def linked(self, added: list[str]) -> RememberResult:
        return self.model_copy(update={"supersedes_added": added}) if added else self

    def _said(self) -> str:
        if self.created and self.day_index_behind:
            return (
                f"Stored {shown_path(self.path)}{_of(self.project)}, searchable; its day index "
                f"{shown_path(self.day_index)} is caught up as soon as it can be written ({self.day_index_behind})."
            )
        if self.created:
            return (
                f"Stored {shown_path(self.path)}{_of(self.project)} (day index {shown_path(self.day_index)} refreshed)."
            )
        held = self.duplicate_of or self.path
        said = f"Already stored as {shown_path(held)}{_of(self.project)}; nothing written."
        if self.superseded_by:
            said += f" That note is superseded by {', '.join(shown_path(p) for p in self.superseded_by)}: read it for what is true now."
        elif self.possibly_outdated_by:
            said += f" A newer note may replace it: {', '.join(shown_path(p) for p in self.possibly_outdated_by)}."
        if shown_path(held) != held:  # a file someone else named: its exact name inside the boundary
            said += f"\n{wrap(f'path: {quoted_path(held)}', 'remember')}"
        return said


def escaped_front_matter(text: str) -> dict[str, Any] | None:
    """A Markdown file's front matter with every string in it escaped for the boundary."""
    found, _ = split_front_matter(text)
    return json.loads(escape(json.dumps(found, ensure_ascii=False))) if found else None
