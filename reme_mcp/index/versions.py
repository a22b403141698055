"""Versions of a fact: which notes a note supersedes, and which hits state one fact with other values.

Two relations, kept apart because only one of them is a person's word:

- **Superseded** (explicit): a note's front matter names the notes it replaces
  (`supersedes: ['[[daily/2026-08-03/k8s.md]]']`, written by `remember(supersedes=...)` or by
  hand). The relation is read from the files into the index's file records, so it survives a
  rebuild. A chain A <- B <- C resolves to C, the note nothing supersedes.
- **Possibly outdated** (implicit): two notes that keep a subject and replace a value read as two
  versions of one fact (version_rules.py); the newer one is put first and the older one marked.
  Similarity alone never supersedes anything: the older note is only marked, and notes that merely
  share words, a sentence or a tag are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reme_mcp.storage.documents import wikilinks


def supersede_targets(meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths a note's front matter says it supersedes: wikilinks or plain paths, a list or one string."""
    value = meta.get("supersedes")
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    found: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        links = wikilinks(item)
        found.extend(links if links else [item.strip()])
    return tuple(dict.fromkeys(p.strip().lstrip("/") for p in found if p.strip()))


def superseders(records: Iterable[tuple[str, tuple[str, ...]]]) -> dict[str, list[str]]:
    """Path -> the notes that name it in their `supersedes`, from (path, supersedes) pairs."""
    by_target: dict[str, list[str]] = {}
    for path, targets in records:
        for target in targets:
            if target != path:
                by_target.setdefault(target, []).append(path)
    return by_target


def current_versions(path: str, by_target: Mapping[str, list[str]]) -> list[str]:
    """The notes that replace `path` in the end: its superseders, followed along chains to the ones
    nothing supersedes (a loop written by hand ends where it closes). Empty when `path` is current."""
    heads: list[str] = []
    seen = {path}
    todo = list(by_target.get(path, ()))
    while todo:
        step = todo.pop(0)
        if step in seen:
            continue
        seen.add(step)
        later = [p for p in by_target.get(step, ()) if p not in seen]
        if later:
            todo.extend(later)
        elif step not in heads:
            heads.append(step)
    return sorted(heads)
