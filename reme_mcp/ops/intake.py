"""What `remember` accepts: every field checked before anything is written.

Everything stored ends up in a file that is indexed, searched and shown to models,
so every stored field (content, name, description, tags) is checked for secrets and
size, not only the content. A recalled <reme-context> block pasted back is stripped
to its inside, so the same fact is not stored once per recall.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass

from reme_mcp.errors import ReMeError
from reme_mcp.notes.daily import REQUEST_KEY, check_note_name, derive_description, derive_name, parse_date
from reme_mcp.ops.limits import (
    MAX_DESCRIPTION_CHARS,
    MAX_REQUEST_ID_CHARS,
    MAX_SUPERSEDES,
    MAX_TAG_CHARS,
    MAX_TAGS,
)
from reme_mcp.safety import boundary
from reme_mcp.storage.documents import body_hash, is_markdown
from reme_mcp.storage.text import require_unicode
from reme_mcp.storage.workspace import Workspace


@dataclass(frozen=True)
class NoteRequest:
    """What a caller asks `remember` to store, as given: built once by a face (or the library's
    `Memory.remember`) and checked once by `Memory.intake`."""

    content: str
    name: str | None = None
    description: str | None = None
    date: str | None = None
    tags: list[str] | None = None
    request_id: str | None = None
    supersedes: list[str] | None = None


@dataclass(frozen=True)
class NoteInput:
    """The note `remember` writes: every field checked (check_input), the supersedes resolved."""

    content: str
    stem: str
    description: str
    tags: list[str]
    day: str
    digest: str  # body_hash of the content
    request_hash: str | None  # never the request_id itself: it may be anything the client sends
    supersedes: tuple[str, ...] = ()  # workspace paths of the notes this one replaces, checked by the caller
    recalled: bool = False  # the content carried a recall's wrapping: checked for echoes (echo.py)

    def front_matter(self) -> dict[str, object]:
        """The note's front matter, in ReMe's key order."""
        meta: dict[str, object] = {"name": self.stem, "description": self.description}
        if self.tags:
            meta["tags"] = self.tags
        if self.request_hash:
            meta[REQUEST_KEY] = self.request_hash
        if self.supersedes:
            # Wikilinks, as ReMe writes links in front matter: traverse follows them, ReMe keeps them.
            meta["supersedes"] = [f"[[{path}]]" for path in self.supersedes]
        return meta


def request_hash(request_id: str) -> str:
    return "sha256:" + hashlib.sha256(request_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class SecretRefused(ReMeError):
    """A remember refused for a secret: the kind is kept, never the value (refusals.py counts them)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def _refuse_secret(field: str, text: str) -> None:
    # Imported on first use: compiling its rules is time a server's first search need not wait for.
    from reme_mcp.safety.secrets import find_secret

    finding = find_secret(text)
    if finding:
        where = f" (line {finding.line})" if field == "content" else ""
        raise SecretRefused(
            f"{field} looks like it contains {finding.kind}{where}; "
            "secrets are never stored: remove it and call remember again",
            finding.kind,
        )


def check_input(
    content: object,
    name: str | None,
    description: str | None,
    day: str,
    tags: list[str] | None,
    request_id: str | None,
    max_chars: int,
) -> NoteInput:
    """The note to write, or a one-line ReMeError saying which field is wrong and why."""
    fields = [("content", content), ("name", name), ("description", description), *(("a tag", t) for t in tags or [])]
    for field, value in fields:
        if isinstance(value, str):
            require_unicode(value, field)
    text = boundary.strip_recalled(content).strip() if isinstance(content, str) else ""
    if not text:
        raise ReMeError("content is empty: give the fact to remember as Markdown text")
    if len(text) > max_chars:
        raise ReMeError(
            f"content is {len(text)} characters: at most {max_chars} are stored per note; store one fact per note"
        )
    _refuse_secret("content", text)
    day = parse_date(day)
    if name is not None:
        # One name, however it was typed: NFC, so a decomposed twin is the same file on every system.
        name = unicodedata.normalize("NFC", name.strip())
        name = name[:-3] if name.lower().endswith(".md") else name
        check_note_name(name)
        _refuse_secret("name", name)
    summary = " ".join((description or "").split())
    if len(summary) > MAX_DESCRIPTION_CHARS:
        raise ReMeError(
            f"description is {len(summary)} characters: at most {MAX_DESCRIPTION_CHARS}; keep it to one line"
        )
    _refuse_secret("description", summary)
    clean_tags = [" ".join(str(t).split()) for t in (tags or []) if str(t).strip()]
    if len(clean_tags) > MAX_TAGS:
        raise ReMeError(f"{len(clean_tags)} tags given: at most {MAX_TAGS}")
    for tag in clean_tags:
        if len(tag) > MAX_TAG_CHARS:
            raise ReMeError(f"a tag is {len(tag)} characters: at most {MAX_TAG_CHARS} per tag")
        _refuse_secret("a tag", tag)
    if request_id is not None and not (0 < len(request_id) <= MAX_REQUEST_ID_CHARS):
        raise ReMeError(f"request_id must be 1 to {MAX_REQUEST_ID_CHARS} characters: use a UUID or any unique string")
    return NoteInput(
        content=text,
        stem=name or derive_name(text),
        description=summary or derive_description(text),
        tags=clean_tags,
        day=day,
        digest=body_hash(text),
        request_hash=request_hash(request_id) if request_id else None,
    )


def check_supersedes(ws: Workspace, paths: list[str]) -> tuple[str, ...]:
    """The notes a new note supersedes, each an existing Markdown file inside the workspace, or a
    one-line ReMeError naming the one that is not."""
    if len(paths) > MAX_SUPERSEDES:
        raise ReMeError(f"supersedes names {len(paths)} notes: at most {MAX_SUPERSEDES}")
    found: list[str] = []
    for path in paths:
        rel = ws.relative(ws.contained_path(str(path)))
        if not is_markdown(rel) or ws.entry(rel) is None:
            raise ReMeError(
                f"supersedes: {boundary.escape(rel)} is not a note in this workspace; "
                "pass paths that search or remember returned"
            )
        found.append(rel)
    return tuple(dict.fromkeys(found))
