"""Search as the memory page asks it: `Memory.search` itself (the ranking and evidence a model
gets), with a kind of memory for a folder and each snippet taken out of the <reme-context>
boundary, which tells a model that recalled text is data and means nothing to a person."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError
from reme_mcp.ops.results import SearchResult
from reme_mcp.safety.boundary import strip_recalled

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

# Each kind of memory the page filters by, and the folder that holds it (workspace-format.md).
KIND_PREFIXES: dict[str, str] = {
    "note": "daily/",
    "digest": "digest/",
    "dialog": "session/dialog/",
    "resource": "resource/",
}
PAGE_RESULTS = 10
PAGE_MAX_CHARS = 12_000


def search_page(
    memory: Memory,
    query: str,
    kind: str | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
    limit: int = PAGE_RESULTS,
) -> SearchResult:
    """The search tool's result for the page: same order and fields, snippets as plain text."""
    if kind and kind not in KIND_PREFIXES:
        raise ReMeError(f"kind {kind!r} is not known: use one of {', '.join(KIND_PREFIXES)}")
    found = memory.search(
        query,
        limit=limit,
        start_date=start_date or None,
        end_date=end_date or None,
        path_prefix=KIND_PREFIXES[kind] if kind else None,
        max_chars=PAGE_MAX_CHARS,
    )
    hits = [hit.model_copy(update={"snippet": strip_recalled(hit.snippet).strip("\n")}) for hit in found.results]
    return found.model_copy(update={"results": hits})
