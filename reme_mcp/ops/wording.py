"""Words for a person: counts with their noun in the right number, paths and text a terminal shows
as they are (no escape sequence or direction override acts on the terminal)."""

from __future__ import annotations

import re

# Control characters but the line break and the tab; the bidirectional overrides.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """Text a terminal shows as it is: no escape sequence or override acts on the terminal."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def person_path(path: str) -> str:
    """A workspace path as it is, on one line."""
    return terminal_text(path).replace("\n", "\\u000a").replace("\t", "\\u0009")


def counted(count: int, word: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: 1 note, 2 notes."""
    return f"{count:,} {word if count == 1 else plural or word + 's'}"
