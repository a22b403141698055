"""The five operations over the workspaces a session serves: its project's and the personal one.

With one named workspace (`--workspace`) every call goes straight to its Memory, as it always
did. Otherwise reads cover the current project and the personal memory by default, as one
ranking, and each hit says which project it came from; `scope` narrows them to either, or
widens them to every project. `remember` writes to the project unless told `personal`.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError
from reme_mcp.index import Found, FoundHit, cut_snippets
from reme_mcp.index.joint_search import find_together
from reme_mcp.ops.intake import NoteRequest
from reme_mcp.ops.limits import (
    DAILY_LIMIT,
    MAX_QUERY_CHARS,
    READ_MAX_CHARS,
    SCOPES,
    SEARCH_LIMIT,
    SEARCH_MAX_CHARS,
    TRAVERSE_DEPTH,
    WRITE_SCOPES,
    check_query,
)
from reme_mcp.ops.references import resolve_reference
from reme_mcp.ops.reports import DoctorReport, ProjectReport
from reme_mcp.ops.results import (
    DailyListResult,
    Day,
    GraphNode,
    ReadResult,
    RememberResult,
    SearchResult,
    TraverseResult,
)
from reme_mcp.ops.search_result import search_result
from reme_mcp.ops.stale.hits import against_checkout, served_checkout, with_stale_refs
from reme_mcp.projects.checkout import Checkouts
from reme_mcp.projects.home import PERSONAL
from reme_mcp.projects.legacy import old_workspaces
from reme_mcp.projects.placement import Placement
from reme_mcp.storage.text import readable

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory
    from reme_mcp.team.run import SyncReport


class SessionMemory:
    """One session's memory: its project's workspace and the personal one read as one (or the one
    named `workspace` when `placement` is None); each workspace's `Memory` comes from `open_memory`,
    and `checkouts` gives each project's git checkout its hits are checked against (stale/hits.py)."""

    def __init__(
        self,
        open_memory: Callable[[Path], Memory],
        workspace: Path,
        placement: Placement | None,
        checkouts: Checkouts | None = None,
    ) -> None:
        self.open = open_memory
        self.workspace = workspace
        self.placement = placement
        self.checkouts = checkouts or Checkouts()
        self.notice = placement.notice if placement is not None else None

    # ---- which workspaces --------------------------------------------------------------------

    def sources(self, scope: str = "current") -> list[tuple[str | None, Memory]]:
        """The (project, Memory) pairs a read in `scope` covers, the current project first."""
        place = self.placement
        if place is None:
            return [(None, self.open(self.workspace))]
        if scope not in SCOPES:
            raise ReMeError(f"scope {scope!r} is not known: use current, project, personal or all")
        found: list[tuple[str | None, Memory]] = []
        if scope in ("current", "project") and place.name is not None and place.workspace is not None:
            found.append((place.name, self.open(place.workspace)))
        if scope == "project" and not found:
            raise ReMeError(f"scope 'project': {self.notice}")
        if scope == "all":
            found.extend((known.name, self.open(known.path)) for known in place.home.known())
        if scope != "project":
            found.append((PERSONAL, self.open(place.home.personal)))
        return found

    def _holder(self, path: str, project: str | None) -> tuple[str | None, Memory]:
        """The workspace a path is read from: the named project's, else the first that has it."""
        place = self.placement
        if place is None or project is None:
            sources = self.sources()
            for label, memory in sources:
                if memory.ws.root.is_dir() and memory.ws.contained_path(path, allow_root=True).exists():
                    return label, memory
            return sources[0]
        return project, self.open(place.home.by_name(project))

    # ---- the operations ----------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = SEARCH_LIMIT.default,
        start_date: str | None = None,
        end_date: str | None = None,
        path_prefix: str | None = None,
        max_chars: int = SEARCH_MAX_CHARS.default,
        scope: str = "current",
    ) -> SearchResult:
        """One ranking over the scope's workspaces; each hit names its project."""
        query = check_query(readable(query))  # an argument that is not UTF-8 (storage/text.py)
        sources = self.sources(scope)
        if self.placement is None:
            return sources[0][1].search(query, limit, start_date, end_date, path_prefix, max_chars)

        # One ranking, not one search per workspace merged: each index's share of the first places
        # is read and arranged by it (index/joint_search.py); threads only took turns at the GIL.
        ready = [
            (label, memory, memory.ready_to_find(limit, start_date, end_date, path_prefix, max_chars))
            for label, memory in sources
        ]
        live = [(label, memory, where) for label, memory, where in ready if where is not None]
        founds = (
            find_together([memory.index for _, memory, _ in live], query[:MAX_QUERY_CHARS], limit, *live[0][2])
            if live
            else []
        )
        lists = [(label, found) for (label, _, _), found in zip(live, founds, strict=True)]
        merged = merge_ranked([[(label, hit) for hit in found.hits] for label, found in lists], limit)
        checkout = served_checkout(self.placement, self.checkouts)
        merged, stale = against_checkout(merged, checkout, self.placement.name, query[:MAX_QUERY_CHARS])
        # Cut once, over the merged hits: each gets its share of the budget for all of them.
        hits = cut_snippets([hit for _, hit in merged], query[:MAX_QUERY_CHARS], max_chars)
        total = sum(found.total for _, found in lists)
        found_all = Found(hits, total)
        return with_stale_refs(search_result(query, found_all, [label for label, _ in merged], self.notice), stale)

    def read(
        self,
        path: str,
        start_line: int | None = None,
        end_line: int | None = None,
        max_chars: int = READ_MAX_CHARS.default,
        project: str | None = None,
    ) -> ReadResult:
        """A file of the `project` a search named; without one, this project's, else the personal one."""
        if project is None:  # (a named project's Memory resolves its own references)
            holders = [memory.ws for _, memory in self.sources()]
            path, start_line, end_line = resolve_reference(path, start_line, end_line, holders)
        label, memory = self._holder(path, project)
        result = memory.read(path, start_line, end_line, max_chars)
        if self.placement is None:
            return result
        return result.model_copy(update={"project": label, "notice": self.notice})

    def traverse(
        self,
        path: str = "",
        depth: int = TRAVERSE_DEPTH.default,
        direction: str = "forward",
        project: str | None = None,
        scope: str = "current",
    ) -> TraverseResult:
        """A file's links within its workspace; a folder listed in every workspace of the scope."""
        if self.placement is None:
            return self.sources()[0][1].traverse(path, depth, direction)
        if project is not None or _is_file(self.sources(scope), path):
            label, memory = self._holder(path, project)
            result = memory.traverse(path, depth, direction)
            tagged = [node.model_copy(update={"project": label}) for node in result.nodes]
            return result.model_copy(update={"nodes": tagged, "notice": self.notice})
        parts = [(label, memory.traverse(path, depth, direction)) for label, memory in self.sources(scope)]
        nodes: list[GraphNode] = []
        for label, part in parts:
            nodes.extend(node.model_copy(update={"project": label}) for node in part.nodes)
        return TraverseResult(
            path=parts[0][1].path,
            direction=parts[0][1].direction,
            nodes=nodes,
            edges=[edge for _, part in parts for edge in part.edges],
            omitted=sum(part.omitted for _, part in parts),
            notice=self.notice,
        )

    def daily_list(
        self,
        date: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        limit: int = DAILY_LIMIT.default,
        scope: str = "current",
    ) -> DailyListResult:
        """The days of every workspace in the scope, merged by date, newest first."""
        sources = self.sources(scope)
        if self.placement is None:
            return sources[0][1].daily_list(date, start_date, end_date, limit)
        by_day: dict[str, Day] = {}
        for label, memory in sources:
            for day in memory.daily_list(date, start_date, end_date, limit).days:
                held = by_day.setdefault(day.date, Day(date=day.date, notes=[]))
                held.notes.extend(note.model_copy(update={"project": label}) for note in day.notes)
        days = sorted(by_day.values(), key=lambda day: day.date, reverse=True)[:limit]
        return DailyListResult(days=days, notice=self.notice)

    def remember(self, request: NoteRequest | str, scope: str = "project") -> RememberResult:
        """Into the current project's memory (the personal one when none is known), or the personal
        one. A plain string is the content alone. The note is checked once, before a first write
        makes the project's folder, so a refused note leaves none."""
        note_request = NoteRequest(request) if isinstance(request, str) else request
        place = self.placement
        if place is None:
            memory = self.sources()[0][1]
            return memory.keep(memory.intake(note_request))
        if scope not in WRITE_SCOPES:
            raise ReMeError(f"scope {scope!r} is not where a note can go: use project or personal")
        label, workspace = place.write_target if scope == "project" else (PERSONAL, place.home.personal)
        memory = self.open(workspace)
        note = memory.intake(note_request)
        place.home.prepare(workspace, place.project if label != PERSONAL else None)
        result = memory.keep(note)
        notice = self.notice if scope == "project" else None
        return result.model_copy(update={"project": label, "notice": notice})

    # ---- upkeep ------------------------------------------------------------------------------

    def project_report(self) -> ProjectReport:
        """Which project this view serves, where that came from, and where its memory lives."""
        place = self.placement
        if place is None:
            return ProjectReport(
                mode="one workspace",
                source="--workspace",
                workspace=str(self.workspace),
                workspace_exists=self.workspace.is_dir(),
            )
        _, target = place.write_target
        project = place.project
        return ProjectReport(
            mode="per project",
            project=place.name,
            root=str(project.root) if project else None,
            source=place.source,
            workspace=str(target),
            workspace_exists=target.is_dir(),
            personal=str(place.home.personal),
            keys=list(project.keys) if project else [],
            notice=place.notice,
            unsorted=[
                str(p)
                for p in old_workspaces(dict(os.environ), project.root if project else None, place.home.personal.parent)
            ],
        )

    def team_sync(
        self, personal: bool = False, dry_run: bool = False, init: str | None = None, allow: tuple[str, ...] = ()
    ) -> SyncReport:
        """Sync one workspace through its own remote: the project's (the personal one with
        `personal`, or when no project is known); never one workspace's notes to another's remote."""
        place = self.placement
        if place is None:
            return self.sources()[0][1].team_sync(dry_run=dry_run, init=init, allow=allow)
        if not personal and place.name is None:
            raise ReMeError(f"no project to sync: {self.notice}; or sync the personal memory with --personal")
        label, workspace = (PERSONAL, place.home.personal) if personal else place.write_target
        if init and not dry_run:
            place.home.prepare(workspace, place.project if label != PERSONAL else None)
        return self.open(workspace).team_sync(dry_run=dry_run, init=init, allow=allow)

    def doctor(self) -> DoctorReport:
        """The doctor's report of the workspace `remember` writes to, with the project it serves."""
        place = self.placement
        memory = self.sources()[0][1] if place is None else self.open(place.write_target[1])
        return memory.doctor().model_copy(update={"project": self.project_report()})


def _is_file(sources: list[tuple[str | None, Memory]], path: str) -> bool:
    for _, memory in sources:
        if memory.ws.root.is_dir() and memory.ws.contained_path(path, allow_root=True).is_file():
            return True
    return False


def merge_ranked(lists: list[list[tuple[str | None, FoundHit]]], limit: int) -> list[tuple[str | None, FoundHit]]:
    """The lists as one ranking by score, each list's own order kept (its versions and
    arrangement), cut to `limit`."""
    heads: list[tuple[float, int, int]] = [(-items[0][1].hit.score, i, 0) for i, items in enumerate(lists) if items]
    heapq.heapify(heads)
    merged: list[tuple[str | None, FoundHit]] = []
    while heads and len(merged) < limit:
        _, which, at = heapq.heappop(heads)
        merged.append(lists[which][at])
        if at + 1 < len(lists[which]):
            heapq.heappush(heads, (-lists[which][at + 1][1].hit.score, which, at + 1))
    return merged


__all__ = ["SessionMemory", "merge_ranked"]
