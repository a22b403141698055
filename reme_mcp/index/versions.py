"""Versions of a fact: which notes a note supersedes, and which hits state one fact with other values.

Two relations, kept apart because only one of them is a person's word:

- **Superseded** (explicit): a note's front matter names the notes it replaces
  (`supersedes: ['[[daily/2026-08-03/k8s.md]]']`, written by `remember(supersedes=...)` or by
  hand). The relation is read from the files into the index's file records, so it survives a
  rebuild. A chain A <- B <- C resolves to C, the note nothing supersedes.
- **Possibly outdated** (implicit): two hits that share most of their wording but name different
  values (numbers, identifiers, names) are taken for two versions of one fact; the newer one is
  put first and the older one marked. Similarity alone never supersedes anything: the older note is
  only marked, and notes that merely share words (no value replaced by another) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from reme_mcp.index.analysis import query_term_set
from reme_mcp.storage.documents import wikilinks

# Implicit versions: at least this many shared words, and this share of the words of both.
MIN_SHARED_WORDS = 2
MIN_SHARED_SHARE = 0.34
# Notes longer than this are not one fact: two long notes share wording without being versions.
MAX_FACT_CHARS = 600

_NUMBER_WORDS = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "hundred",
        "thousand",
        "first",
        "second",
        "third",
        "once",
        "twice",
        "零",
        "一",
        "二",
        "两",
        "三",
        "四",
        "五",
        "六",
        "七",
        "八",
        "九",
        "十",
        "百",
        "千",
        "万",
    ]
)
# Words that start sentences without naming anything: a capital there is no name.
_COMMON_OPENERS = frozenset(
    [
        "the",
        "a",
        "an",
        "we",
        "i",
        "you",
        "he",
        "she",
        "it",
        "they",
        "our",
        "my",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "from",
        "since",
        "as",
        "at",
        "in",
        "on",
        "for",
        "to",
        "of",
        "by",
        "with",
        "and",
        "but",
        "or",
        "so",
        "then",
        "now",
        "today",
        "yesterday",
        "tomorrow",
        "correction",
        "update",
        "note",
        "please",
        "all",
        "every",
        "each",
        "new",
        "old",
        "our",
        "their",
        "its",
        "after",
        "before",
        "when",
        "while",
        "if",
    ]
)
# How a note says that something changed (English words, and Chinese markers matched as written).
_CHANGE_WORDS = re.compile(
    r"\b(?:now|no longer|not anymore|any more|moved|changed|switched|replaced|upgraded|downgraded|raised|lowered|"
    r"increased|decreased|tightened|relaxed|updated|instead|correction|corrected|actually|from now on|"
    r"stepped down|took over|takes over|renamed|migrated|became|is being replaced)\b"
)
_CHANGE_MARKERS_CJK = (
    "改为",
    "改成",
    "换成",
    "变成",
    "变为",
    "现在",
    "不再",
    "更正",
    "调整为",
    "升级",
    "迁移",
    "接任",
    "取代",
    "已改",
)
_WORD = re.compile(r"[\w][\w.\-/:@+]*[\w]|\w", re.UNICODE)
_SENTENCE_ENDS = frozenset(".!?。！？:：;；-–—*#>")


def supersede_targets(meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths a note's front matter says it supersedes: wikilinks or plain paths, a list or one string."""
    value = meta.get("supersedes")
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    found: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        links = wikilinks(item)
        found.extend(links if links else [item.strip()])
    return tuple(dict.fromkeys(p.strip().lstrip("/") for p in found if p.strip()))


def superseders(records: Iterable[tuple[str, tuple[str, ...]]]) -> dict[str, list[str]]:
    """Path -> the notes that name it in their `supersedes`, from (path, supersedes) pairs."""
    by_target: dict[str, list[str]] = {}
    for path, targets in records:
        for target in targets:
            if target != path:
                by_target.setdefault(target, []).append(path)
    return by_target


def current_versions(path: str, by_target: Mapping[str, list[str]]) -> list[str]:
    """The notes that replace `path` in the end: its superseders, followed along chains to the ones
    nothing supersedes (a loop written by hand ends where it closes). Empty when `path` is current."""
    heads: list[str] = []
    seen = {path}
    todo = list(by_target.get(path, ()))
    while todo:
        step = todo.pop(0)
        if step in seen:
            continue
        seen.add(step)
        later = [p for p in by_target.get(step, ()) if p not in seen]
        if later:
            todo.extend(later)
        elif step not in heads:
            heads.append(step)
    return sorted(heads)


@lru_cache(maxsize=4096)
def _shape(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """A short text's analysed words, and its values (numbers, identifiers, names) as written."""
    values: set[str] = set()
    for match in _WORD.finditer(text):
        before = text[: match.start()].rstrip()
        if _is_value(match.group(), at_start=not before or before[-1] in _SENTENCE_ENDS):
            values.add(match.group().casefold())
    return query_term_set(text), frozenset(values)


def _is_value(word: str, at_start: bool) -> bool:
    """A word that carries a value: it holds a digit, is a number word, or is a name (capitalised and,
    at the start of a sentence, not one of the words that start sentences anyway)."""
    folded = word.casefold()
    if any(c.isdigit() for c in word) or folded in _NUMBER_WORDS:
        return True
    if not word[:1].isupper() or not word.isascii():
        return False
    return not at_start or folded not in _COMMON_OPENERS


def _says_change(text: str) -> bool:
    """Whether a text words itself as a change: "now", "moved to", "no longer", "改为"..."""
    folded = text.casefold()
    return bool(_CHANGE_WORDS.search(folded)) or any(marker in folded for marker in _CHANGE_MARKERS_CJK)


def same_fact(older: str, newer: str) -> bool:
    """Whether two short texts read as two versions of one fact: mostly the same words, and a value
    replaced by another or the newer one worded as a change."""
    if len(older) > MAX_FACT_CHARS or len(newer) > MAX_FACT_CHARS:
        return False
    words_a, values_a = _shape(older)
    words_b, values_b = _shape(newer)
    # Numbers alone say nothing of the subject ("555" in two phone numbers): they count only as values.
    shared = {w for w in words_a & words_b if not w.isdigit()}
    if len(shared) < MIN_SHARED_WORDS or len(shared) < MIN_SHARED_SHARE * min(len(words_a), len(words_b)):
        return False
    if words_b <= words_a and values_b <= values_a:
        return False  # the newer says nothing the older does not
    return (bool(values_a - values_b) and bool(values_b - values_a)) or _says_change(newer)
