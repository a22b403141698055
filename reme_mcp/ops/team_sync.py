"""A team sync as the operations run it: the workspace synced through its git remote (team/), the
day indexes it left behind refreshed, and files the merge deleted (forgotten on another clone,
or removed by a person there) leaving nothing derived here either.

Catching the index up only marks their documents deleted, and Whoosh keeps a deleted
document's text in its segment until a merge; so when a sync brought deletions, the index is
rebuilt once and their vectors, saved records and ledger records are dropped, as forgetting
does on the clone where it happened (ops/forget/forgetting.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reme_mcp.index import MemoryIndex
from reme_mcp.notes.daily import DayIndex
from reme_mcp.notes.ledger import Ledger
from reme_mcp.storage.workspace import Workspace

if TYPE_CHECKING:
    from reme_mcp.team.run import SyncReport
    from reme_mcp.team.status import SyncStatus


def run(
    ws: Workspace,
    parts: tuple[DayIndex, MemoryIndex, Ledger, SyncStatus],
    dry_run: bool,
    init: str | None,
    interactive: bool,
    allow: tuple[str, ...],
) -> SyncReport:
    """Sync `ws` through its remote, then catch its day indexes and its index up."""
    from reme_mcp.team.run import Sync

    days, index, ledger, status = parts
    report = Sync(ws, interactive, status).run(dry_run=dry_run, init=init, allow=allow)
    if report.days_behind:  # the batch of day indexes owes them and catches them up in this process
        with ws.lock("write"):
            for day in report.days_behind:
                days.refresh_or_owe(day)
    if not dry_run:
        report.indexed = caught_up(index, ledger, report)
    return report


def caught_up(index: MemoryIndex, ledger: Ledger, report: SyncReport) -> int:
    """Bring the index up to date after `report`'s sync; returns how many files it (re)indexed or dropped."""
    indexed = index.sync(force=True)
    deleted = sorted({change.path for change in report.came_in if change.status == "D"})
    if deleted:
        ledger.forget(set(deleted))
        index.purge(deleted)
    return indexed
