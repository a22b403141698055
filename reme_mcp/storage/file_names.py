"""The file names reme-mcp writes, legal wherever its hosts run: Windows' rules are the strictest.

A workspace synced through git, or copied, meets every file system its team uses: a note named
`a:b.md` or `CON.md` written on Linux cannot be checked out on Windows. So every name reme-mcp
makes is checked (a name a person gives: refused with the reason) or made legal (a name derived
from content, a session id, a repository).
"""

from __future__ import annotations

import re

# Windows refuses these in a name; "/" and "\\" are folder separators everywhere.
FORBIDDEN_CHARS = frozenset('<>:"/\\|?*')
# Windows reserves these as device names, with any extension (`con.txt` too), and COM/LPT with
# any digit it reads as one, superscripts included.
DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{d}" for port in ("COM", "LPT") for d in "0123456789\u00b9\u00b2\u00b3"}
)
_ILLEGAL_RUN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]+')


def is_device_name(name: str) -> bool:
    """Whether Windows takes this name for a device: the part before its first dot, blanks cut."""
    return name.split(".")[0].rstrip(" ").upper() in DEVICE_NAMES


def windows_problem(name: str) -> str | None:
    """Why `name` cannot be a file's name on every system reme-mcp runs on, in a few words; None if it can."""
    if not name or name in (".", ".."):
        return "it is empty, . or .."
    if any(ch in FORBIDDEN_CHARS or ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return 'it contains one of < > : " / \\ | ? * or a control character'
    if name[-1] in ". ":
        return "it ends with a dot or a space"
    if is_device_name(name):
        return "it is a Windows device name (CON, PRN, AUX, NUL, COM1, LPT1, ...)"
    return None


def legal_name(name: str, fallback: str) -> str:
    """`name` made legal: each run of forbidden or control characters becomes "-", trailing dots
    and spaces go, and a device name gets "-<fallback>" after its first part. `fallback` (itself
    legal) when nothing is left."""
    name = _ILLEGAL_RUN.sub("-", name).rstrip(". ")
    if not name:
        return fallback
    if is_device_name(name):
        first, dot, rest = name.partition(".")
        name = f"{first.rstrip(' ')}-{fallback}{dot}{rest}"
    return name
