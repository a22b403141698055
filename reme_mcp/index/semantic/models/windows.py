"""How stored text longer than a model reads at once is read: whole, line by line, in windows.

Both runtimes read at most MAX_EMBED_TOKENS tokens a text (runtime.py says why). A chunk
longer than that, a section of a person's page, is read as several windows and scores as
its best one (index/semantic/vectors.py). Line by line, so a page's list of facts keeps each fact's own
vector: a line under LINE_TOKENS (a heading) joins the next, and lines are joined further
only when a chunk would otherwise have more than MAX_WINDOWS. A line longer than a window
is read in windows that share WINDOW_OVERLAP tokens, so a sentence cut at one's edge is
whole in the next. On pages of 16 facts to a section, a question in other words found its
page in the top 5 for 11% of the questions when each chunk's start alone was read, 23%
in windows of 96 tokens, 65% line by line (bench/paraphrase.py --per-section 16, seed 7;
docs/semantic.md).

Token ids here are a text's own, without the model's marks or the "passage: " prefix: each
runtime adds its own.
"""

from __future__ import annotations

from collections.abc import Callable

WINDOW_OVERLAP = 16
MAX_WINDOWS = 32
LINE_TOKENS = 8

Tokens = list[int]
Read = list[tuple[Tokens, str]]  # a text's windows: the ids the model reads, the lines each is of


def plan(
    texts: list[str],
    whole: list[Tokens],
    limit: int,
    encode: Callable[[list[str]], list[Tokens]],
    wrap: Callable[[Tokens], Tokens],
    width: int,
) -> list[Read]:
    """Each text's windows, for a runtime that reads `limit` tokens at once: a text whose ids as
    the model reads them (`whole`) are no more, as they are; a longer one line by line, its
    lines' own ids (`encode`) in windows of `width`, each `wrap`ped in the model's prefix and marks."""
    out: list[Read] = [[(ids, text)] for ids, text in zip(whole, texts, strict=True)]
    long = [i for i, ids in enumerate(whole) if len(ids) > limit]
    lines = [lines_of(texts[i]) for i in long]
    encoded = iter(encode([line for each in lines for line in each]))
    for i, each in zip(long, lines, strict=True):
        out[i] = [(wrap(tokens), said) for tokens, said in windows([(line, next(encoded)) for line in each], width)]
    return out


def flat(planned: list[Read]) -> tuple[list[Tokens], list[str], list[int]]:
    """Every window's ids and lines in order, and how many windows each text has."""
    every = [w for each in planned for w in each]
    return [ids for ids, _ in every], [said for _, said in every], [len(each) for each in planned]


def lines_of(text: str) -> list[str]:
    """A text's lines that hold anything."""
    return [line for line in text.split("\n") if line.strip()]


def windows(lines: list[tuple[str, Tokens]], width: int) -> list[tuple[Tokens, str]]:
    """The windows of a text from its lines (text, tokens): each window's tokens, at most
    `width`, and the lines it is of (for its language); at most MAX_WINDOWS."""
    units = _units(lines, 0)
    if len(units) > MAX_WINDOWS:  # more lines than windows: as many lines as fit a window share one
        units = _units(lines, width)
    out: list[tuple[Tokens, str]] = []
    for tokens, text in units:
        starts = range(0, max(1, len(tokens) - WINDOW_OVERLAP), width - WINDOW_OVERLAP)
        out += [(tokens[s : s + width], text) for s in starts]
    return out[:MAX_WINDOWS]


def offsets(text: str, said: list[str]) -> list[int]:
    """Where in `text` each of its windows (`said`: the lines each is of, in order) starts: a
    search by meaning shows a long chunk from the window that matched (index/snippets.py)."""
    at, out = 0, []
    for window in said:
        found = text.find(window.split("\n", 1)[0], at)
        at = found if found >= 0 else at
        out.append(at)
    return out


def _units(lines: list[tuple[str, Tokens]], fill: int) -> list[tuple[Tokens, str]]:
    """Lines grouped into what a window reads: a line joins the one before while that has under
    LINE_TOKENS, or (with `fill`) while both fit in `fill` tokens."""
    units: list[tuple[Tokens, str]] = []
    for line, tokens in lines:
        if units and (len(units[-1][0]) < LINE_TOKENS or len(units[-1][0]) + len(tokens) <= fill):
            held, text = units[-1]
            units[-1] = (held + tokens, f"{text}\n{line}")
        else:
            units.append((tokens, line))
    return units
