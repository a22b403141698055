"""The words that tell a fact's value from its wording: number words, words that open a sentence
without naming anything, and the ways a note says that something changed (versions: fact_shape.py).

English words are matched as whole words; Chinese markers as written, since Chinese has no spaces.
"""

from __future__ import annotations

import re

NUMBER_WORDS = frozenset(
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
COMMON_OPENERS = frozenset(
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
        "their",
        "its",
        "after",
        "before",
        "when",
        "while",
        "if",
    ]
)

# How a note says that something changed. "now" alone counts: "X now runs Y" is how people write it.
CHANGE_WORDS = re.compile(
    r"\b(?:now|no longer|not anymore|any ?more|moved|changed|switched|replaced|upgraded|downgraded|raised|"
    r"lowered|increased|decreased|tightened|relaxed|updated|instead|correction|corrected|actually|"
    r"from now on|going forward|as of|stepped down|took over|takes over|handed over|renamed|migrated|"
    r"became|is being replaced|previously|formerly|used to|in favou?r of|retired|deprecated|dropped)\b"
)
CHANGE_MARKERS_CJK = (
    "改为",
    "改成",
    "改到",
    "换成",
    "换到",
    "变成",
    "变为",
    "现在",
    "不再",
    "更正",
    "调整为",
    "升级",
    "迁移",
    "迁到",
    "搬到",
    "挪到",
    "加到",
    "降到",
    "接任",
    "接手",
    "取代",
    "已改",
    "原来",
    "以前",
)


def says_change(text: str) -> bool:
    """Whether a text words itself as a change: "now", "moved to", "no longer", "改为"..."""
    folded = text.casefold()
    return bool(CHANGE_WORDS.search(folded)) or any(marker in folded for marker in CHANGE_MARKERS_CJK)
