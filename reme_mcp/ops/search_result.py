"""A search's finished hits as the result a client sees: every string from a workspace escaped
or inside the <reme-context> boundary, and each hit's project where several workspaces answer."""

from __future__ import annotations

from collections.abc import Sequence

from reme_mcp.index import Found, FoundHit
from reme_mcp.ops.results import SearchHit, SearchResult, shown_query
from reme_mcp.safety import boundary
from reme_mcp.safety.boundary import escaped


def search_result(
    query: str, found: Found, projects: Sequence[str | None] = (), notice: str | None = None
) -> SearchResult:
    """`projects[i]` names the project of `found.hits[i]` (none with one workspace)."""
    return SearchResult(
        query=shown_query(query),
        results=[search_hit(hit, projects[i] if i < len(projects) else None) for i, hit in enumerate(found.hits)],
        total_hits=found.total,
        truncated=any(hit.cut for hit in found.hits),
        notice=notice,
    )


def search_hit(found: FoundHit, project: str | None = None) -> SearchHit:
    hit = found.hit
    return SearchHit(
        path=hit.path,
        start_line=hit.start_line,
        end_line=hit.end_line,
        score=round(hit.score, 4),
        name=escaped(hit.name),
        description=escaped(hit.description),
        date=hit.date,
        snippet=boundary.wrap(found.snippet, "search"),
        superseded_by=list(found.superseded_by),
        possibly_outdated_by=list(found.newer),
        by_meaning=hit.by_meaning,
        project=project,
    )
