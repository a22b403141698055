"""Text as it can leave the process: a lone UTF-16 surrogate becomes U+FFFD.

Python strings carry what UTF-8 cannot: a lone surrogate, from a JSON or YAML escape in a
file ("\\ud800", half of a split emoji) or from an argument that is not UTF-8 (decoded with
`surrogateescape`). Such a string cannot be written out: an MCP reply, the CLI's output,
the index's terms and the model's tokenizer all refuse it, and one message holding it
would fail every search that finds it. It reads as U+FFFD, as a byte that is not UTF-8
reads when a file is decoded. The files themselves are never changed.

A file's name that is not UTF-8 cannot be named to a client at all; the walk leaves such a
file out (workspace.py, `nameable`). What a caller asks to be stored or opened is refused
with one line instead (`require_unicode`): a note must be written as UTF-8.
"""

from __future__ import annotations

import re

from reme_mcp.errors import ReMeError

__all__ = ["json_escaped", "nameable", "readable", "require_unicode"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def readable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def json_escaped(line: str) -> str:
    """A JSON text with each lone surrogate written as the escape it was read from ("\\ud800"):
    the file stays UTF-8, and reads back the same text."""
    if line.isascii():
        return line
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", line)


def nameable(name: str) -> bool:
    """Whether a file name (as os.scandir decodes it) is valid UTF-8, so a client can be told it."""
    return name.isascii() or _LONE_SURROGATE.search(name) is None


def require_unicode(value: str, field: str) -> None:
    """A one-line ReMeError when `value` holds a lone surrogate, which no file can store."""
    if not nameable(value):
        raise ReMeError(f"{field} holds a lone UTF-16 surrogate (half of a split emoji?): send valid Unicode")
