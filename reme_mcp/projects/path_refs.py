"""The repository paths a note names: `src/payments/retry.py`, `docs/`, `app/main.go:42`.

Only the shape is judged here; whether a path belongs to the repository is the checkout's to
say (checkout.py). The shape is strict, because a false "this file is gone" is worse than
none: a bare word needs a folder and an extension (`src/retry.py`) or a trailing slash
(`docs/`); inside backticks a folder path (`src/payments`) or a file name with an extension
(`Makefile.am`) is enough. Whatever cannot name a file inside the work tree is left as text and
never looked up: an absolute path, `~/...`, anything with `..` or `.` as a part, a URL, a
wikilink or a memory note's own path (`daily/2026-11-28/a.md`: the workspace's, not the repository's).
"""

from __future__ import annotations

import re
from functools import lru_cache

# A part of a path: letters of any script, digits and the punctuation file names commonly use.
_PART = r"[\w@+,=.-]+"
_BACKTICKED = re.compile(r"`([^`\n]{1,300})`")
_WIKILINK = re.compile(r"\[\[[^\]\n]{0,500}\]\]")
# A bare path: at least one folder, not glued to what comes before (a URL's host, `~/`, `$HOME/`,
# an absolute path's slash, a Windows drive's colon).
_BARE = re.compile(rf"(?<![\w/.:~@$\\-])((?:{_PART}/)+{_PART}/?|(?:{_PART}/)+)")
# Where a path ends and a place in it starts: `:42`, `:42-50`, `:42:7`, `#L42-L50`.
_PLACE = re.compile(r"(?::\d+(?:[-:]\d+)?|#L\d+(?:-L?\d+)?)$")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9_+-]{0,11}$")
_SHAPE = re.compile(rf"{_PART}(?:/{_PART})*/?")
# The memory workspace's own paths (a note citing another note), not the repository's.
_WORKSPACE = re.compile(r"(?:daily/\d{4}-\d{2}-\d{2}(?:/|\.md$)|digest/(?:personal|procedure|wiki)/|session/dialog/)")
# Sentence punctuation a bare path may be followed by.
_TRAILING = ".,;:!?)]}'\""
MAX_REFS = 24
MAX_PATH_CHARS = 300


@lru_cache(maxsize=4096)
def path_refs(text: str) -> tuple[str, ...]:
    """The repository-relative paths `text` names, in order of first mention, without places
    (`:42`) or a leading `./`; folders keep their trailing slash. Kept per text: the same hits
    come back search after search."""
    found: list[str] = []
    if "/" not in text and "`" not in text:
        return ()  # most notes: nothing shaped like a path
    text = _WIKILINK.sub(" ", text)
    for match in _BACKTICKED.finditer(text):
        _add(found, _cleaned(match.group(1).strip(), backticked=True))
    bare = _BACKTICKED.sub(" ", text)
    for match in _BARE.finditer(bare):
        _add(found, _cleaned(match.group(1).rstrip(_TRAILING), backticked=False))
    return tuple(found[:MAX_REFS])


def _add(found: list[str], path: str | None) -> None:
    if path is not None and path not in found:
        found.append(path)


def _cleaned(raw: str, backticked: bool) -> str | None:
    """`raw` as a path in the work tree, or None when it is not shaped like one."""
    path = _PLACE.sub("", raw)
    while path.startswith("./"):
        path = path[2:]
    if not path or len(path) > MAX_PATH_CHARS or not _SHAPE.fullmatch(path) or _WORKSPACE.match(path):
        return None  # absolute, `~`, a URL, spaces, backslashes, a memory note's path: text
    parts = path.rstrip("/").split("/")
    if any(part in (".", "..") or part.strip(".") == "" for part in parts):
        return None  # `..` leaves the tree; `...` and `.` are prose
    is_folder = path.endswith("/")
    has_folder = len(parts) > 1
    named_file = _EXTENSION.search(parts[-1]) is not None and not _is_number_like(parts[-1])
    if backticked:
        return path if (has_folder or is_folder or named_file) else None
    return path if (has_folder and (named_file or is_folder)) else None


def _is_number_like(part: str) -> bool:
    """A version or a number (`v1.2`, `3.11`, `1.0.0-rc1`): prose, not a file."""
    return re.fullmatch(r"v?\d+(?:\.\d+)+(?:[-.][A-Za-z0-9]+)?", part) is not None
