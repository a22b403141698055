"""The merge driver of a day index `daily/<date>.md`: git runs it (`merge.reme-day-index.driver`).

The automatic block and the description are the writer's, rebuilt from the notes after every
merge: both are set aside (rendered as for a day with no notes) before the three versions are
merged, so two machines' blocks never conflict. What is left is a person's text, merged as git
merges text; a real conflict there is reported to git, which stops the merge.

A day index added on both sides has no common version: the empty day index ReMe writes stands
in for it, so a person's text added on one side merges cleanly with the other side's file.
Usage (git fills in the arguments): python -m reme_mcp.team.driver BASE OURS THEIRS MARKER_SIZE PATH
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from reme_mcp.notes.day_index import layout, render
from reme_mcp.team.git import SAFE_OPTIONS

_DAY_INDEX = re.compile(r"^daily/(\d{4}-\d{2}-\d{2})\.md$")


def set_aside(day: str, text: str | None) -> str:
    """The day index with its block and description as for a day with no notes: a person's text only."""
    return render(day, [], layout(text) if text is not None else None)


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def merge(base: Path, ours: Path, theirs: Path, marker_size: str, rel: str) -> int:
    """Merge into `ours`; the number of conflicts (0: clean), as `git merge-file` counts them."""
    day = _DAY_INDEX.match(rel)
    base_text, ours_text, theirs_text = (_text(p) for p in (base, ours, theirs))
    with tempfile.TemporaryDirectory(prefix="reme-merge-") as tmp:
        if day is not None and base_text is not None and ours_text is not None and theirs_text is not None:
            common = base_text if base_text.strip() else None  # None: added on both sides
            versions = [set_aside(day[1], common), set_aside(day[1], ours_text), set_aside(day[1], theirs_text)]
            paths = [Path(tmp, name) for name in ("base", "ours", "theirs")]
            for path, version in zip(paths, versions, strict=True):
                path.write_bytes(version.encode("utf-8"))
        else:  # not a day index, or not text: merged as git merges any file
            paths = [base, ours, theirs]
        labels = ["-L", "ours", "-L", "base", "-L", "theirs"]
        done = subprocess.run(
            [
                "git",
                *SAFE_OPTIONS,
                "merge-file",
                "-p",
                f"--marker-size={marker_size}",
                *labels,
                *map(str, paths[1:2]),
                str(paths[0]),
                str(paths[2]),
            ],
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
    if done.returncode < 0 or done.returncode > 127:
        sys.stderr.write(done.stderr.decode("utf-8", "replace"))
        return 1
    ours.write_bytes(done.stdout)
    return done.returncode


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        sys.stderr.write("usage: python -m reme_mcp.team.driver BASE OURS THEIRS MARKER_SIZE PATH\n")
        return 2
    base, ours, theirs = (Path(a) for a in argv[1:4])
    conflicts = merge(base, ours, theirs, argv[4], argv[5].replace(os.sep, "/"))
    return 0 if conflicts == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
