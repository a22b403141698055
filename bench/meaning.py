"""Recall by words and by meaning on a labelled workspace: lexical, the model alone, fused.

Reads a workspace and its labelled queries in the layout of ../shared/realws-dev
(`workspace/` and `queries.json`: `query`, `kind`, `relevant` paths, `args`), copies the
workspace to a temporary folder, embeds it fully with the model of `REME_SEMANTIC_MODEL`
(or `--model`), and ranks every query three ways, each by file (the first relevant file in
the top 5): the lexical stage alone (the stage off), the model alone (its nearest chunks,
day indexes left out, as a file's best chunk; "model+text" with the question also read as
stored text, as a search whose words found little reads it), and fused (what `search`
returns). Prints
each miss with where each stage put the relevant file, then recall@5 and MRR per kind.

    python bench/meaning.py ../shared/realws-dev [--model NAME] [--verbose] [--json PATH]

A measuring tool: it exits 0 whatever it finds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from reme_mcp import process
from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory

LIMIT = 5
GROUPS: dict[str, Callable[[str], bool]] = {
    "words": lambda kind: not kind.startswith("para"),
    "meaning": lambda kind: kind.startswith("para"),
    "across-language": lambda kind: "->" in kind,
    "all": lambda kind: True,
}


def rank_of(paths: list[str], relevant: list[str]) -> int | None:
    for i, path in enumerate(paths[:LIMIT], 1):
        if path in relevant:
            return i
    return None


def by_file(paths: list[str]) -> list[str]:
    seen: list[str] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return seen


def is_day_index(path: str) -> bool:
    parts = path.split("/")
    return len(parts) == 2 and parts[0] == "daily" and parts[1].endswith(".md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("data", type=Path, help="a folder with workspace/ and queries.json")
    parser.add_argument("--model", help="the model (else REME_SEMANTIC_MODEL, else the default)")
    parser.add_argument("--verbose", action="store_true", help="print every query, not only the misses")
    parser.add_argument("--json", type=Path, help="also write the summary as JSON to this file")
    args = parser.parse_args(argv)
    process.one_thread_libraries()
    if args.model:
        os.environ["REME_SEMANTIC_MODEL"] = args.model
    queries = json.loads((args.data / "queries.json").read_text(encoding="utf-8"))

    tmp = Path(tempfile.mkdtemp(prefix="reme-meaning-"))
    shutil.copytree(args.data / "workspace", tmp / "workspace")
    os.environ["REME_INDEX_DIR"] = str(tmp / "index")
    settings = load_settings(str(tmp / "workspace"))
    lexical = Memory(replace(settings, semantic="off"))
    fused = Memory(replace(settings, semantic="on"))
    hook = fused.index.semantic
    if hook is None:
        print("the semantic extra is not installed", file=sys.stderr)
        return 0
    fused.search("warm up")
    started = time.monotonic()
    if not hook.wait(1800):
        print("embedding did not finish in 30 minutes", file=sys.stderr)
        return 0
    state = hook.state()
    print(f"model {state.model}: {state.embedded} chunks embedded in {time.monotonic() - started:.1f} s")

    def model_alone(query: str, both_readings: bool = False) -> list[str]:
        near = hook.stage.ask(query, 60, (), as_text_too=both_readings)[0]
        return by_file([n.key.path for n in near if not is_day_index(n.key.path)])

    def search(memory: Memory) -> Callable[[str], list[str]]:
        return lambda q: [h.path for h in memory.search(q, limit=LIMIT).results]  # as run.py asks

    rankers = {
        "lexical": search(lexical),
        "model": model_alone,
        "model+text": lambda q: model_alone(q, both_readings=True),
        "fused": search(fused),
    }
    rows = []
    for q in queries:
        ranks = {name: rank_of(fn(q["query"]), q["relevant"]) for name, fn in rankers.items()}
        rows.append((q, ranks))
        lost = ranks["fused"] is None or any(r is not None and r < ranks["fused"] for r in ranks.values())
        if args.verbose or lost:
            shown = "  ".join(f"{n} {r if r else '-'}" for n, r in ranks.items())
            print(f"{q['kind']:<12} {shown}   {q['query'][:60]!r}")
    summary: dict[str, dict[str, object]] = {}
    print(f"\n{'queries':<16}{'n':>4}" + "".join(f"{n + ' R@5':>14}{'MRR':>7}" for n in rankers))
    for group, member in GROUPS.items():
        chosen = [ranks for q, ranks in rows if member(q["kind"])]
        line = f"{group:<16}{len(chosen):>4}"
        summary[group] = {"n": len(chosen)}
        for name in rankers:
            found = [r[name] for r in chosen]
            recall = sum(1 for r in found if r) / max(len(found), 1)
            mrr = sum(1 / r for r in found if r) / max(len(found), 1)
            line += f"{recall:>14.3f}{mrr:>7.3f}"
            summary[group][name] = {"recall@5": round(recall, 4), "mrr": round(mrr, 4)}
        print(line)
    if args.json:
        args.json.write_text(json.dumps({"model": state.model, "summary": summary}, indent=2), encoding="utf-8")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
