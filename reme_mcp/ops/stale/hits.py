"""A search's hits checked against the project's git checkout: which files they name are gone or
moved, and a hit whose every named path is gone placed below a current hit on the same subject.

Only the served project's hits are checked, against its own work tree (the personal memory and
other projects' notes name files of other trees). A hit that names no path, or only paths that
are there, is left as it is; no note is ever changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reme_mcp.index import FoundHit
from reme_mcp.index.analysis import query_term_set
from reme_mcp.ops.results import SearchResult
from reme_mcp.ops.stale.marks import StaleRef
from reme_mcp.projects.checkout import Checkout, Checkouts
from reme_mcp.projects.path_refs import path_refs
from reme_mcp.projects.placement import Placement
from reme_mcp.projects.stale_refs import RefCheck, check_refs
from reme_mcp.safety.boundary import escape

Labelled = tuple[str | None, FoundHit]


@dataclass
class _Checked:
    item: Labelled
    check: RefCheck


def served_checkout(placement: Placement | None, checkouts: Checkouts) -> Checkout | None:
    """The served project's work tree, when it is a git repository."""
    project = placement.project if placement is not None else None
    if project is None or not project.in_repository:
        return None
    return checkouts.of(project.root)


def against_checkout(
    merged: list[Labelled], checkout: Checkout | None, project: str | None, query: str
) -> tuple[list[Labelled], list[list[StaleRef]]]:
    """The hits in the order shown, and each one's stale references (in that order)."""
    named = [path_refs(_text(found)) if label == project else () for label, found in merged]
    snap = checkout.snapshot() if checkout is not None and any(named) else None  # git only when a path is named
    if checkout is None or snap is None:
        return merged, [[] for _ in merged]
    checked = [_Checked(item, check) for item, check in zip(merged, check_refs(named, checkout, snap), strict=True)]
    if any(entry.check.all_gone for entry in checked):
        checked = _gone_below_current(checked, query)
    return [entry.item for entry in checked], [_marks(entry.check) for entry in checked]


def with_stale_refs(result: SearchResult, stale: Sequence[list[StaleRef]]) -> SearchResult:
    """The result with each hit's stale references (hits and `stale` in the same order)."""
    if not any(stale):
        return result
    hits = [
        hit.model_copy(update={"stale_refs": refs}) if refs else hit
        for hit, refs in zip(result.results, stale, strict=True)
    ]
    return result.model_copy(update={"results": hits})


def _text(found: FoundHit) -> str:
    return f"{found.hit.description}\n{found.hit.content}"


def _marks(check: RefCheck) -> list[StaleRef]:
    return [
        StaleRef(
            path=escape(ref.path),
            status=ref.status,
            renamed_to=escape(ref.renamed_to) if ref.renamed_to is not None else None,
            commit=ref.commit,
            date=ref.date,
        )
        for ref in check.stale
    ]


def _gone_below_current(checked: list[_Checked], query: str) -> list[_Checked]:
    """Each hit whose every named path is gone moves just below the last hit after it that is
    current and on the same subject; never below a version it replaces."""
    asked = query_term_set(query)
    out = list(checked)
    for entry in checked:
        if not entry.check.all_gone:
            continue
        at = next(i for i, other in enumerate(out) if other is entry)
        below = [
            k
            for k in range(at + 1, len(out))
            if not out[k].check.all_gone and _same_subject(entry, out[k], asked) and not _older(out[k], entry)
        ]
        if below:
            out.insert(below[-1], out.pop(at))
    return out


def _same_subject(stale: _Checked, current: _Checked, asked: frozenset[str]) -> bool:
    """The current hit names where the stale one's files went, or holds every word of the query
    the stale one holds."""
    text = _text(current.item[1])
    if any(ref.renamed_to and ref.renamed_to.rstrip("/") in text for ref in stale.check.stale):
        return True
    held = asked & query_term_set(_text(stale.item[1]))
    return bool(held) and held <= query_term_set(text)


def _older(current: _Checked, stale: _Checked) -> bool:
    """Whether the current hit is an earlier version of the stale one (it replaces it)."""
    path = stale.item[1].hit.path
    found = current.item[1]
    return path in found.superseded_by or path in found.newer
