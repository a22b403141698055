"""Versions without a hint, in a search's list: the newest first, the older ones marked.

Hits that read as versions of one fact (version_rules.versions_for_query) form a family: its
members are shown together where the family's best hit stood, newest first, and each older member
names the newer ones that replace it (`possibly_outdated_by`). Left out: a dialog (what was said at
the time, not a kept statement of a fact), an undated file, and a note a newer one explicitly
supersedes (its place is already set by `supersedes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from reme_mcp.index.hits import Arranged
from reme_mcp.index.version_rules import subject_of, versions_for_query
from reme_mcp.storage.documents import is_dialog


def can_be_a_version(entry: Arranged) -> bool:
    """A dated note no other note explicitly supersedes."""
    return bool(entry.hit.date) and not entry.superseded_by and not is_dialog(entry.hit.path)


def newer_of(entries: Sequence[Arranged], query_weights: Mapping[str, float]) -> dict[int, list[int]]:
    """For each entry's place, the places of the newer entries that are versions of its fact."""
    subject = subject_of(query_weights, [entry.hit.content for entry in entries])
    found: dict[int, list[int]] = {}
    for i, older in enumerate(entries):
        for j, newer in enumerate(entries):
            if (
                (newer.hit.date or "") > (older.hit.date or "")
                and newer.hit.path != older.hit.path
                and versions_for_query(older.hit.content, newer.hit.content, query_weights, subject)
            ):
                found.setdefault(i, []).append(j)
    return found


def families(size: int, links: Mapping[int, list[int]]) -> list[int]:
    """Each place's family, as the first place of the family (places linked as versions join)."""
    root = list(range(size))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for i, later in links.items():
        for j in later:
            a, b = find(i), find(j)
            root[max(a, b)] = min(a, b)
    return [find(i) for i in range(size)]


def implicit_versions(out: list[Arranged], rarity: Callable[[], Mapping[str, float]]) -> list[Arranged]:
    """The list with each family of versions together at its best place, newest first, and the
    older members marked with the newer ones."""
    places = [i for i, entry in enumerate(out) if can_be_a_version(entry)]
    if len({out[i].hit.date for i in places}) < 2:
        return out  # no two notes of different days: none is newer than another
    candidates = [out[i] for i in places]
    links = newer_of(candidates, rarity())
    if not links:
        return out
    marked = list(out)
    for k, later in links.items():
        marked[places[k]] = replace(out[places[k]], newer=tuple(sorted({candidates[j].hit.path for j in later})))
    return together(marked, places, families(len(candidates), links))


def together(entries: list[Arranged], places: list[int], family: list[int]) -> list[Arranged]:
    """The entries with each family (of the entries at `places`) shown at its first place, newest first."""
    members: dict[int, list[Arranged]] = {}
    for k, head in enumerate(family):
        members.setdefault(head, []).append(entries[places[k]])
    first_of = {places[k]: head for k, head in enumerate(family) if len(members[head]) > 1}
    arranged: list[Arranged] = []
    for i, entry in enumerate(entries):
        root = first_of.get(i)
        if root is None:
            arranged.append(entry)
        elif places[root] == i:
            arranged.extend(sorted(members[root], key=lambda e: e.hit.date or "", reverse=True))
    return arranged
