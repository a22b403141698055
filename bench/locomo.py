"""LoCoMo retrieval benchmark: reme-mcp's search beside a plain BM25 baseline.

Every LoCoMo conversation becomes a real ReMe workspace (one
``session/dialog/<sample_id>-s<N>.jsonl`` per session, one AgentScope message per
turn), is indexed by reme-mcp, and every question of categories 1-4 is run
through ``Memory.search``: the very operation the MCP ``search`` tool calls.
A question is a hit at k when a top-k result's lines cover an evidence turn.
Since a wider result covers more turns, every row also says how many lines and
characters (of snippet) a top-5 result returned on average: a gain that came
with many more lines per hit is a wider window, not better ranking.

The data is read where it lives (``../shared/data/locomo/`` by default) and is
never copied into the repository; workspaces live in a temporary folder.

    python bench/locomo.py [--data PATH] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from whoosh.analysis import StandardAnalyzer
from whoosh.fields import STORED, TEXT, Schema
from whoosh.filedb.filestore import RamStorage
from whoosh.query import Or, Term
from whoosh.scoring import BM25F

from reme_mcp import process
from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory
from reme_mcp.safety import boundary

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LIMIT = 10
# Evidence ids as written, including the known slips: "D:11:26", "D30:05", "D8:6; D9:17".
_EVIDENCE_RE = re.compile(r"D:?(\d+):0*(\d+)")

Location = tuple[str, int]  # (workspace path, 1-based line)
Ranked = list[tuple[str, int, int, int]]  # (path, start_line, end_line, characters returned), best first


@dataclass
class Question:
    text: str
    category: int
    evidence: set[Location]


@dataclass
class Conversation:
    sample_id: str
    files: dict[str, list[dict[str, Any]]]  # path -> messages, in file order
    questions: list[Question]
    unmapped: int = 0
    no_evidence: int = 0


@dataclass
class Outcome:
    category: int
    rank: int | None  # 1-based rank of the first result covering evidence, within LIMIT
    all5: bool
    all10: bool
    session5: bool
    lines5: int  # lines the top-5 results cover, in all
    chars5: int  # characters the top-5 results return, in all
    hits5: int  # how many results the top 5 holds
    ms: float  # wall clock
    cpu_ms: float  # this thread's CPU time: steadier than wall clock on a shared machine


@dataclass
class Totals:
    outcomes: list[Outcome] = field(default_factory=list)


def session_time(stamp: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00'; unparseable stamps give ''."""
    try:
        return datetime.strptime(" ".join(stamp.split()), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return ""


def load_conversations(data: list[dict[str, Any]]) -> list[Conversation]:
    """Turn LoCoMo's JSON into dialog files and questions with evidence mapped to file lines."""
    out: list[Conversation] = []
    for sample in data:
        sid, conv = sample["sample_id"], sample["conversation"]
        roles = {conv["speaker_a"]: "user", conv["speaker_b"]: "assistant"}
        files: dict[str, list[dict[str, Any]]] = {}
        where: dict[tuple[int, int], Location] = {}
        sessions = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
        for n in sessions:
            path = f"session/dialog/{sid}-s{n}.jsonl"
            created = session_time(conv.get(f"session_{n}_date_time", ""))
            messages = []
            for line, turn in enumerate(conv[f"session_{n}"], start=1):
                text = turn["text"]
                if turn.get("blip_caption"):
                    text = f"{text} [image: {turn['blip_caption']}]"
                messages.append(
                    {
                        "id": f"{sid}-{turn['dia_id']}",
                        "name": turn["speaker"],
                        "role": roles.get(turn["speaker"], "user"),
                        "content": [{"type": "text", "text": text}],
                        "metadata": {},
                        "created_at": created,
                    }
                )
                if m := _EVIDENCE_RE.fullmatch(turn["dia_id"]):
                    where[(int(m.group(1)), int(m.group(2)))] = (path, line)
            files[path] = messages
        conversation = Conversation(sid, files, [])
        for qa in sample["qa"]:
            category = int(qa.get("category", 0))
            if category not in CATEGORIES:
                continue
            evidence: set[Location] = set()
            for raw in qa.get("evidence") or []:
                ids = _EVIDENCE_RE.findall(str(raw))
                if not ids:
                    conversation.unmapped += 1
                for s, t in ids:
                    if (s_t := (int(s), int(t))) in where:
                        evidence.add(where[s_t])
                    else:
                        conversation.unmapped += 1
            if evidence:
                conversation.questions.append(Question(qa["question"], category, evidence))
            else:
                conversation.no_evidence += 1
        out.append(conversation)
    return out


def write_workspace(root: Path, conversation: Conversation) -> None:
    for path, messages in conversation.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = (json.dumps(m, ensure_ascii=False) for m in messages)
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def baseline_searcher(conversation: Conversation) -> Callable[[str], Ranked]:
    """The plain baseline: one Whoosh document per turn, StandardAnalyzer, BM25F, an OR of the words."""
    analyzer = StandardAnalyzer()
    schema = Schema(path=STORED, line=STORED, content=TEXT(analyzer=analyzer, stored=True))
    ix = RamStorage().create_index(schema)
    writer = ix.writer()
    for path, messages in conversation.files.items():
        for line, message in enumerate(messages, start=1):
            writer.add_document(path=path, line=line, content=message["content"][0]["text"])
    writer.commit()
    searcher = ix.searcher(weighting=BM25F())

    def search(text: str) -> Ranked:
        words = list(dict.fromkeys(t.text for t in analyzer(text)))
        if not words:
            return []
        hits = searcher.search(Or([Term("content", w) for w in words]), limit=LIMIT)
        return [(h["path"], h["line"], h["line"], len(h["content"])) for h in hits]

    return search


def reme_searcher(root: Path, semantic: str = "off") -> Callable[[str], Ranked]:
    """reme-mcp's search; with the semantic stage on, once every chunk is embedded."""
    memory = Memory(load_settings(workspace=str(root), semantic=semantic))
    memory.index.rebuild()
    if memory.index.semantic is not None:
        memory.index.semantic.wait(3600)
        state = memory.index.semantic.state()
        if state.status.startswith("off"):
            raise SystemExit(f"locomo: the semantic stage is {state.status}")

    def search(text: str) -> Ranked:
        result = memory.search(text, limit=LIMIT)
        return [
            (r.path, r.start_line, r.end_line, len(boundary.strip_recalled(r.snippet).strip())) for r in result.results
        ]

    return search


def judge(question: Question, ranked: Ranked, ms: float, cpu_ms: float) -> Outcome:
    def covered(k: int) -> set[Location]:
        return {(p, ln) for p, ln in question.evidence for rp, s, e, _ in ranked[:k] if rp == p and s <= ln <= e}

    rank = next(
        (
            i
            for i, (rp, s, e, _) in enumerate(ranked, 1)
            if any(rp == p and s <= ln <= e for p, ln in question.evidence)
        ),
        None,
    )
    sessions = list(dict.fromkeys(p for p, _, _, _ in ranked))[:5]
    evidence_sessions = {p for p, _ in question.evidence}
    return Outcome(
        category=question.category,
        rank=rank,
        all5=covered(5) == question.evidence,
        all10=covered(10) == question.evidence,
        session5=any(p in evidence_sessions for p in sessions),
        lines5=sum(e - s + 1 for _, s, e, _ in ranked[:5]),
        chars5=sum(c for _, _, _, c in ranked[:5]),
        hits5=len(ranked[:5]),
        ms=ms,
        cpu_ms=cpu_ms,
    )


def run(search: Callable[[str], Ranked], questions: Iterable[Question], totals: Totals) -> None:
    for question in questions:
        started, cpu = time.perf_counter(), time.thread_time()
        ranked = search(question.text)
        ms, cpu_ms = (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000
        totals.outcomes.append(judge(question, ranked, ms, cpu_ms))


def summarise(outcomes: list[Outcome]) -> dict[str, float]:
    n = len(outcomes)
    if not n:
        return {"n": 0}
    times = sorted(o.ms for o in outcomes)
    cpu = sorted(o.cpu_ms for o in outcomes)

    def share(flags: Iterable[bool]) -> float:
        return round(100 * sum(flags) / n, 1)

    return {
        "n": n,
        "any@5": share(o.rank is not None and o.rank <= 5 for o in outcomes),
        "all@5": share(o.all5 for o in outcomes),
        "any@10": share(o.rank is not None for o in outcomes),
        "all@10": share(o.all10 for o in outcomes),
        "mrr": round(sum(1 / o.rank for o in outcomes if o.rank) / n, 3),
        "session@5": share(o.session5 for o in outcomes),
        "lines/hit": round(sum(o.lines5 for o in outcomes) / max(1, sum(o.hits5 for o in outcomes)), 2),
        "chars/hit": round(sum(o.chars5 for o in outcomes) / max(1, sum(o.hits5 for o in outcomes))),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[min(n - 1, int(0.95 * n))], 2),
        "p95_cpu_ms": round(cpu[min(n - 1, int(0.95 * n))], 2),
    }


def report(methods: dict[str, Totals]) -> dict[str, dict[str, dict[str, float]]]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    for method, totals in methods.items():
        table[method] = {"all": summarise(totals.outcomes)}
        for category, label in CATEGORIES.items():
            table[method][f"{category} {label}"] = summarise([o for o in totals.outcomes if o.category == category])
    return table


def render(table: dict[str, dict[str, dict[str, float]]]) -> str:
    columns = ["n", "any@5", "all@5", "any@10", "all@10", "mrr", "session@5", "lines/hit", "chars/hit"]
    columns += ["p50_ms", "p95_ms", "p95_cpu_ms"]
    head = f"{'scope':<15} {'method':<9}" + "".join(f"{c:>11}" for c in columns)
    rows = [head, "-" * len(head)]
    scopes = next(iter(table.values())).keys()
    for scope in scopes:
        for method, by_scope in table.items():
            cells = "".join(f"{by_scope[scope].get(c, 0):>11}" for c in columns)
            rows.append(f"{scope:<15} {method:<9}{cells}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write the table as JSON to this file")
    parser.add_argument(
        "--no-semantic", action="store_true", help="leave out the semantic stage (needs reme-mcp[semantic])"
    )
    args = parser.parse_args(argv)
    process.one_thread_libraries()  # as the `reme-mcp` command does, before any thread starts
    if not args.data.is_file():
        print(
            f"locomo: no data at {args.data}: pass --data with the path to LoCoMo's JSON "
            "(locomo10.json or the shared locomo-dev.json)",
            file=sys.stderr,
        )
        return 2
    conversations = load_conversations(json.loads(args.data.read_text(encoding="utf-8")))
    methods = {"reme-mcp": Totals(), "baseline": Totals()}
    if not args.no_semantic:
        methods["semantic"] = Totals()  # the same search, the semantic stage on and caught up
    with tempfile.TemporaryDirectory(prefix="reme-locomo-") as tmp:
        os.environ.setdefault("REME_INDEX_DIR", str(Path(tmp) / "index-home"))  # not into ~/.cache
        for conversation in conversations:
            root = Path(tmp) / conversation.sample_id
            write_workspace(root, conversation)
            run(reme_searcher(root), conversation.questions, methods["reme-mcp"])
            if "semantic" in methods:
                run(reme_searcher(root, "on"), conversation.questions, methods["semantic"])
            run(baseline_searcher(conversation), conversation.questions, methods["baseline"])
    table = report(methods)
    turns = sum(len(m) for c in conversations for m in c.files.values())
    sessions = sum(len(c.files) for c in conversations)
    unmapped = sum(c.unmapped for c in conversations)
    no_evidence = sum(c.no_evidence for c in conversations)
    print(
        f"LoCoMo {args.data.name}: {len(conversations)} conversations, {sessions} sessions, {turns} turns, "
        f"{sum(len(c.questions) for c in conversations)} questions (categories 1-4) with evidence"
    )
    print(
        f"evidence ids not mapped to a turn: {unmapped}; questions left out for want of any mapped evidence: {no_evidence}"
    )
    print(render(table))
    if args.json:
        payload = {
            "data": str(args.data),
            "conversations": len(conversations),
            "sessions": sessions,
            "turns": turns,
            "unmapped_evidence": unmapped,
            "questions_without_evidence": no_evidence,
            "table": table,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
