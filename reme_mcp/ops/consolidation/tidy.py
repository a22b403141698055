"""Tidying a workspace: its notes read for clustering (clusters.py), and the clusters as text.

Reads only: nothing here writes, moves or deletes a note. A consolidation is written by the
host's model through `remember` with `supersedes` (faces/prompts.py), so the old notes stay,
marked superseded, readable and forgettable by the person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError
from reme_mcp.ops.consolidation.clusters import Cluster, NoteText, find_clusters, supersede_links
from reme_mcp.storage.documents import meta_text, parse_message, split_front_matter, wikilinks
from reme_mcp.storage.workspace import Workspace, path_date

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

# Files larger than this are not one fact; they are left out of clustering.
MAX_NOTE_BYTES = 64 * 1024
MAX_DIALOG_BYTES = 4 * 1024 * 1024
# The first characters of a note shown beside its path.
PREVIEW_CHARS = 160
_DAY_INDEX = re.compile(r"^daily/\d{4}-\d{2}-\d{2}\.md$")


def workspace_notes(ws: Workspace) -> Iterator[NoteText]:
    """The daily and digest notes of a workspace, and each message of its session dialogs."""
    for entry in ws.walk():
        path = entry.path
        if path.endswith(".md") and path.startswith(("daily/", "digest/")) and not _DAY_INDEX.match(path):
            if entry.size <= MAX_NOTE_BYTES:
                yield from _note(ws, path)
        elif path.endswith(".jsonl") and path.startswith("session/") and entry.size <= MAX_DIALOG_BYTES:
            yield from _messages(ws, path)


def _note(ws: Workspace, path: str) -> Iterator[NoteText]:
    try:
        _, text = ws.read_text(path, MAX_NOTE_BYTES)
    except ReMeError:
        return
    meta, first = split_front_matter(text)
    body = "\n".join(text.split("\n")[first:]).strip()
    tags = meta.get("tags")
    yield NoteText(
        path=path,
        text=body,
        date=path_date(path) or "",
        name=meta_text(meta, "name"),
        description=meta_text(meta, "description"),
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        supersedes=supersede_links(meta),
        links=tuple(wikilinks(body)) + tuple(wikilinks(meta_text(meta, "source_conversation"))),
    )


def _messages(ws: Workspace, path: str) -> Iterator[NoteText]:
    try:
        _, text = ws.read_text(path, MAX_DIALOG_BYTES)
    except ReMeError:
        return
    for number, line in enumerate(text.split("\n"), start=1):
        message = parse_message(line)
        if message is not None:
            yield NoteText(path=path, text=message.text, date=message.time[:10], name=message.name, line=number)


def workspace_clusters(ws: Workspace) -> list[Cluster]:
    return find_clusters(list(workspace_notes(ws)))


def preview(note: NoteText, chars: int = PREVIEW_CHARS) -> str:
    """One line of a note: its description, else its first words."""
    line = note.description or " ".join(note.text.split())
    return line if len(line) <= chars else line[: chars - 1] + "…"


def render_clusters(clusters: list[Cluster], root: str) -> str:
    """The clusters as a person reads them: what each is, and each note's real path and first line."""
    if not clusters:
        return f"Nothing to consolidate in {root}."
    lines = [f"{len(clusters)} cluster(s) worth consolidating in {root}:"]
    for cluster in clusters:
        lines += ["", f"{cluster.id} ({cluster.kind}): {cluster.reason}"]
        for note in cluster.notes:
            where = f"{note.path}:{note.line}" if note.is_dialog else note.path
            lines.append(f"  {note.date or '----------'}  {root}/{where}")
            lines.append(f"      {preview(note)}")
    lines += [
        "",
        "Nothing was changed. To consolidate one, ask your host's model with the reme prompt `consolidate`",
        "and the cluster's id (Claude Code: /mcp__reme__consolidate <id>); docs/consolidation.md.",
    ]
    return "\n".join(lines)


def clusters_of(sources: Iterable[tuple[str | None, Memory]]) -> list[tuple[str | None, Memory, Cluster]]:
    """The clusters of each workspace a session reads (project first), with where each lives."""
    return [(label, memory, cluster) for label, memory in sources for cluster in workspace_clusters(memory.ws)]
