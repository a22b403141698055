"""What a remote brings in, checked before any of it reaches the work tree.

A remote is untrusted input, like a workspace from elsewhere: a symbolic link (which could lead
outside the workspace), a submodule, or derived state (metadata/, mem_session/: reme-mcp's own
records and locks) coming in stops the sync with one line, and nothing of it is checked out. A
remote whose history no longer contains what was last seen there (force-pushed) stops it too:
merging would bring back what someone meant to remove, or lose what they meant to keep.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reme_mcp.storage.workspace import MAX_PATH_CHARS, PRIVATE_DIRS
from reme_mcp.team.git import GitError

_LINK, _SUBMODULE = "120000", "160000"
_TEMP = re.compile(r"^\..+\.tmp-[0-9a-f]+$")  # workspace.write_atomic's temp files


class Refused(GitError):
    """The remote brought something reme-mcp does not let into a workspace."""


def incoming_entries(raw: str, whole_tree: bool) -> list[tuple[str, str]]:
    """(mode, path) of every file added or changed: `diff-tree -r -z` output, or `ls-tree -r -z` for a whole tree."""
    entries: list[tuple[str, str]] = []
    if whole_tree:
        for record in raw.split("\0"):
            if record:
                head, _, path = record.partition("\t")
                entries.append((head.split(" ")[0], path))
        return entries
    parts = raw.split("\0")
    for head, path in zip(parts[0::2], parts[1::2], strict=False):
        fields = head.lstrip(":").split(" ")
        if len(fields) >= 5 and fields[4][:1] != "D":
            entries.append((fields[1], path))
    return entries


def vet(entries: list[tuple[str, str]], where: str) -> None:
    """Refuse, in one line, the first entry a workspace must not receive."""
    for mode, path in entries:
        top = path.split("/", 1)[0]
        if mode == _LINK:
            raise Refused(f"{where} brings a symbolic link {path}: refused (links could lead outside the workspace)")
        if mode == _SUBMODULE:
            raise Refused(f"{where} brings a submodule {path}: refused (a workspace holds files only)")
        if top.casefold() in PRIVATE_DIRS:  # on macOS and Windows, METADATA/ is metadata/
            raise Refused(f"{where} brings {path}: refused ({top}/ is derived state, never shared)")
        if _TEMP.match(path.rsplit("/", 1)[-1]):
            raise Refused(f"{where} brings {path}: refused (a writer's temp file, never shared)")
        if len(path) > MAX_PATH_CHARS or any(part in ("", ".", "..") for part in path.split("/")):
            raise Refused(f"{where} brings a path reme-mcp does not accept: {path[:80]!r}")


def check_untracked(
    added: list[str], exists: Callable[[str], bool], tracked: Callable[[str], bool], where: str
) -> None:
    """Refuse an incoming file where an untracked one lies here (git would overwrite an ignored file)."""
    for path in added:
        if exists(path) and not tracked(path):
            raise Refused(
                f"{where} brings {path}, and a file not in the repository (ignored?) is there here: "
                "move it away, then sync again"
            )


def check_not_rewritten(seen: str | None, tip: str | None, contains: bool, where: str) -> None:
    """Stop when the remote no longer holds what this clone last saw there."""
    if seen is None:
        return
    if tip is None:
        raise Refused(f"{where} is gone from the remote (it held {seen[:12]}): nothing was merged or pushed")
    if not contains:
        raise Refused(
            f"{where} was rewritten (force-pushed): it no longer contains {seen[:12]}; nothing was merged "
            "or pushed (see docs/team-sync.md to start again from the remote)"
        )
