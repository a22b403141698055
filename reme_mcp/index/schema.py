"""The index's schema, and the documents each workspace file becomes in it.

One file is one record (its change stamp, links and front matter, so sync can tell
what the index holds) plus one document per chunk. Bump SCHEMA_VERSION whenever
the schema or what goes into a document changes: an index of another version is
rebuilt from the files by itself.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh.analysis import RegexTokenizer
from whoosh.fields import ID, STORED, TEXT, Schema

from reme_mcp.errors import ReMeError
from reme_mcp.index import ranking
from reme_mcp.index.analysis import memory_analyzer
from reme_mcp.index.versions import supersede_targets
from reme_mcp.storage.documents import BLOCK_END, BLOCK_START, Document, meta_text, parse_document, wikilinks
from reme_mcp.storage.files import open_regular
from reme_mcp.storage.workspace import MAX_INDEXED_BYTES, Workspace, file_kind, file_stamp, is_text_file, path_date

SCHEMA_VERSION = 6
FILE_RECORD = "__file__"


def build_schema() -> Schema:
    # No positions anywhere (phrase=False): queries are OR-ed words, never phrases, and
    # positions made every posting bigger to write and to read.
    analyzer = memory_analyzer()
    return Schema(
        chunk_id=ID(unique=True, stored=True),
        path=ID(stored=True),
        kind=ID(stored=True),
        start_line=STORED,
        end_line=STORED,
        date=ID(stored=True),
        name=TEXT(analyzer=analyzer, stored=True, phrase=False),
        description=TEXT(analyzer=analyzer, stored=True, phrase=False),
        speaker=TEXT(analyzer=analyzer, stored=True, phrase=False),
        time=STORED,
        content=TEXT(analyzer=analyzer, stored=True, phrase=False),
        # A dialog message's neighbours' terms, already analysed (ranking.context_texts).
        context=TEXT(analyzer=RegexTokenizer(r"\S+"), phrase=False),
        # The chunk's date in words (ranking.date_words), for questions like "in May 2023".
        when=TEXT(analyzer=analyzer, phrase=False),
        # The per-file record.
        stamp=STORED,
        content_hash=STORED,
        body_hash=ID(stored=True),
        links=TEXT(analyzer=RegexTokenizer(r"[^\n]+"), phrase=False, stored=True),
        file_name=STORED,
        file_description=STORED,
        supersedes=STORED,  # the paths the file's front matter says it replaces (versions.py)
    )


@dataclass(frozen=True)
class FileRecord:
    path: str
    stamp: str
    name: str
    description: str
    links: tuple[str, ...]
    content_hash: str = ""  # of the file's bytes, when they were read; "" when not (too big, unreadable)
    supersedes: tuple[str, ...] = ()  # what its front matter says it replaces (versions.py)


def _hide_day_index_block(text: str) -> str:
    """A day index's block repeats its notes; only the person's text around it is memory."""
    start, end = text.find(BLOCK_START), text.find(BLOCK_END)
    if start == -1 or end < start:
        return text
    block = text[start : end + len(BLOCK_END)]
    return text[:start] + "\n" * block.count("\n") + text[end + len(BLOCK_END) :]


def file_documents(ws: Workspace, path: str) -> Iterator[dict[str, Any]]:
    """The index documents for one file: its record, then its chunks. Degrades per file, never raises."""
    full = ws.root / path
    try:
        with full.open("rb") as fh:
            st = os.fstat(fh.fileno())
            head = fh.read(4096)
            indexable = st.st_size <= MAX_INDEXED_BYTES and is_text_file(full, head)
            raw = head + fh.read() if indexable else b""
    except OSError:
        return
    kind = file_kind(path)
    digest = content_hash(raw) if indexable else HEAD_ONLY + content_hash(head)
    doc = Document(meta={}, chunks=[])
    if indexable:
        text = raw.decode("utf-8", errors="replace")
        doc = parse_document(path, _hide_day_index_block(text) if kind == "day_index" else text)
        if kind == "day_index":
            doc.links = wikilinks(text)  # the block's links are real edges, even if its text is not searched
    name, description = meta_text(doc.meta, "name"), meta_text(doc.meta, "description")
    yield {
        "chunk_id": f"F:{path}",
        "path": path,
        "kind": FILE_RECORD,
        "stamp": file_stamp(st),
        "content_hash": digest,
        "body_hash": doc.body_hash or "-",
        "links": "\n".join(doc.links),
        "file_name": name,
        "file_description": description,
        "supersedes": "\n".join(supersede_targets(doc.meta)),
    }
    folder_date = path_date(path)
    contexts = ranking.context_texts(doc.chunks, kind)
    for chunk, context in zip(doc.chunks, contexts, strict=True):
        yield {
            "chunk_id": f"{path}#{chunk.start_line}",
            "path": path,
            "kind": kind,
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
            "date": folder_date or chunk.date or "",
            "name": name,
            "description": description,
            "speaker": chunk.speaker,
            "time": chunk.time,
            "content": chunk.text,
            "context": context,
            "when": ranking.date_words(folder_date or chunk.date or ""),
        }


def file_record(fields: dict[str, Any]) -> FileRecord:
    links = tuple(x for x in str(fields.get("links") or "").split("\n") if x)
    return FileRecord(
        fields["path"],
        fields.get("stamp", ""),
        fields.get("file_name") or "",
        fields.get("file_description") or "",
        links,
        fields.get("content_hash") or "",
        tuple(x for x in str(fields.get("supersedes") or "").split("\n") if x),
    )


# A file that is not indexed (binary, too big) is known by its first 4 KB: nothing of it is searchable.
HEAD_ONLY = "head:"


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def same_bytes(full: Path, record: FileRecord) -> bool:
    """Whether the file still holds the bytes its record was made from (no link followed)."""
    if not record.content_hash:
        return False
    try:
        with open_regular(full, record.path) as fh:
            if record.content_hash.startswith(HEAD_ONLY):
                return HEAD_ONLY + content_hash(fh.read(4096)) == record.content_hash
            return content_hash(fh.read(MAX_INDEXED_BYTES + 1)) == record.content_hash
    except (OSError, ReMeError):
        return False
