"""The doctor's report: the workspace, its files by kind, the index's state and the configuration."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from reme_mcp._version import __version__
from reme_mcp.config import Settings
from reme_mcp.index import IndexState, MemoryIndex
from reme_mcp.index.semantic.hook import semantic_report, vectors_behind
from reme_mcp.notes.day_lag import lagging
from reme_mcp.ops import refusals
from reme_mcp.ops.reports import IN_LINE, DoctorReport, IndexReport
from reme_mcp.ops.wording import counted
from reme_mcp.storage.workspace import Workspace, file_kind

if TYPE_CHECKING:
    from reme_mcp.team.status import SyncStatus


def report(settings: Settings, ws: Workspace, index: MemoryIndex, sync: SyncStatus | None = None) -> DoctorReport:
    """What `reme-mcp doctor` prints; reads, never changes anything. `sync`: this process's record of
    its last team sync (a record it could not write yet is shown, and named behind)."""
    from reme_mcp.ingest.cursors import cursor_summary
    from reme_mcp.team.status import summary as team_status

    exists = ws.root.is_dir()
    kinds = Counter(file_kind(entry.path) for entry in ws.walk())
    state = index.state() if exists else None
    return DoctorReport(
        workspace=str(settings.workspace),
        workspace_exists=exists,
        timezone=str(settings.timezone),
        today=settings.today().isoformat(),
        files_by_kind=dict(sorted(kinds.items())),
        version=__version__,
        index=_index_report(state) if state is not None else None,
        ingest=cursor_summary(ws) or "off (no source imported; see reme-mcp ingest sources)",
        sync=team_status(ws, sync),
        secrets_refused=refusals.summary(index.directory.parent),
        semantic=semantic_report(index.semantic, settings.semantic, model=settings.semantic_model),
        behind=_behind(ws, state, vectors_behind(index.semantic), sync) if state is not None else IN_LINE,
    )


def _behind(ws: Workspace, state: IndexState, vectors: int, sync: SyncStatus | None) -> dict[str, str] | str:
    """Derived files behind the notes, and what catches each up: a process that failed to write
    one (a full disk) owes it and writes it on its own as soon as it can."""
    out: dict[str, str] = {}
    for lag in lagging(ws):
        if lag.owed_by:
            who = f"process {', '.join(map(str, lag.owed_by))} catches it up as soon as it can write it"
        else:
            who = "the day's next remember, or the next server start, catches it up"
        out[f"daily/{lag.day}.md"] = f"lists {lag.listed} of the day's {counted(lag.notes, 'note')}; {who}"
    if state.stale:
        out["index"] = (
            f"{counted(state.stale, 'file')} not indexed as they are now; the writing process's batch, "
            "or the next search, indexes them as soon as the index can be written"
        )
    if vectors:
        out["vectors"] = (
            f"{counted(vectors, 'file')} whose saved vectors for search by meaning are not as the index holds them; "
            "the process embedding them saves them within a second of the index folder taking writes, "
            "and the next search by meaning embeds what no process holds"
        )
    owed = sync.owed if sync is not None else None
    if owed is not None:
        outcome = f"failed: {owed['error']}" if owed.get("error") else "worked"
        out["sync"] = (
            f"the last sync ({owed['last_attempt']}, {outcome}) is not recorded on disk yet; "
            "this process records it as soon as the state folder can be written"
        )
    return out or IN_LINE


def _index_report(state: IndexState) -> IndexReport:
    return IndexReport(
        directory=str(state.directory),
        exists=state.exists,
        files=state.files,
        chunks=state.chunks,
        stale_files=state.stale,
        files_without_text=state.skipped,
    )
