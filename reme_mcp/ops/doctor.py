"""The doctor's report: the workspace, its files by kind, the index's state and the configuration."""

from __future__ import annotations

from collections import Counter

from reme_mcp import __version__
from reme_mcp.config import Settings
from reme_mcp.index import MemoryIndex
from reme_mcp.index.semantic_hook import semantic_report
from reme_mcp.ops.models import DoctorReport, IndexReport
from reme_mcp.storage.workspace import Workspace, file_kind


def report(settings: Settings, ws: Workspace, index: MemoryIndex) -> DoctorReport:
    """What `reme-mcp doctor` prints; reads, never changes anything."""
    from reme_mcp.ingest.cursors import cursor_summary
    from reme_mcp.team.status import summary as team_status

    exists = ws.root.is_dir()
    kinds = Counter(file_kind(entry.path) for entry in ws.walk())
    return DoctorReport(
        workspace=str(settings.workspace),
        workspace_exists=exists,
        timezone=str(settings.timezone),
        today=settings.today().isoformat(),
        files_by_kind=dict(sorted(kinds.items())),
        version=__version__,
        index=_index_report(index) if exists else None,
        ingest=cursor_summary(ws) or "off (no source imported; see reme-mcp ingest sources)",
        sync=team_status(ws),
        semantic=semantic_report(index.semantic, settings.semantic, model=settings.semantic_model),
    )


def _index_report(index: MemoryIndex) -> IndexReport:
    state = index.state()
    return IndexReport(
        directory=str(state.directory),
        exists=state.exists,
        files=state.files,
        chunks=state.chunks,
        stale_files=state.stale,
        files_without_text=state.skipped,
    )
