"""The text of the MCP prompts (faces/prompts.py): one cluster handed to the host's model, and the
request to keep a session's decisions.

The notes go inside the recall boundary: they are data, not instructions. The instruction leads to
`remember` with `supersedes`, so nothing is deleted or edited.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError
from reme_mcp.ops.consolidation.clusters import Cluster
from reme_mcp.ops.consolidation.tidy import clusters_of
from reme_mcp.projects.home import PERSONAL
from reme_mcp.safety import boundary

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

KEEP_SESSION = """Before this session ends, keep what it decided, with reme's `remember` tool.

1. Look back over this session: decisions taken, preferences the person stated, facts about this
   project learnt (commands, paths, people, conventions), and what changed from before.
2. For each one, `search` first: when memory already holds it, keep nothing; when memory holds an
   older value, store the new one with `supersedes` naming the old note's path.
3. Store each durable fact as its own short note with `remember` (scope project for this project's
   facts, personal for the person's preferences everywhere). Use a request_id per fact
   (e.g. session-<topic>) so a retry stores nothing twice.
4. Leave out secrets, passing chatter, and anything only true for this session.
Then say in one line per note what you kept, with its path."""

# Other clusters named in a prompt, so the model (or person) can take the next one.
MAX_LISTED = 20
NO_CLUSTER = "There is nothing to consolidate in this memory now: no notes repeat or replace each other."


def consolidate_text(sources: Iterable[tuple[str | None, Memory]], wanted: str) -> str:
    """The prompt for the cluster `wanted` (empty: the first found) among a session's workspaces."""
    found = clusters_of(sources)
    wanted = wanted.strip()
    chosen = [item for item in found if not wanted or item[2].id == wanted]
    if not chosen:
        if not wanted:
            return NO_CLUSTER
        known = ", ".join(item[2].id for item in found[:10]) or "none now"
        raise ReMeError(f"cluster {wanted!r} is not found: run `reme-mcp tidy --dry-run` (known: {known})")
    label, _, picked = chosen[0]
    others = [item[2].id for item in found if item[2].id != picked.id]
    return consolidation_prompt(picked, "personal" if label == PERSONAL else "project", others)


def consolidation_prompt(cluster: Cluster, scope: str, others: list[str]) -> str:
    """The instruction and the cluster's notes, each inside the recall boundary."""
    paths = list(cluster.replaceable)
    notes = "\n\n".join(_shown(note.path, note.line, note.date, note.text) for note in cluster.notes)
    dialog = [n.path for n in cluster.notes if n.is_dialog]
    source = f" Name the dialog it came from as a wikilink, [[{dialog[0]}]]." if dialog else ""
    waiting = (
        f"\nOther clusters waiting (pass one as this prompt's `cluster` argument): {', '.join(others[:MAX_LISTED])}"
        if others
        else ""
    )
    return (
        f"Consolidate this cluster of reme memory ({cluster.id}, {cluster.kind}): {cluster.reason}.{waiting}\n\n"
        "Read the notes below. If they state one fact (or versions of one fact), write ONE consolidated note "
        "with reme's `remember` tool that says what is true now (where values differ, the newest dated note "
        "wins; keep what an older note adds that is still true), in your own words, not a copy of any one note."
        f"{source} Call it with these exact arguments besides content:\n"
        f"  supersedes: {json.dumps(paths, ensure_ascii=False)}\n"
        f"  scope: {json.dumps(scope)}\n"
        f"  request_id: {json.dumps('consolidate-' + cluster.id)}\n"
        "Never delete or edit a note: the old ones stay, marked superseded, and the person can forget them. "
        "If the notes are about different things, write nothing and say why in one line. "
        "Then answer with the new note's path.\n\n" + notes
    )


def _shown(path: str, line: int, date: str, text: str) -> str:
    where = f"{path} line {line}" if line else path
    return boundary.wrap(f"path: {where}\ndate: {date or 'unknown'}\n\n{text}", "consolidate")
