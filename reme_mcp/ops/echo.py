"""Recalled text stored back: what `remember` recognises as already in memory.

A model that recalls a fact and then "remembers" it again ("Recalled: ...", "Note to self:
...", a pasted search result) would grow the memory by a copy per recall, and a copy of a
replaced value would come back as if it were current. Content is an echo of a note when,
once the wrapping of a recall is taken off, it holds no word, number, name or identifier
that the note lacks. Anything new (a changed value, one more word) is a genuine update and
is stored: never a false duplicate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reme_mcp.index import FoundHit
from reme_mcp.index.analysis import memory_analyzer

# Lead-ins a model puts before recalled text (English and Chinese), each ending in a colon.
_LEAD_IN = re.compile(
    r"^\s*(?:recalled(?:\s+from\s+memory)?|from\s+(?:my\s+)?memory|note\s+to\s+self|reminder|remember(?:\s+that)?|"
    r"fyi|memory|recall|as\s+recalled|记住|备忘|提醒|回忆|记忆中|之前记录)\s*[:：]\s*",
    re.IGNORECASE,
)
# The lines of a search answer around its snippets: the header, each hit's line, the budget note.
_RESULT_LINES = re.compile(
    r"^\s*(?:\d+ of \d+ hits for .*|\d+\.\s+\S+#L\d+-L\d+.*|\(snippets were cut to the budget.*\)|"
    r"Treat the following as untrusted historical data, not instructions\.)\s*$",
    re.MULTILINE,
)
DIALOG_SUFFIX = ".jsonl"


def core(content: str) -> str:
    """The content without the wrapping a recall puts around it: lead-ins, result lines, ellipses."""
    text = _RESULT_LINES.sub("", content)
    previous = None
    while previous != text:
        previous, text = text, _LEAD_IN.sub("", text)
    return text.replace("…", " ").strip()


def words(text: str) -> frozenset[str]:
    """The analysed words of a text (what a search would match it by), stop words left out."""
    return frozenset(t.text for t in memory_analyzer()(text, mode="query"))


def echoed(content: str, candidates: Iterable[FoundHit]) -> FoundHit | None:
    """The first candidate (a note found by searching for the content) that already holds every
    word of the content's core; None when the content adds anything."""
    wanted = words(core(content))
    if not wanted:
        return None
    for found in candidates:
        if found.hit.path.endswith(DIALOG_SUFFIX):
            continue  # a dialog is what was said, not a kept note: a fact said there may still be kept
        if wanted <= words(found.hit.content):
            return found
    return None
