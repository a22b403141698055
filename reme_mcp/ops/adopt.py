"""`reme-mcp project adopt`: memory kept before projects, sorted into the workspaces it belongs to.

A workspace written before each project had its own (a plugin's data folder, `./.reme`, an old
`~/.reme`) holds every project's notes together. What says where a file came from moves it to
that project's workspace: an ingested dialog's recorded working folder, and a note's session
(its `session_id` or `source_conversation` naming such a dialog). The rest moves to the
personal workspace. Files are moved, never deleted or overwritten: a name already taken at
the destination gets a new one. Day indexes are rebuilt where notes left or arrived, with a
person's text outside their block kept. Derived state (`metadata/`, `mem_session/`) stays.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reme_mcp.errors import ReMeError
from reme_mcp.notes.daily import DayIndex
from reme_mcp.projects.home import PERSONAL, MemoryHome
from reme_mcp.projects.placement import candidates, place
from reme_mcp.storage.documents import meta_text, split_front_matter
from reme_mcp.storage.workspace import Workspace, path_date

DIALOGS = "session/dialog/"
# The head of a dialog read for its working folder: the first message carries it.
HEAD_BYTES = 64_000


@dataclass
class Move:
    path: str  # in the old workspace
    project: str  # the destination's name ('personal' or a project folder)
    target: Path  # the destination workspace
    because: str  # what said where it belongs
    folder: str = ""  # the working folder that named the project ("" for personal)
    renamed_to: str | None = None


@dataclass
class AdoptPlan:
    source: Path
    moves: list[Move] = field(default_factory=list)

    def render(self, done: bool) -> str:
        verb = "moved" if done else "would move"
        lines = [f"{self.source}: {verb} {len(self.moves)} file(s)"]
        for move in self.moves:
            renamed = f" as {move.renamed_to}" if move.renamed_to and move.renamed_to != move.path else ""
            lines.append(f"  {move.path} -> {move.project}{renamed} ({move.because})")
        return "\n".join(lines)


def plan(source: Path, home: MemoryHome) -> AdoptPlan:
    """Where every memory file of the old workspace `source` goes; reads, never writes."""
    ws = Workspace(source)
    if not ws.root.is_dir():
        raise ReMeError(f"no workspace at {source}: name a folder that holds daily/, digest/ or session/")
    if ws.root in (home.personal.resolve(), home.projects_root.resolve()) or ws.root.is_relative_to(
        home.projects_root.resolve()
    ):
        raise ReMeError(f"{source} is already where project or personal memory lives: nothing to adopt")
    dialogs: dict[str, str] = {}  # a dialog's path and its session id -> its working folder
    entries = sorted(entry.path for entry in ws.walk())
    for rel in entries:
        if rel.startswith(DIALOGS) and rel.endswith(".jsonl"):
            folder, session = _dialog_facts(ws.root / rel)
            if folder:
                dialogs[rel] = dialogs[Path(rel).stem] = folder
                if session:
                    dialogs[session] = folder
    where: dict[str, tuple[str, Path]] = {}

    def destination(folder: str) -> tuple[str, Path]:
        if folder not in where:
            found = place(home, candidates(None, None, {}, Path(folder)))
            where[folder] = found.write_target
        return where[folder]

    result = AdoptPlan(ws.root)
    for rel in entries:
        if rel.startswith("daily/") and rel.count("/") == 1:
            continue  # a day index: rebuilt where its notes go (a person's text in it stays here)
        folder, because = _origin(ws, rel, dialogs)
        name, target = destination(folder) if folder else (PERSONAL, home.personal)
        result.moves.append(Move(rel, name, target, because if folder else "origin unknown", folder))
    return result


def apply(plan: AdoptPlan, home: MemoryHome, progress: Callable[[Move], None] | None = None) -> AdoptPlan:
    """Move the planned files; each lands whole under a free name, then leaves the old workspace."""
    days: dict[Path, set[str]] = {}
    for move in plan.moves:
        project = None
        if move.project != PERSONAL:
            project = place(home, candidates(None, None, {}, Path(move.folder))).project
        home.prepare(move.target, project)
        move.renamed_to = _move(plan.source / move.path, move.target, move.path)
        day = path_date(move.path)
        if day and move.path.startswith("daily/"):
            days.setdefault(move.target, set()).add(day)
            days.setdefault(plan.source, set()).add(day)
        if progress is not None:
            progress(move)
    for root, touched in days.items():
        index = DayIndex(Workspace(root))
        for day in sorted(touched):
            index.refresh(day)
    return plan


def _origin(ws: Workspace, rel: str, dialogs: dict[str, str]) -> tuple[str, str]:
    """The working folder a file came from, and what says so; ("", "") when nothing does."""
    if rel in dialogs:
        return dialogs[rel], "the dialog's working folder"
    if not rel.endswith(".md"):
        return "", ""
    try:
        meta, _ = split_front_matter((ws.root / rel).read_text("utf-8", errors="replace"))
    except OSError:
        return "", ""
    link = meta_text(meta, "source_conversation").strip("[]").split("#", 1)[0]
    if link in dialogs:
        return dialogs[link], "its source conversation"
    session = meta_text(meta, "session_id")
    if session and session in dialogs:
        return dialogs[session], "its session"
    return "", ""


def _dialog_facts(path: Path) -> tuple[str, str]:
    """The working folder (`project`) and session id an ingested dialog's messages recorded."""
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return "", ""
    for line in head.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        meta = message.get("metadata") if isinstance(message, dict) else None
        folder = meta.get("project") if isinstance(meta, dict) else None
        if isinstance(folder, str) and folder.startswith("/"):
            session = meta.get("session_id") if isinstance(meta, dict) else None
            return folder, session if isinstance(session, str) else ""
    return "", ""


def _move(source: Path, target_root: Path, rel: str) -> str:
    """`source` into `target_root` at `rel`, or a free name beside it; the name it got."""
    target = target_root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    stem, suffix = os.path.splitext(rel)
    number = 1
    while target.exists():
        if target.read_bytes() == source.read_bytes():
            source.unlink()  # the same bytes are already there: the move is done
            return rel
        number += 1
        rel_try = f"{stem}-adopted-{number}{suffix}"
        target = target_root / rel_try
    try:
        os.link(source, target)  # the name is taken atomically or not at all
    except OSError:
        shutil.copy2(source, target)
    source.unlink()
    return str(target.relative_to(target_root)).replace(os.sep, "/")
