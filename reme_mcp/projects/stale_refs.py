"""Which of the repository paths a text names are gone from the checkout, or moved, and since when.

A path is flagged only when it is shaped like a repository path (path_refs.py), is not in the
checkout (checkout.py), and either left HEAD's history in a commit (then it says which, and
where git's rename detection says it went) or its first folder is in the tree (`src/gone.py`
beside a real `src/`). Anything else a note names (a URL, a version, `e.g.`, a path of another
repository) is text and is never flagged. Nothing here writes anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reme_mcp.projects.checkout import Checkout, Presence, Snapshot
from reme_mcp.projects.path_history import Departure


@dataclass(frozen=True)
class StaleRef:
    """A path a note names that is not in the checkout."""

    path: str
    status: Literal["gone", "renamed"]
    renamed_to: str | None = None
    commit: str | None = None  # the commit it left HEAD's history in, when it did
    date: str | None = None  # that commit's date


@dataclass(frozen=True)
class RefCheck:
    """A text's paths against the checkout: the stale ones, and how many are in the tree now."""

    stale: tuple[StaleRef, ...] = ()
    present: int = 0

    @property
    def all_gone(self) -> bool:
        """Every path it names that could be judged is gone: the note describes code that is not there."""
        return bool(self.stale) and self.present == 0


NOTHING = RefCheck()


# Judgments kept per snapshot: enough for every note a busy session's searches return.
MAX_JUDGED = 8192


def check_refs(refs: tuple[str, ...], checkout: Checkout, snap: Snapshot) -> RefCheck:
    """The paths a text names (path_refs), checked against the checkout's snapshot of now."""
    known = snap.judged.get(refs)
    if isinstance(known, RefCheck):
        return known
    judged = _judge(refs, checkout, snap)
    if len(snap.judged) >= MAX_JUDGED:
        snap.judged.clear()
    snap.judged[refs] = judged
    return judged


def _judge(refs: tuple[str, ...], checkout: Checkout, snap: Snapshot) -> RefCheck:
    present = 0
    absent: list[str] = []
    for ref in refs:
        seen = checkout.presence(snap, ref)
        if seen is Presence.PRESENT:
            present += 1
        elif seen is Presence.ABSENT:
            absent.append(ref)
    if not absent:
        return RefCheck((), present) if present else NOTHING
    left = checkout.departures(absent)
    stale = [found for ref in absent if (found := _stale(ref, left, checkout, snap)) is not None]
    return RefCheck(tuple(stale), present)


def _stale(ref: str, left: dict[str, Departure], checkout: Checkout, snap: Snapshot) -> StaleRef | None:
    departure = left.get(ref.rstrip("/"))
    if departure is not None:
        target = checkout.moved_to(ref, departure)
        if target is not None:
            target += "/" if ref.endswith("/") else ""
            return StaleRef(ref, "renamed", target, departure.commit, departure.date)
        return StaleRef(ref, "gone", None, departure.commit, departure.date)
    parts = ref.rstrip("/").split("/")
    if len(parts) > 1 and (parts[0] in snap.folders or parts[0] in snap.files):
        return StaleRef(ref, "gone")  # never on this branch's history, beside the tree's own files
    return None
