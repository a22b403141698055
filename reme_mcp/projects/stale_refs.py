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


def check_refs(named: list[tuple[str, ...]], checkout: Checkout, snap: Snapshot) -> list[RefCheck]:
    """Each text's paths (path_refs) checked against the checkout's snapshot of now: the history of
    all the paths not in the tree asked of git at once, and each judgment kept with the snapshot."""
    judged = {refs: known for refs in named if isinstance(known := snap.judged.get(refs), RefCheck)}
    fresh = [refs for refs in dict.fromkeys(named) if refs and refs not in judged]
    seen = {ref: checkout.presence(snap, ref) for refs in fresh for ref in refs}
    absent = [ref for ref, presence in seen.items() if presence is Presence.ABSENT]
    left = checkout.departures(absent) if absent else {}
    for refs in fresh:
        present = sum(seen[ref] is Presence.PRESENT for ref in refs)
        found = [_stale(ref, left, checkout, snap) for ref in refs if seen[ref] is Presence.ABSENT]
        stale = tuple(ref for ref in found if ref is not None)
        judged[refs] = RefCheck(stale, present) if stale or present else NOTHING
        if len(snap.judged) >= MAX_JUDGED:
            snap.judged.clear()
        snap.judged[refs] = judged[refs]
    return [judged[refs] if refs else NOTHING for refs in named]


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
