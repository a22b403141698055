"""Paraphrase benchmark: questions asked in other words (and other languages) than the note holds.

A ReMe workspace is generated from bench/paraphrase_data.py with a seed: facts of the form
(who, event, what), each written as one note through ``Memory.remember`` in English,
Chinese, or mixed text (a note with a tail in the other script). Each query asks about one
note in other words: a third of them in the other language. The benchmark checks every
pair with the project's own analyzer: a query that shares a content token with its note
(function words aside, bench/paraphrase_data.py) is dropped and counted.

Four rankings of the same queries, side by side: lexical (the stage off), semantic (the
model's nearest chunks alone), sem+text (the same with the question also read as stored
text, as a search whose words found little reads it: centring.joined) and fused (what
`search` returns with the stage on).

`--per-section K` writes the notes as a person keeps them instead: K to a section of a
Markdown page, one page each (a chunk of up to 1,500 characters), so most facts lie past
the start of their chunk that the model reads in one window; a query's target is then the
page. `--first-window-only` reads each chunk's start alone, as before long chunks were read
as several windows (the ablation).

    python bench/paraphrase.py [--seed 7] [--notes 200] [--per-section K [--first-window-only]] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paraphrase_data import EN_FUNCTION, EN_TAILS, EVENTS, WHO, ZH_FUNCTION, ZH_TAILS

from reme_mcp import process
from reme_mcp.config import load_settings
from reme_mcp.index.analysis import memory_analyzer
from reme_mcp.index.semantic.models import windows
from reme_mcp.ops.memory import Memory

LIMIT = 5


@dataclass(frozen=True)
class Fact:
    who: str
    event: str
    what: str


@dataclass
class Case:
    query: str
    path: str
    cross: bool  # the query's language is not the note's
    lang: str  # the query's language


def _fill(template: str, who: str, what: str, zh: bool) -> str:
    text = template.format(w=who, o=what)
    if not zh:
        text = text[0].upper() + text[1:]
    return text


def note_text(fact: Fact, lang: str, rng: random.Random) -> str:
    ev, who, what = EVENTS[fact.event], WHO[fact.who], EVENTS[fact.event].objects[fact.what]
    if lang == "en":
        return _fill(ev.en_note, who.en_note, what.en_note, False)
    if lang == "zh":
        return _fill(ev.zh_note, who.zh_note, what.zh_note, True)
    # mixed: one language's sentence with the other's tail
    if rng.random() < 0.5:
        return f"{_fill(ev.en_note, who.en_note, what.en_note, False)} {rng.choice(ZH_TAILS)}"
    return f"{_fill(ev.zh_note, who.zh_note, what.zh_note, True)} {rng.choice(EN_TAILS)}"


def query_text(fact: Fact, lang: str) -> str:
    ev, who, what = EVENTS[fact.event], WHO[fact.who], EVENTS[fact.event].objects[fact.what]
    if lang == "en":
        return _fill(ev.en_query, who.en_query, what.en_query, False)
    return _fill(ev.zh_query, who.zh_query, what.zh_query, True)


def _function_tokens() -> frozenset[str]:
    analyzer = memory_analyzer()
    words = " ".join(EN_FUNCTION) + " " + " ".join(ZH_FUNCTION)
    return frozenset(t.text for t in analyzer(words))


def content_tokens(text: str, function: frozenset[str]) -> set[str]:
    """The analyzer's tokens of `text` (index side, so nothing is dropped), less the function words."""
    return {t.text for t in memory_analyzer()(text)} - function


def note_language(text: str) -> str:
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return "zh" if cjk * 2 > len(text.replace(" ", "")) * 0.5 else "en"


