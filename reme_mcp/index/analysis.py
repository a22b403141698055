"""Text analysis for every searchable field: one tokenizer plus small filters.

The pipeline, in the order tokens flow through it::

    ScriptTokenizer     words / identifiers, and runs of CJK characters
    IdentifierFilter    snake_case, CamelCase, file.py -> the whole plus its parts
    FoldFilter          NFKC width folding, case folding, accent folding
    QueryStopFilter     drops English function words from queries only
    EnglishStemFilter   Porter2 stems of plain English words
    CJKBigramFilter     CJK runs -> overlapping character bigrams (+ unigrams)

The same analyzer runs at index time and at query time (Whoosh passes
``mode="query"`` when parsing), so both sides always produce the same terms.

The index stores no positions (schema.py: queries are OR-ed words, never
phrases); the tokens still carry positions and character offsets when Whoosh
asks for them, in the order emitted, the same on the query side as at index time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from whoosh.analysis import Analyzer, Filter, Token, Tokenizer
from whoosh.lang.porter2 import stem as porter_stem

__all__ = [
    "CJKBigramFilter",
    "EnglishStemFilter",
    "FoldFilter",
    "IdentifierFilter",
    "QueryStopFilter",
    "ScriptTokenizer",
    "memory_analyzer",
]

# Token kinds, kept on the token as ``t.kind`` so later filters know what they hold.
WORD = "word"
CJK = "cjk"
RAW = "raw"

# Scripts written without spaces between words (Han, kana, plus Hangul, whose words
# are agglutinative so bigrams inside a word find a stem without its particle).
_CJK_CHARS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK and Kangxi radicals
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u309f"  # Hiragana (with combining voicing marks)
    "\u30a0-\u30fa\u30fc-\u30ff"  # Katakana without the middle dot
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul syllables and Jamo extensions
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # Half-width katakana
    "\U00020000-\U0003134f"  # CJK extensions B-H
)
# Combining marks that are not \w in Python but belong inside a word (decomposed
# accents, Indic vowel signs); without them "cafe\u0301" or Hindi would be split.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0900-\u0963\u0966-\u0dff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
_WORD_RE = rf"[^\W{_CJK_CHARS}]+(?:[{_MARKS}]+[^\W{_CJK_CHARS}]*)*"
# Characters that join word pieces into one identifier-ish token: file.py, v2.3,
# big-time, a/b, bob@example.com, 10:30, don't. Underscore is already \w.
_JOINERS = ".\\-/@:'\u2019"
_TOKEN = re.compile(rf"(?P<{WORD}>{_WORD_RE}(?:[{_JOINERS}]{_WORD_RE})*)|(?P<{CJK}>[{_CJK_CHARS}]+)")
_PIECE = re.compile(rf"[^_{_JOINERS}]+")
# lowerUpper and UPPERLower boundaries: getHTTPResponse -> get HTTP Response.
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])|[A-Z]+")
# Full-width ASCII and the ideographic space, mapped one character to one so the
# character offsets of tokens stay those of the original text.
_HALF_WIDTH = {0xFF01 + i: 0x21 + i for i in range(0x5E)} | {0x3000: 0x20}
_DROP_ACCENTS = dict.fromkeys(range(0x0300, 0x0370))

# Longer "words" are base64 blobs, hashes or minified code: no one searches them
# whole, and huge terms bloat the index. Their identifier parts are still kept.
MAX_TERM_CHARS = 128

# English function words. Dropped from queries only: at index time they cost little
# (BM25 gives them almost no weight), but in the OR query they would make nearly
# every chunk a hit.
ENGLISH_STOP_WORDS = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from"),
        *("had", "has", "have", "how", "if", "in", "into", "is", "it", "its", "of", "on", "or", "so"),
        *("than", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was"),
        *("were", "what", "when", "where", "which", "who", "why", "will", "with"),
    }
)


class ScriptTokenizer(Tokenizer):  # type: ignore[misc]
    """Splits text into word/identifier tokens and runs of CJK characters.

    One compiled regex does the scanning; everything not matched (spaces,
    punctuation, symbols, emoji, control characters, lone surrogates) is a gap.
    """

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Any]:
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:
            t.text, t.kind = value, RAW
            if keeporiginal:
                t.original = value
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar, t.endchar = start_char, start_char + len(value)
            yield t
            return
        if not value.isascii():
            value = value.translate(_HALF_WIDTH)
        for pos, match in enumerate(_TOKEN.finditer(value), start_pos):
            t.text = match.group()
            t.kind = match.lastgroup
            t.boost = 1.0
            t.stopped = False
            if keeporiginal:
                t.original = t.text
            if positions:
                t.pos = pos
            if chars:
                t.startchar = start_char + match.start()
                t.endchar = start_char + match.end()
            yield t


def identifier_parts(text: str) -> list[tuple[int, int]]:
    """Return the (start, end) spans of the parts of an identifier-like word.

    ``my_module.MyClass`` gives my, module, MyClass, My, Class: the pieces
    between joiners, and for a CamelCase piece the piece and its humps. A
    plain word gives nothing.
    """
    spans: list[tuple[int, int]] = []
    for piece in _PIECE.finditer(text):
        start, end = piece.span()
        word = piece.group()
        if (start, end) != (0, len(text)):
            spans.append((start, end))
        if word.isascii() and not word.islower() and not word.isupper():
            humps = [(start + m.start(), start + m.end()) for m in _CAMEL.finditer(word)]
            if len(humps) > 1:
                spans.extend(humps)
    return spans


class IdentifierFilter(Filter):  # type: ignore[misc]
    """Emits an identifier whole and then each of its parts, at following positions.

    Whole first, so ``ERR_CONN_RESET`` is found exactly; parts too, so
    ``reset`` or ``conn`` find it. Runs before case folding, which erases humps.
    """

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        shift = 0
        for t in tokens:
            if t.positions:
                t.pos += shift
            if t.kind != WORD:
                yield t
                continue
            text = t.text
            # Plain words (the vast majority) skip the splitting entirely.
            plain = text.isalnum() and (text.islower() or text.isupper() or text[1:].islower())
            parts = [] if plain else identifier_parts(text)
            if len(text) <= MAX_TERM_CHARS:
                yield t
            if not parts:
                continue
            pos = t.pos if t.positions else 0
            startchar = t.startchar if t.chars else 0
            for i, (start, end) in enumerate(parts, 1):
                if end - start > MAX_TERM_CHARS:
                    continue
                t.text = text[start:end]
                if t.positions:
                    t.pos = pos + i
                if t.chars:
                    t.startchar, t.endchar = startchar + start, startchar + end
                yield t
            shift += len(parts)


def fold(text: str, accents: bool = True) -> str:
    """Fold width, compatibility forms and case (NFKC + casefold), and Latin accents."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if accents:
        decomposed = unicodedata.normalize("NFD", text)
        stripped = decomposed.translate(_DROP_ACCENTS)
        if len(stripped) != len(decomposed):
            text = unicodedata.normalize("NFC", stripped)
    return text


