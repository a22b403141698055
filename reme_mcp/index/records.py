"""The index's file records: one per indexed file (its change stamp, links and front matter).

Sync compares them with the files, so every sync needs all of them. A segment
never changes once written (only its deletions grow), so each segment's records
are read once and kept by segment id, and the live set is their union less the
deleted ones: after another process's commit only its new segment is read.
Reading all 14,500 records of a 100k-chunk index from Whoosh's stored fields
costs about 0.6 s, so the kept records are also saved beside the index, in its
private folder (home.py), as JSON (nothing derived is ever unpickled by our own
code), and a new process reads them from there for every segment that still exists.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from reme_mcp.index.schema import FILE_RECORD, FileRecord, file_record
from reme_mcp.storage.workspace import Workspace

# Save the kept records once a call read at least this many from the index.
SAVE_AFTER_READING = 1000


class RecordCache:
    """Every segment's file records, kept in memory and saved for the next process."""

    def __init__(self, ws: Workspace, saved: Path) -> None:
        self.ws = ws
        self.saved = saved
        self._segments: dict[str, dict[int, FileRecord]] = {}  # segment id -> its records by doc number
        self._loaded = False

    def live(self, searcher: Any) -> dict[str, FileRecord]:
        """The records of the searcher's commit, by path."""
        if not self._loaded:
            self._loaded = True
            self._segments.update(self._load())
        live: dict[str, FileRecord] = {}
        present: set[str] = set()
        read = 0
        for leaf, _ in searcher.leaf_searchers():
            reader = leaf.reader()
            segment = reader.segment()
            if segment is None:  # an empty index
                continue
            segid = segment.segment_id()
            present.add(segid)
            held = self._segments.get(segid)
            if held is None:
                ids = reader.postings("kind", FILE_RECORD).all_ids() if ("kind", FILE_RECORD) in reader else ()
                held = self._segments[segid] = {doc: file_record(reader.stored_fields(doc)) for doc in ids}
                read += len(held)
            deleted = reader.deleted_docs_set
            live.update((record.path, record) for doc, record in held.items() if doc not in deleted)
        for gone in self._segments.keys() - present:
            del self._segments[gone]
        if read >= SAVE_AFTER_READING:
            self._save()
        return live

    def _load(self) -> dict[str, dict[int, FileRecord]]:
        """The saved records; nothing if the file is missing or not what this version writes."""
        try:
            data = json.loads(self.saved.read_text(encoding="utf-8"))
            return {
                segid: {int(doc): FileRecord(path, stamp, name, desc, tuple(links), digest, tuple(replaced)) for doc, path, stamp, name, desc, links, digest, replaced in rows}
                for segid, rows in data["segments"].items()
            }  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}

    def _save(self) -> None:
        rows = {
            segid: [
                [doc, r.path, r.stamp, r.name, r.description, list(r.links), r.content_hash, list(r.supersedes)]
                for doc, r in held.items()
            ]
            for segid, held in self._segments.items()
        }
        with contextlib.suppress(OSError):  # only a cache: the next process reads the index instead
            self.ws.write_atomic(self.saved, json.dumps({"segments": rows}, ensure_ascii=False), durable=False)
