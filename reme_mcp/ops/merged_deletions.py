"""After a sync: files the merge deleted (forgotten on another clone, or removed by a person
there) leave nothing derived here either.

Catching the index up only marks their documents deleted, and Whoosh keeps a deleted
document's text in its segment until a merge; so when a sync brought deletions, the index is
rebuilt once and their vectors, saved records and ledger records are dropped, as forgetting
does on the clone where it happened (ops/forget/forgetting.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reme_mcp.index import MemoryIndex
from reme_mcp.notes.ledger import Ledger

if TYPE_CHECKING:
    from reme_mcp.team.run import SyncReport


def caught_up(index: MemoryIndex, ledger: Ledger, report: SyncReport) -> int:
    """Bring the index up to date after `report`'s sync; returns how many files it (re)indexed or dropped."""
    indexed = index.sync(force=True)
    deleted = sorted({change.path for change in report.came_in if change.status == "D"})
    if deleted:
        ledger.forget(set(deleted))
        index.purge(deleted)
    return indexed
