"""Two machines' notes of the same name on the same day: both kept, the incoming one renamed.

`remember` never overwrites a note, and neither does a sync. When both sides added
`daily/<date>/<name>.md` with different bytes, ours stays where it is and theirs takes the first
free name `<name>-2`, `<name>-3`, ... as `remember` would have named it; its front matter's `name`
follows (the file stem is the name), the files that came in with it link to its new path, and the
day index is rebuilt after the merge (run.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reme_mcp.notes.day_notes import fold_name
from reme_mcp.storage.workspace import Workspace
from reme_mcp.team.git import Git

_NOTE = re.compile(r"^(daily/\d{4}-\d{2}-\d{2})/([^/]+)\.md$")
_NAME_LINE = re.compile(r"(?m)^name[ \t]*:.*$")
_FRONT_END = re.compile(r"(?m)^(?:---|\.\.\.)[^\S\n]*$")
MAX_SUFFIX = 10_000


@dataclass(frozen=True)
class Unmerged:
    path: str
    stages: dict[int, str]  # stage (1 base, 2 ours, 3 theirs) -> blob


def unmerged(git: Git) -> list[Unmerged]:
    """The paths a stopped merge left unmerged (`git ls-files -u -z`)."""
    found: dict[str, dict[int, str]] = {}
    for record in git.out("ls-files", "-u", "-z").split("\0"):
        if record:
            head, _, path = record.partition("\t")
            _mode, blob, stage = head.split(" ")
            found.setdefault(path, {})[int(stage)] = blob
    return [Unmerged(path, stages) for path, stages in sorted(found.items())]


def is_same_name_note(entry: Unmerged) -> bool:
    """Added on both sides with different bytes (no common version), and a daily note."""
    return _NOTE.match(entry.path) is not None and set(entry.stages) == {2, 3}


def renamed_front(data: bytes, stem: str) -> bytes:
    """The note with its front matter's `name` set to `stem`; every other byte as it was."""
    import yaml  # as daily.render_note writes it

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    if not text.startswith("---\n"):
        return data
    end = _FRONT_END.search(text, 4)
    if end is None:
        return data
    front = text[: end.start()]
    line = yaml.safe_dump({"name": stem}, allow_unicode=True, width=10_000).strip()
    new_front, n = _NAME_LINE.subn(lambda _: line, front, count=1)
    if n == 0:
        new_front = front + line + "\n"
    return (new_front + text[end.start() :]).encode("utf-8")


def free_path(ws: Workspace, git: Git, path: str, taken: set[str]) -> str:
    """`<folder>/<stem>-N.md`: the first N no file, tracked path or earlier choice holds (case-folded)."""
    found = _NOTE.match(path)
    assert found is not None
    folder, stem = found[1], found[2]
    listed = git.out("ls-files", "-z", "--", f"{folder}/").split("\0")
    names = {fold_name(p.rsplit("/", 1)[-1]) for p in listed if p} | taken
    directory = ws.root / folder
    if directory.is_dir():
        names |= {fold_name(p.name) for p in directory.iterdir()}
    for n in range(2, MAX_SUFFIX):
        candidate = f"{stem}-{n}"
        if fold_name(f"{candidate}.md") not in names:
            return f"{folder}/{candidate}.md"
    raise RuntimeError(f"no free name for {path}")


def keep_both(ws: Workspace, git: Git, entry: Unmerged, taken: set[str]) -> str:
    """Ours stays at the path, theirs goes to a new one (returned); both staged and checked out, byte for byte."""
    new = free_path(ws, git, entry.path, taken)
    taken.add(fold_name(new.rsplit("/", 1)[-1]))
    stem = new.rsplit("/", 1)[-1].removesuffix(".md")
    renamed = renamed_front(git.blob(entry.stages[3]), stem)
    blob = git.run("hash-object", "-w", "--stdin", input=renamed).out.strip()
    git.run("checkout", "--ours", "--", entry.path)
    git.run("add", "--", entry.path)
    git.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{new}")
    git.run("checkout", "--", new)
    return new


def relink(ws: Workspace, paths: list[str], moved: dict[str, str]) -> list[str]:
    """In these files (the ones that came in), links to a moved note point to its new path; those changed."""
    if not moved:
        return []
    pattern = re.compile(r"\[\[(" + "|".join(re.escape(old) for old in moved) + r")(?=[\]#|])")
    changed = []
    for rel in paths:
        target = ws.entry(rel)
        if target is None or rel in moved.values():
            continue
        try:
            text = (ws.root / rel).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = pattern.sub(lambda m: "[[" + moved[m[1]], text)
        if new != text:
            ws.write_atomic(ws.root / rel, new)
            changed.append(rel)
    return changed