class FoldFilter(Filter):  # type: ignore[misc]
    """Makes ``ＡＢＣ１２３`` match ``abc123`` and ``Café`` match ``cafe``.

    Only the Latin combining accents (U+0300-036F) are dropped: stripping every
    combining mark would turn Japanese が into か and break Indic scripts.
    """

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        for t in tokens:
            text = t.text
            if text.isascii():
                t.text = text.lower()
            else:
                t.text = fold(text, accents=t.kind != CJK)
                if not t.text:
                    continue
            yield t


class CJKBigramFilter(Filter):  # type: ignore[misc]
    """Turns a CJK run into its characters and overlapping bigrams: 口令是 -> 口 口令 令 令是 是.

    Chosen over a dictionary segmenter (jieba) by measurement: no dictionary to
    load (jieba's costs ~0.7 s, too slow for MCP start-up), several times
    faster, and no word split one way at index time and another at query time.
    A two-character query is exactly one indexed bigram. Unigrams are emitted
    at query time too: on a small question set they lifted top-1 from 12/14 to
    14/14 (猫叫什么名字 shares only 猫 and 名 with 我的猫名叫小白); BM25 keeps
    common characters such as 的 and 是 from outranking the bigrams.

    Index and query emit the same sequence at consecutive positions, so a
    phrase query over CJK text lines up with the index.
    """

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        shift = 0
        for t in tokens:
            if t.positions:
                t.pos += shift
            if t.kind != CJK or len(t.text) < 2:
                yield t
                continue
            run = t.text
            last = len(run) - 1
            pos = t.pos if t.positions else 0
            # Per-character offsets only when folding kept the run's length.
            exact = t.chars and t.endchar - t.startchar == len(run)
            startchar = t.startchar if t.chars else 0
            for i in range(last):
                t.text = run[i]
                if t.positions:
                    t.pos = pos + 2 * i
                if exact:
                    t.startchar, t.endchar = startchar + i, startchar + i + 1
                yield t
                t.text = run[i : i + 2]
                if t.positions:
                    t.pos += 1
                if exact:
                    t.endchar += 1
                yield t
            t.text = run[last]
            if t.positions:
                t.pos = pos + 2 * last
            if exact:
                t.startchar, t.endchar = startchar + last, startchar + last + 1
            yield t
            shift += 2 * last


