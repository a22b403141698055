"""A short note read as a fact: its sentences, its words, its values, and whether it words a change.

Versions of a fact (version_rules.py) are told apart by what differs between two notes and what
stays. This module only reads one text, or two texts side by side; it decides nothing.

- **Sentences** are cut at a sentence's end or a line break. Two notes that hold one sentence
  alike (a boilerplate line, "Questions go to #platform-help.") are compared without it: a
  sentence both repeat says nothing of whether one replaced the other.
- **Values** are the words that carry a value: a number, an identifier with a digit, a number
  word, or a name (capitalised, and not merely the first word of a sentence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from reme_mcp.index.analysis import query_term_set
from reme_mcp.index.fact_words import COMMON_OPENERS, NUMBER_WORDS, says_change

_WORD = re.compile(r"[\w][\w.\-/:@+]*[\w]|\w", re.UNICODE)
_NUMBER = re.compile(r"[0-9][0-9A-Za-z.:\-]*")
_SENTENCE_ENDS = frozenset(".!?。！？:：;；-–—*#>")
# A sentence ends at a line break, at ".!?;" before a space (not inside "10.4.2.17"), or at a CJK stop.
_SENTENCE_CUT = re.compile(r"\n+|(?<=[.!?;])\s+|(?<=[。！？；])")
_EDGES = " \t-*#>•.。!！?？;；:：,，"


@dataclass(frozen=True)
class FactShape:
    """What one text says, as the version rules look at it."""

    words: frozenset[str]  # analysed words, as a search would match them
    values: frozenset[str]  # the words carrying values, as written (casefolded)
    value_words: frozenset[str]  # the analysed words of those values
    changed: bool  # the text words itself as a change ("now", "moved to", "改为")

    @property
    def plain(self) -> frozenset[str]:
        """The words that are no value: what a fact is about and how it is worded."""
        return frozenset(w for w in self.words - self.value_words if not any(c.isdigit() for c in w))

    @property
    def named(self) -> frozenset[str]:
        """The words that name something, numbers left out: "555" in two phone numbers names nothing."""
        return frozenset(w for w in self.words if not any(c.isdigit() for c in w))


def sentence_key(sentence: str) -> str:
    """A sentence as compared with another: case, spacing and the marks around it left out."""
    return " ".join(sentence.casefold().split()).strip(_EDGES)


def sentences(text: str) -> list[str]:
    """The text's sentences, in order, empty pieces left out."""
    return [piece for piece in _SENTENCE_CUT.split(text) if sentence_key(piece)]


def apart(older: str, newer: str) -> tuple[str, str]:
    """Each text without the sentences both hold: what is left is where they can differ."""
    old, new = sentences(older), sentences(newer)
    both = {sentence_key(s) for s in old} & {sentence_key(s) for s in new}
    if not both:
        return older, newer
    return (
        "\n".join(s for s in old if sentence_key(s) not in both),
        "\n".join(s for s in new if sentence_key(s) not in both),
    )


@lru_cache(maxsize=4096)
def fact_shape(text: str) -> FactShape:
    """One text read as a fact."""
    values: set[str] = set()
    pieces: set[str] = set()  # the values' own words: of a Chinese run ("每周二下午3点开"), its numbers
    for match in _WORD.finditer(text):
        word = match.group()
        before = text[: match.start()].rstrip()
        if is_value(word, at_start=not before or before[-1] in _SENTENCE_ENDS):
            values.add(word.casefold())
            pieces.update([word.casefold()] if word.isascii() else _NUMBER.findall(word))
    value_words = query_term_set(" ".join(pieces)) if pieces else frozenset()
    return FactShape(query_term_set(text), frozenset(values), frozenset(value_words), says_change(text))


def is_value(word: str, at_start: bool) -> bool:
    """A word that carries a value: it holds a digit, is a number word, or is a name (capitalised and,
    at the start of a sentence, not one of the words that start sentences anyway)."""
    folded = word.casefold()
    if any(c.isdigit() for c in word) or folded in NUMBER_WORDS:
        return True
    if not word[:1].isupper() or not word.isascii():
        return False
    return not at_start or folded not in COMMON_OPENERS
