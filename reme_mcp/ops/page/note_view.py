"""One file as a person reads it on the memory page: its text and front matter, its place among
the versions of a fact, its wikilinks both ways and the session it came from.

Only reads. The text is the file's own, unescaped: whoever shows it escapes it for its medium
(the page renders Markdown with raw HTML off). Paths come back only when the workspace serves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reme_mcp.index.query import query_tokens
from reme_mcp.index.versions import supersede_targets
from reme_mcp.ops import echo
from reme_mcp.storage.documents import is_dialog, is_markdown, parse_message, split_front_matter, wikilinks
from reme_mcp.storage.workspace import file_kind, path_date

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

# The page shows this much of a file's text; the rest is a `read` away.
MAX_SHOWN_CHARS = 200_000
MAX_SHOWN_MESSAGES = 2_000
# The search that finds newer versions of a note asks with its first words.
VERSION_QUERY_CHARS = 300
VERSION_QUERY_WORDS = 32
VERSION_CANDIDATES = 10


@dataclass(frozen=True)
class Linked:
    path: str
    name: str | None
    exists: bool


@dataclass(frozen=True)
class DialogMessage:
    line: int
    speaker: str
    time: str
    text: str


@dataclass(frozen=True)
class NoteView:
    path: str
    kind: str  # file_kind: daily, digest, dialog, resource, note, ...
    date: str | None
    front_matter: dict[str, Any]
    body: str  # Markdown or plain text, cut at MAX_SHOWN_CHARS
    cut: bool
    messages: list[DialogMessage] | None  # a dialog's messages instead of a body
    superseded_by: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
    possibly_outdated_by: list[str] = field(default_factory=list)
    links_out: list[Linked] = field(default_factory=list)
    links_in: list[Linked] = field(default_factory=list)
    session: str | None = None  # the dialog the note came from, when the workspace has it
    session_id: str | None = None


def note_view(memory: Memory, path: str) -> NoteView:
    """The file at `path` for the page; a one-line ReMeError when it is not served."""
    rel, text = memory.ws.read_text(path)
    meta: dict[str, Any] = {}
    messages: list[DialogMessage] | None = None
    body = text
    if is_markdown(rel):
        meta, first = split_front_matter(text)
        body = "\n".join(text.split("\n")[first:])
    elif is_dialog(rel):
        messages, body = _messages(text), ""
    cut = len(body) > MAX_SHOWN_CHARS
    body = body[:MAX_SHOWN_CHARS]
    memory.index.sync()
    out, back = _links(memory, rel)
    session_id = str(meta["session_id"]) if isinstance(meta.get("session_id"), str | int) else None
    return NoteView(
        path=rel,
        kind=file_kind(rel),
        date=path_date(rel),
        front_matter=meta,
        body=body,
        cut=cut,
        messages=messages,
        superseded_by=memory.index.superseded_by([rel])[rel],
        supersedes=list(supersede_targets(meta)),
        possibly_outdated_by=_newer_versions(memory, rel, body) if is_markdown(rel) else [],
        links_out=out,
        links_in=back,
        session=_session(memory, meta, session_id),
        session_id=session_id,
    )


def _messages(text: str) -> list[DialogMessage]:
    found: list[DialogMessage] = []
    for number, line in enumerate(text.split("\n"), start=1):
        message = parse_message(line)
        if message is not None:
            found.append(DialogMessage(number, message.name, message.time, message.text[:MAX_SHOWN_CHARS]))
            if len(found) >= MAX_SHOWN_MESSAGES:
                break
    return found


def _links(memory: Memory, rel: str) -> tuple[list[Linked], list[Linked]]:
    """Wikilinks from the file and to it, as `traverse` follows them."""
    graph = memory.traverse(rel, 1, "both")
    nodes = {n.path: n for n in graph.nodes}

    def linked(path: str) -> Linked:
        node = nodes.get(path)
        return Linked(path, node.name if node else None, node.exists if node else False)

    out = [linked(e.target) for e in graph.edges if e.kind == "link" and e.source == rel and e.target != rel]
    back = [linked(e.source) for e in graph.edges if e.kind == "link" and e.target == rel and e.source != rel]
    return out, back


def _newer_versions(memory: Memory, rel: str, body: str) -> list[str]:
    """Newer notes that read as another version of this one's fact, found as `remember` finds them
    for recalled text (echo.py): the note's own words as the query, so the answer does not depend
    on what a person searched for."""
    tokens = query_tokens(" ".join(body.split())[:VERSION_QUERY_CHARS])[:VERSION_QUERY_WORDS]
    if not tokens or not memory.index.ready():
        return []
    hits, _ = memory.index.search(tokens, VERSION_CANDIDATES)
    kept = next((hit for hit in hits if hit.path == rel), None)
    return echo.newer_versions(kept, hits, strict=True) if kept is not None else []


def _session(memory: Memory, meta: dict[str, Any], session_id: str | None) -> str | None:
    """The dialog a note came from: its `source_conversation` link, else the dialog named by its session id."""
    source = meta.get("source_conversation")
    for target in wikilinks(source) if isinstance(source, str) else []:
        if memory.ws.entry(target) is not None:
            return target
    if not session_id:
        return None
    wanted = f"{session_id}.jsonl"
    return next(
        (
            p
            for p in sorted(memory.index.records())
            if p.startswith("session/dialog/") and p.rsplit("/", 1)[-1] == wanted
        ),
        None,
    )