class QueryStopFilter(Filter):  # type: ignore[misc]
    """Drops stop words in ``mode="query"`` only; a query of only stop words yields nothing."""

    def __init__(self, stoplist: frozenset[str] = ENGLISH_STOP_WORDS) -> None:
        self.stops = stoplist

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        stops = self.stops
        for t in tokens:
            if t.mode == "query" and t.text in stops:
                if not t.removestops:
                    t.stopped = True
                    yield t
                continue
            yield t


class EnglishStemFilter(Filter):  # type: ignore[misc]
    """Porter2 (Snowball English) stems plain ASCII words (deploys/deployed/deployment -> deploy).

    Identifiers with joiners, numbers and CJK are left alone: stemming
    ``file.py`` or a version string would only make exact matches fail.
    """

    is_morph = True

    def __init__(self, cachesize: int = 50_000) -> None:
        self.cachesize = cachesize
        self._stem = lru_cache(maxsize=cachesize)(porter_stem)

    def __getstate__(self) -> dict[str, Any]:
        # Whoosh pickles the schema (with its analyzers) on every commit; the
        # cache must not travel with it.
        return {"cachesize": self.cachesize}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state.get("cachesize", 50_000))  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EnglishStemFilter) and other.cachesize == self.cachesize

    def __hash__(self) -> int:
        return hash((type(self), self.cachesize))

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        stem = self._stem
        for t in tokens:
            text = t.text
            if len(text) > 3 and text.isascii() and text.isalpha():
                t.text = stem(text)
            yield t


@cache
def memory_analyzer() -> Analyzer:
    """The analyzer for all searchable text fields, at index time and at query time.

    One per process: its stemming cache then serves every file and query (each dialog
    file started with an empty one: half of document generation's time in a build).
    Calls share no state (each makes its own tokens), so threads may share it.
    """
    return (
        ScriptTokenizer()
        | IdentifierFilter()
        | FoldFilter()
        | QueryStopFilter()
        | EnglishStemFilter()
        # Last, so the many bigrams skip the filters that would pass them through anyway.
        | CJKBigramFilter()
    )


@lru_cache(maxsize=50_000)
def _stemmed(word: str) -> str:
    return str(porter_stem(word))


def query_term_set(text: str) -> frozenset[str]:
    """The terms memory_analyzer gives `text` at query time, as a set, without its token pipeline.

    Comparing hits by their words (arrange.py, versions.py) analysed whole chunks on every
    search, a generator per filter per token; this is the same steps on plain strings, several
    times faster (tests/index/test_analysis.py holds it to the analyzer's own terms).
    """
    if not text.isascii():
        text = text.translate(_HALF_WIDTH)
    terms: set[str] = set()
    for match in _TOKEN.finditer(text):
        word = match.group()
        if match.lastgroup == CJK:
            run = fold(word, accents=False)
            terms.update(run)
            terms.update(run[i : i + 2] for i in range(len(run) - 1))
            continue
        plain = word.isalnum() and (word.islower() or word.isupper() or word[1:].islower())
        pieces = [word] if len(word) <= MAX_TERM_CHARS else []
        if not plain:
            pieces += [word[start:end] for start, end in identifier_parts(word) if end - start <= MAX_TERM_CHARS]
        for piece in pieces:
            term = piece.lower() if piece.isascii() else fold(piece)
            if not term or term in ENGLISH_STOP_WORDS:
                continue
            terms.add(_stemmed(term) if len(term) > 3 and term.isascii() and term.isalpha() else term)
    return frozenset(terms)
