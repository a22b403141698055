"""Forgetting: the one implementation behind `reme-mcp forget`, the opt-in `forget` tool and
the memory page. Destructive, so it is only ever an explicit act of the person's; nothing
automatic calls it.

Two steps, so the person sees exactly what goes before anything does:

    plan = forget_plan(memory, Selection(paths=("daily/2026-11-28/old-token.md",)))
    print(plan.render())                     # what goes, by workspace-relative path
    result = forget_apply(memory, plan)      # after the person agreed

`forget_apply` removes exactly `plan.paths` (those still there) and leaves no trace of them
in what reme-mcp derives from the files:

- the files go to the trash, outside the workspace (trash.py), for `Settings.trash_days`;
- the day index block of each of their days is rebuilt without them (a person's text in
  the day index is kept byte for byte);
- the request ledger forgets them, so `remember` of the same text stores it anew;
- the search index is rebuilt without them (Whoosh keeps a deleted document's text in its
  segment until a merge), their vectors and the saved file records are dropped
  (index/purge.py); echo detection reads that index, so it no longer knows them either;
- an ingested dialog's session is marked so that no import brings it back (ingest/tombstones.py).

Files that link to a forgotten one are named (`linked_from`), never edited. In a workspace
synced through git, `reme-mcp sync` commits the removal and carries it to every clone; the
repository's history keeps the old versions (docs/forget.md).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.ingest.tombstones import Tombstones
from reme_mcp.ops.forget.results import ForgetPlan, ForgetResult
from reme_mcp.ops.forget.selection import Selection, selected
from reme_mcp.ops.forget.trash import Trash
from reme_mcp.storage.workspace import file_kind

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

__all__ = ["ForgetPlan", "ForgetResult", "Selection", "command_line", "empty_trash", "forget_apply", "forget_plan"]


def forget_plan(memory: Memory, selection: Selection) -> ForgetPlan:
    """Exactly what forgetting `selection` in `memory`'s workspace would remove; changes nothing.

    Raises ReMeError (one line) for an empty selection, a path outside the workspace or not a
    memory file, a bad date, or a session that was never imported.
    """
    paths, skipped = selected(memory, selection)
    days = sorted({f"daily/{p.split('/')[1]}.md" for p in paths if file_kind(p) == "daily"})
    return ForgetPlan(
        workspace=str(memory.ws.root),
        paths=paths,
        day_indexes=[d for d in days if memory.ws.entry(d) is not None],
        sessions=[p for p in paths if _ingested(p)],
        linked_from=_linked_from(memory, paths),
        skipped=skipped,
    )


def forget_apply(memory: Memory, plan: ForgetPlan) -> ForgetResult:
    """Forget what `plan` lists (from `forget_plan` on this workspace), after the person agreed.

    Returns what was removed, by path. A file of the plan that is gone already is reported,
    not an error. Raises ReMeError (one line) when the plan is of another workspace, the trash
    is not private, or the disk fails part-way (then what was removed is named, and running
    the same forgetting again finishes it).
    """
    ws = memory.ws
    if Path(plan.workspace).resolve() != ws.root:
        raise ReMeError(f"this plan is for {plan.workspace}, not {ws.root}: make the plan on this workspace again")
    if not plan.paths:
        return ForgetResult(status="nothing", message="Nothing to forget: the selection matched no file.")
    trash = Trash(memory.settings.trash_home, ws, memory.settings.trash_days)
    trash.sweep()
    with ws.lock("write"):
        present = [p for p in plan.paths if ws.entry(p) is not None]
        batch, taken, failure = trash.take(present)
        Tombstones(ws).bury(p for p in taken if _ingested(p))
        days = sorted({p.split("/")[1] for p in taken if file_kind(p) == "daily"})
        refreshed = [memory.days.refresh(day) for day in days if ws.entry(f"daily/{day}.md") is not None]
        memory.ledger.forget(set(taken))
    _purge(memory, taken)
    removed = set(taken)
    result = ForgetResult(
        status="forgotten" if taken else "nothing",
        removed=taken,
        already_gone=[p for p in plan.paths if p not in present],
        trash=str(batch.folder) if batch.folder is not None else None,
        trash_until=batch.until,
        day_indexes=refreshed,
        sessions=[p for p in taken if _ingested(p)],
        linked_from={t: s for t, s in plan.linked_from.items() if t in removed},
        message=_synced_note(memory) if taken else "The planned files were gone already.",
    )
    if failure is not None:
        left = len(present) - len(taken)
        raise ReMeError(
            f"forgot {len(taken)} file(s) ({', '.join(taken) or 'none'}), then {os_error_line(failure, 'moving a file')}; "
            f"{left} left: run the same forget again to finish"
        )
    return result


def _purge(memory: Memory, paths: list[str]) -> None:
    """What the index and the semantic stage derived from these files, gone from disk."""
    if not paths:
        return
    try:
        memory.index.purge(paths)
    except OSError as exc:
        raise ReMeError(
            f"the files are forgotten, but {os_error_line(exc, 'rebuilding the index')}; "
            "run `reme-mcp reindex` to finish removing them from the index"
        ) from exc


def empty_trash(memory: Memory) -> int:
    """Remove every forgotten file of this workspace from the trash now; how many forgettings."""
    return Trash(memory.settings.trash_home, memory.ws, memory.settings.trash_days).empty()


def command_line(plan: ForgetPlan) -> str:
    """The command a person runs to forget exactly what `plan` lists (for a client that cannot ask them)."""
    words = ["reme-mcp", "forget", "--workspace", plan.workspace, *plan.paths]
    return " ".join(shlex.quote(w) for w in words)


def _ingested(path: str) -> bool:
    """A dialog the importer wrote: session/dialog/<host>/<name>.jsonl (ingest/dialog.py)."""
    parts = path.split("/")
    return len(parts) == 4 and parts[:2] == ["session", "dialog"] and parts[3].endswith(".jsonl")


def _linked_from(memory: Memory, paths: list[str]) -> dict[str, list[str]]:
    """For each file that goes, the files that stay and link to it or say they supersede it."""
    going = set(paths)
    if not going or not memory.ws.root.is_dir():
        return {}
    memory.index.sync()
    found: dict[str, list[str]] = {}
    for record in memory.index.records().values():
        if record.path in going or file_kind(record.path) == "day_index":
            continue  # a day index's block follows its notes
        for target in {link.split("#")[0] for link in (*record.links, *record.supersedes)} & going:
            found.setdefault(target, []).append(record.path)
    return {target: sorted(found[target]) for target in paths if target in found}


def _synced_note(memory: Memory) -> str:
    if (memory.ws.root / ".git").exists():
        return (
            "Run `reme-mcp sync` to carry the removal to the other clones "
            "(the repository's history still holds the old versions: docs/forget.md)."
        )
    return ""