def generate(seed: int, notes: int) -> tuple[list[tuple[str, str]], list[tuple[Fact, str]], int]:
    """(note text, date) for every note, the (fact, note language) of each, and the queries' plan."""
    rng = random.Random(seed)
    facts = [Fact(w, e, o) for e, ev in EVENTS.items() for w in WHO for o in ev.objects]
    rng.shuffle(facts)
    chosen = facts[:notes]
    written: list[tuple[str, str]] = []
    plan: list[tuple[Fact, str]] = []
    for i, fact in enumerate(chosen):
        lang = rng.choice(("en", "zh", "mixed"))
        text = note_text(fact, lang, rng)
        written.append((text, f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"))
        plan.append((fact, lang))
    return written, plan, len(facts)


def cases_for(
    plan: list[tuple[Fact, str]], texts: list[str], paths: list[str], queries: int, seed: int
) -> tuple[list[Case], int]:
    """One query per chosen note: a third across languages; pairs sharing a content token are dropped."""
    rng = random.Random(seed + 1)
    function = _function_tokens()
    order = list(range(len(plan)))
    rng.shuffle(order)
    cases: list[Case] = []
    dropped = 0
    for n, i in enumerate(order):
        if len(cases) >= queries:
            break
        fact, _ = plan[i]
        base = note_language(texts[i])
        cross = n % 3 == 0
        lang = ("zh" if base == "en" else "en") if cross else base
        query = query_text(fact, lang)
        if content_tokens(query, function) & content_tokens(texts[i], function):
            dropped += 1
            continue
        cases.append(Case(query, paths[i], cross, lang))
    return cases, dropped


def write_sections(workspace: Path, texts: list[str], per_section: int) -> list[str]:
    """The notes as a person's pages, `per_section` to a page's one section; each note's page."""
    folder = workspace / "memory" / "topics"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for start in range(0, len(texts), per_section):
        page = folder / f"page-{start // per_section:03d}.md"
        body = "\n\n".join(texts[start : start + per_section])
        page.write_text(f"# Notes {start // per_section}\n\n{body}\n", encoding="utf-8")
        paths += [page.relative_to(workspace).as_posix()] * len(texts[start : start + per_section])
    return paths


def rank_of(paths: list[str], target: str) -> int | None:
    return next((r for r, p in enumerate(paths, start=1) if p == target), None)


def score(ranks: list[int | None]) -> tuple[float, float]:
    """recall@5 and MRR (within 10)."""
    if not ranks:
        return 0.0, 0.0
    recall = sum(1 for r in ranks if r is not None and r <= LIMIT) / len(ranks)
    mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
    return recall, mrr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--notes", type=int, default=200, help="notes written (every one a possible distractor)")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument(
        "--per-section", type=int, default=1, help="notes a page holds, in one section (1: a note each)"
    )
    parser.add_argument("--first-window-only", action="store_true", help="the model reads a chunk's start alone")
    parser.add_argument("--json", type=Path, help="also write the table as JSON to this file")
    args = parser.parse_args(argv)
    process.one_thread_libraries()  # as the `reme-mcp` command does, before any thread starts
    if args.first_window_only:
        windows.MAX_WINDOWS = 1

    tmp = Path(tempfile.mkdtemp(prefix="reme-paraphrase-"))
    os.environ["REME_INDEX_DIR"] = str(tmp / "index")
    settings = load_settings(str(tmp / "workspace"))
    writer = Memory(replace(settings, semantic="off"))
    written, plan, possible = generate(args.seed, args.notes)
    if args.per_section > 1:
        paths = write_sections(tmp / "workspace", [text for text, _ in written], args.per_section)
    else:
        paths = [writer.remember(text, date=day).path for text, day in written]
    writer.finish()
    cases, dropped = cases_for(plan, [t for t, _ in written], paths, args.queries, args.seed)

    lexical = Memory(replace(settings, semantic="off"))
    fused = Memory(replace(settings, semantic="on"))
    hook = fused.index.semantic
    assert hook is not None
    fused.search("warm up")
    started = time.monotonic()
    if not hook.wait(1800):
        print("embedding did not finish in 30 minutes", file=sys.stderr)
        return 1
    embed_s = time.monotonic() - started
    state = hook.state()
    if state.status.startswith("off"):
        print(f"the semantic stage is {state.status}", file=sys.stderr)
        return 1

    def semantic_paths(query: str, as_text_too: bool = False) -> list[str]:
        seen: list[str] = []
        for near in hook.stage.ask(query, 30, (), as_text_too=as_text_too)[0]:
            if near.key.path not in seen:
                seen.append(near.key.path)
        return seen[:10]

    rankers: dict[str, Callable[[str], list[str]]] = {
        "lexical": lambda q: [h.path for h in lexical.search(q, limit=10).results],
        "semantic": semantic_paths,
        "sem+text": lambda q: semantic_paths(q, as_text_too=True),
        "fused": lambda q: [h.path for h in fused.search(q, limit=10).results],
    }
    groups = {
        "all": cases,
        "same language": [c for c in cases if not c.cross],
        "cross-language": [c for c in cases if c.cross],
        "query in English": [c for c in cases if c.lang == "en"],
        "query in Chinese": [c for c in cases if c.lang == "zh"],
    }
    ranks = {name: [rank_of(fn(c.query), c.path) for c in cases] for name, fn in rankers.items()}
    by_case = {id(c): i for i, c in enumerate(cases)}

    print(
        f"paraphrase benchmark: seed {args.seed}, {len(paths)} notes of {possible} possible facts, "
        f"{len(cases)} queries ({dropped} dropped for sharing a content token), "
        f"{args.per_section} a section{', first window only' if args.first_window_only else ''}, "
        f"model {state.model}, {state.embedded} chunks embedded in {embed_s:.1f} s"
    )
    print(f"{'queries':<18}{'n':>5}" + "".join(f"{n + ' R@5':>15}{'MRR':>7}" for n in rankers))
    table: dict[str, dict[str, object]] = {}
    for group, members in groups.items():
        row = f"{group:<18}{len(members):>5}"
        table[group] = {"n": len(members)}
        for name in rankers:
            rs = [ranks[name][by_case[id(c)]] for c in members]
            recall, mrr = score(rs)
            row += f"{recall:>15.3f}{mrr:>7.3f}"
            table[group][name] = {"recall@5": round(recall, 4), "mrr": round(mrr, 4)}
        print(row)
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "table": table}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
