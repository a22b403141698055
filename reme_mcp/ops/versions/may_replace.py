"""What a note just stored may replace, and the link a model adds when it confirms.

`remember` names the older notes that read as another version of the new note's fact (by the
same rules as a search's `possibly_outdated_by`, with no question asked: index/version_rules.py),
so the model can confirm with `supersedes`. Storing again with the same `request_id` and
`supersedes` adds the link to the note that request wrote, never a second copy; an older note is
never edited: the link lives in the new note's front matter, as `remember(supersedes=...)` writes it.
"""

from __future__ import annotations

from reme_mcp.index import MemoryIndex
from reme_mcp.index.hits import ChunkHit
from reme_mcp.index.query import query_tokens
from reme_mcp.index.version_rules import MAX_FACT_CHARS, rarity_among, versions_by_themselves
from reme_mcp.index.versions import supersede_targets
from reme_mcp.notes.daily import render_note
from reme_mcp.notes.day_notes import REQUEST_KEY
from reme_mcp.ops.intake import NoteInput
from reme_mcp.ops.versions.results import MayReplace
from reme_mcp.storage.documents import is_dialog, split_front_matter
from reme_mcp.storage.workspace import Workspace

# Notes compared with a new one, found by its first words as the query (as echo.py finds a copy):
# a version keeps its subject, which a fact names first.
CANDIDATES = 5
QUERY_WORDS = 16
MAX_NAMED = 3
LINE_CHARS = 160


def may_replace(index: MemoryIndex, note: NoteInput) -> list[MayReplace]:
    """The notes already kept that the note about to be written reads as a newer version of (none
    when the writer already named what it supersedes). Asked before the write, as echo.py asks."""
    if note.supersedes or len(note.content) > MAX_FACT_CHARS:
        return []  # named already, or too long to be one fact (version_rules.one_fact_each)
    tokens = query_tokens(" ".join(note.content.split()))[:QUERY_WORDS]
    if not tokens or not index.ready():
        return []
    try:
        hits, _ = index.search(tokens, CANDIDATES)
    except OSError:
        # A hint, never a reason to fail the write: a search racing a commit that is replacing a
        # table of contents names nothing this time, and the note is stored all the same.
        return []
    rarity = rarity_among([hit.content for hit in hits])
    found: dict[str, MayReplace] = {}
    for hit in hits:
        if (
            hit.path not in found
            and _kept_before(hit, note.day)
            and versions_by_themselves(hit.content, note.content, rarity)
        ):
            found[hit.path] = MayReplace(path=hit.path, date=hit.date or "", line=_fact_line(hit)[:LINE_CHARS])
    return list(found.values())[:MAX_NAMED]


def _kept_before(hit: ChunkHit, day: str) -> bool:
    """A note kept on or before `day` (a dialog is what was said, not a kept fact)."""
    return not is_dialog(hit.path) and bool(hit.date) and (hit.date or "") <= day


def _fact_line(hit: ChunkHit) -> str:
    """The chunk's first line is its name and description; the fact is the line after it."""
    return next((ln.strip() for ln in hit.content.splitlines()[1:] if ln.strip()), hit.description)


def link_supersedes(ws: Workspace, index: MemoryIndex, rel: str, note: NoteInput) -> list[str]:
    """Add `note.supersedes` to the note at `rel` when this same request wrote it, and make the link
    searchable; the paths added."""
    if not note.supersedes or not note.request_hash:
        return []
    path = ws.contained_path(rel)
    text = path.read_text(encoding="utf-8")
    meta, first = split_front_matter(text)
    if meta.get(REQUEST_KEY) != note.request_hash:
        return []  # another request's note (the same content stored twice): never edited
    have = supersede_targets(meta)
    added = [p for p in note.supersedes if p not in have and p != rel]
    if added:
        meta["supersedes"] = [f"[[{p}]]" for p in (*have, *added)]
        ws.write_atomic(path, render_note(meta, "\n".join(text.split("\n")[first:])))
        index.written([rel])
    return added
