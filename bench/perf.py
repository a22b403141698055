"""How fast is reme-mcp? Start-up, search, sync, indexing, remember and memory, beside SQLite FTS5.

Generates deterministic ReMe workspaces (daily notes and day indexes over many
dates, digests with wikilinks, long AgentScope dialogs; English, Chinese and
mixed) at about 1k, 10k and 100k chunks, and measures, in one run:

- cold start: spawn ``python -m reme_mcp --workspace W`` over stdio with the SDK's
  client until ``initialize`` and ``tools/list`` are answered (index up to date),
  then the first ``search``; plus the server's peak RSS;
- search: 300 queries through ``Memory.search`` (what the MCP tool calls), and the
  same queries against an SQLite FTS5 index of the same chunks (the baseline);
- sync: the extra cost of the first search after touching 1, 10 and 100 files (paired
  with a search that found nothing changed, in wall and CPU time);
- full build: chunks/s of ``MemoryIndex.rebuild`` against a plain single-writer
  Whoosh build of the same chunks;
- remember: latency from call to answer.

Timings are medians and p95 over repeated trials on whatever machine runs this:
compare the columns of one run, not numbers across machines. Nothing is written
into the repository; everything lives in a temporary folder.

    python bench/perf.py                 # all three sizes
    python bench/perf.py --quick         # 1k only, a CI smoke test (never a timed assertion)
    python bench/perf.py --sizes 10k --json /tmp/perf.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
SEED = 20261128

# ---- the workspace generator ------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.split()


COMMON_EN = _words(
    "user project service deploy team meeting review plan code test release data build issue "
    "change update config server client api database query cache error log backend frontend "
    "design decision prefer use need want work week today tomorrow note idea bug fix feature "
    "performance memory search index file folder version branch merge commit schedule customer "
    "report budget goal task owner doc model agent tool prompt answer question result problem"
)
FILLER_EN = _words("the a of to and in is for on with that it as we this be at by from")
COMMON_ZH = _words(
    "用户 项目 服务 部署 团队 会议 评审 计划 代码 测试 发布 数据 构建 问题 修改 更新 配置 服务器 "
    "客户端 接口 数据库 查询 缓存 错误 日志 后端 前端 设计 决定 喜欢 使用 需要 工作 今天 明天 "
    "笔记 想法 修复 功能 性能 内存 搜索 索引 文件 版本 分支 合并 提交 安排 客户 报告 预算 目标 "
    "任务 文档 模型 工具 回答 结果"
)
FILLER_ZH = list("的了是在我们有和也就都要把这那")
ZH_CHARS = (
    "春夏秋冬东南西北金木水火土山川河海风雨雷电花草树林云星月日天地人心手足龙虎鹤松竹梅兰菊"
    "红橙黄绿青蓝紫黑白灰甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥琴棋书画诗酒茶香"
)
SYLLABLES = _words("ka zu mor tel vin dra pex sol qui bran lo fen gar tis ul rho nek pal ver om jas tu wex")
SPEAKERS = ("user", "assistant")


class Vocabulary:
    """Words with a Zipf-like frequency: a few very common, a long tail of selective ones."""

    def __init__(self, rng: random.Random) -> None:
        rare_en = sorted({"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))) for _ in range(6000)})
        rare_zh = sorted({"".join(rng.choice(ZH_CHARS) for _ in range(rng.randint(2, 3))) for _ in range(4000)})
        rng.shuffle(rare_en)
        rng.shuffle(rare_zh)
        self.en = COMMON_EN + rare_en
        self.zh = COMMON_ZH + rare_zh
        self.en_weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.en))]
        self.zh_weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.zh))]

    def words(self, rng: random.Random, lang: str, n: int) -> list[str]:
        if lang == "zh":
            return rng.choices(self.zh, self.zh_weights, k=n)
        return rng.choices(self.en, self.en_weights, k=n)

    def sentence(self, rng: random.Random, lang: str) -> str:
        if lang == "mixed":
            lang = rng.choice(("en", "zh"))
            extra = f" {self.words(rng, 'en' if lang == 'zh' else 'zh', 1)[0]} "
        else:
            extra = ""
        if lang == "zh":
            parts = [w + (rng.choice(FILLER_ZH) if rng.random() < 0.4 else "") for w in self.words(rng, "zh", 7)]
            return "".join(parts[:3]) + extra + "".join(parts[3:]) + "。"
        words = [w if rng.random() < 0.6 else f"{rng.choice(FILLER_EN)} {w}" for w in self.words(rng, "en", 12)]
        text = " ".join(words[:6]) + extra + " ".join(words[6:])
        return text[0].upper() + text[1:] + "."

    def paragraph(self, rng: random.Random, lang: str, sentences: int) -> str:
        return " ".join(self.sentence(rng, lang) for _ in range(sentences))


def _lang(rng: random.Random) -> str:
    return rng.choices(("en", "zh", "mixed"), (5, 3, 2))[0]


def generate_workspace(root: Path, target_chunks: int, seed: int = SEED) -> dict[str, int]:
    """A ReMe workspace of about `target_chunks` chunks; the same seed always gives the same bytes."""
    rng = random.Random(seed)
    vocab = Vocabulary(rng)
    # One day holds about 38 chunks: 3 notes of 2 sections, a day index, half a digest of
    # 3 sections and a dialog of about 30 messages.
    days = max(3, round(target_chunks / 38))
    first = date(2019, 1, 1)
    files = 0
    digests: list[str] = []
    for d in range(days):
        day = (first + timedelta(days=d)).isoformat()
        folder = root / "daily" / day
        folder.mkdir(parents=True, exist_ok=True)
        session = f"s{seed % 1000:03d}{d:05d}"
        index_lines = []
        notes = []
        for n in range(3):
            lang = _lang(rng)
            name = f"note-{n}-{vocab.words(rng, 'en', 1)[0]}"
            description = vocab.sentence(rng, lang)[:100]
            body = (
                f"{vocab.paragraph(rng, lang, 3)}\n\n## Details\n\n{vocab.paragraph(rng, lang, 4)}\n\n"
                f"See [[session/dialog/{session}.jsonl]].\n"
            )
            meta = (
                f"---\nname: {name}\ndescription: {json.dumps(description, ensure_ascii=False)}\n"
                f"session_id: {session}\nsource_conversation: '[[session/dialog/{session}.jsonl]]'\n---\n"
            )
            (folder / f"{name}.md").write_text(meta + body, encoding="utf-8")
            notes.append(f"daily/{day}/{name}.md")
            index_lines.append(f"- [[daily/{day}/{name}.md]] name: {name} description: {description}")
            files += 1
        block = "\n".join(["<!-- notes:auto -->", *index_lines, "<!-- /notes:auto -->"])
        (root / "daily" / f"{day}.md").write_text(
            f"---\nname: '{day}'\ndescription: 3 note(s) today.\n---\n{vocab.sentence(rng, _lang(rng))}\n\n{block}\n",
            encoding="utf-8",
        )
        files += 1
        if d % 2 == 0:
            lang = _lang(rng)
            kind = rng.choice(("personal", "procedure", "wiki"))
            slug = f"{kind}-{d:05d}-{vocab.words(rng, 'en', 1)[0]}"
            related = rng.sample(digests, min(2, len(digests)))
            sections = "\n\n".join(
                f"## {vocab.words(rng, lang, 1)[0]}\n\n{vocab.paragraph(rng, lang, 4)}" for _ in range(2)
            )
            sources = "\n".join(f"- [[{p}]]" for p in [*notes[:2], *related])
            (root / "digest" / kind).mkdir(parents=True, exist_ok=True)
            (root / "digest" / kind / f"{slug}.md").write_text(
                f"---\nname: {slug}\ndescription: {vocab.sentence(rng, 'en')[:80]}\n---\n"
                f"{vocab.paragraph(rng, lang, 2)}\n\n{sections}\n\n## Sources\n\n{sources}\n",
                encoding="utf-8",
            )
            digests.append(f"digest/{kind}/{slug}.md")
            files += 1
        lines = []
        lang = _lang(rng)
        for m in range(rng.randint(20, 40)):
            role = SPEAKERS[m % 2]
            message = {
                "id": f"msg-{m}",
                "name": role,
                "role": role,
                "content": [{"type": "text", "text": vocab.paragraph(rng, lang, rng.randint(1, 3))}],
                "metadata": {},
                "created_at": f"{day}T{9 + m // 6:02d}:{(m * 7) % 60:02d}:00+08:00",
            }
            lines.append(json.dumps(message, ensure_ascii=False))
        (root / "session" / "dialog").mkdir(parents=True, exist_ok=True)
        (root / "session" / "dialog" / f"{session}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        files += 1
    return {"days": days, "files": files}


def make_queries(seed: int = SEED, n: int = 300) -> list[str]:
    """Selective words, very common words and multi-word questions, English and Chinese."""
    rng = random.Random(seed + 1)
    vocab = Vocabulary(random.Random(seed))  # the same vocabulary the generator used
    queries: list[str] = []
    while len(queries) < n:
        kind = len(queries) % 6
        if kind == 0:  # a selective English word (mid-tail)
            queries.append(vocab.en[rng.randint(200, 3000)])
        elif kind == 1:  # a selective Chinese word
            queries.append(vocab.zh[rng.randint(150, 2500)])
        elif kind == 2:  # one very common English word
            queries.append(rng.choice(COMMON_EN[:20]))
        elif kind == 3:  # very common Chinese words (two characters)
            queries.append(rng.choice(COMMON_ZH[:20]))
        elif kind == 4:  # a question mixing common and selective words
            words = [*rng.sample(COMMON_EN[:30], 3), vocab.en[rng.randint(100, 2000)]]
            queries.append("what did we decide about " + " ".join(words))
        else:  # mixed Chinese and English
            queries.append(f"{rng.choice(COMMON_ZH[:30])} {vocab.en[rng.randint(100, 2000)]} {rng.choice(COMMON_ZH)}")
    return queries


# ---- measuring --------------------------------------------------------------------------------


def stats(samples: list[float]) -> dict[str, float]:
    """Median and p95 in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {"p50_ms": statistics.median(ordered) * 1000, "p95_ms": p95 * 1000, "n": len(ordered)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _timed_search(memory: Any) -> tuple[float, float]:
    """Wall and CPU seconds of one search (the sync it starts included)."""
    wall, cpu = time.perf_counter(), time.process_time()
    memory.search("deploy")
    return time.perf_counter() - wall, time.process_time() - cpu


def all_chunks(ws_root: Path) -> Iterator[dict[str, Any]]:
    """The index documents of every file, as reme-mcp produces them."""
    from reme_mcp.index.schema import file_documents
    from reme_mcp.storage.workspace import Workspace

    ws = Workspace(ws_root)
    for entry in ws.walk():
        yield from file_documents(ws, entry.path)


def plain_whoosh_build(ws_root: Path, target: Path) -> int:
    """The baseline: the same schema and documents through one plain `ix.writer()`, in one process."""
    from whoosh import index as whoosh_index

    from reme_mcp.index.schema import build_schema

    schema = build_schema()
    target.mkdir(parents=True)
    ix = whoosh_index.create_in(str(target), schema)
    writer = ix.writer()
    chunks = 0
    for doc in all_chunks(ws_root):
        writer.add_document(**doc)
        chunks += doc["kind"] != "__file__"
    writer.commit()
    ix.close()
    return chunks


def fts5_build(ws_root: Path, db: Path) -> sqlite3.Connection:
    """The same chunks in SQLite FTS5 with the trigram tokenizer (the built-in one that finds CJK text)."""
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE VIRTUAL TABLE chunks USING fts5(path UNINDEXED, name, description, content, tokenize='trigram')"
    )
    rows = (
        (d["path"], d.get("name", ""), d.get("description", ""), d["content"])
        for d in all_chunks(ws_root)
        if d["kind"] != "__file__"
    )
    conn.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    return conn


def fts5_query(text: str) -> str:
    """A query as peers build it: the words, each quoted, OR-ed (quoting makes any input safe)."""
    words = [w.replace('"', '""') for w in text.split() if w.lower() not in ("what", "did", "we", "about")]
    return " OR ".join(f'"{w}"' for w in words) or '""'


def fts5_search(conn: sqlite3.Connection, text: str, limit: int = 5) -> list[Any]:
    sql = "SELECT path, bm25(chunks) FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?"
    return conn.execute(sql, (fts5_query(text), limit)).fetchall()


def child_pids() -> list[int]:
    """Our child processes that run reme_mcp (the server the SDK client spawned)."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and b"reme_mcp" in cmdline:
            found.append(int(entry))
    return found


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


async def cold_start_once(ws_root: Path, query: str, queries: list[str]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "reme_mcp", "--workspace", str(ws_root)],
        # The SDK passes only a safe subset of the environment: keep the server on the bench's
        # code and on the index the bench built (REME_INDEX_DIR).
        env={k: os.environ[k] for k in ("PYTHONPATH", "REME_INDEX_DIR") if os.environ.get(k)} or None,
    )
    start = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        ready = time.perf_counter() - start
        t0 = time.perf_counter()
        result = await client.call_tool("search", {"query": query})
        first_search = time.perf_counter() - t0
        if result.is_error:
            raise RuntimeError(f"search failed: {result.content}")
        for q in queries:  # exercise the index so the peak RSS means something
            await client.call_tool("search", {"query": q})
        pids = child_pids()
        rss = max((peak_rss_mb(p) or 0.0 for p in pids), default=None)
    return {"ready": ready, "first_search": first_search, "rss_mb": rss}


def measure_size(label: str, target: int, base: Path, quick: bool, build: bool = True) -> dict[str, Any]:
    from reme_mcp.config import load_settings
    from reme_mcp.index import MemoryIndex
    from reme_mcp.ops.memory import Memory

    out: dict[str, Any] = {"size": label}
    ws_root = base / f"ws-{label}"
    marker = ws_root / ".generated.json"  # a dot-file: the walk skips it
    if marker.exists():  # --workdir: reused (it keeps what earlier runs appended and remembered)
        shape = json.loads(marker.read_text(encoding="utf-8"))
        print(f"[{label}] reusing the workspace in {ws_root}", file=sys.stderr)
    else:
        shutil.rmtree(ws_root, ignore_errors=True)
        seconds, shape = timed(lambda: generate_workspace(ws_root, target))
        marker.write_text(json.dumps(shape), encoding="utf-8")
        print(f"[{label}] generated {shape['files']} files in {seconds:.1f} s", file=sys.stderr)
    out.update(shape)
    if not build:
        return _measure_built(label, ws_root, base, quick, out, None)

    # Full build: the plain single-writer baseline, then reme-mcp's rebuild, alternating.
    build_trials = 1 if quick or target >= 10_000 else 3
    plain, ours = [], []
    chunks = 0
    for trial in range(build_trials):
        dest = base / f"plain-{label}-{trial}"
        seconds, chunks = timed(lambda dest=dest: plain_whoosh_build(ws_root, dest))  # type: ignore[misc]
        plain.append(seconds)
        shutil.rmtree(dest, ignore_errors=True)
        index = MemoryIndex(Memory(load_settings(workspace=str(ws_root))).ws)
        seconds, ours_chunks = timed(index.rebuild)
        ours.append(seconds)
        assert ours_chunks == chunks, (ours_chunks, chunks)
    return _measure_built(label, ws_root, base, quick, out, (chunks, plain, ours))


def _measure_built(
    label: str,
    ws_root: Path,
    base: Path,
    quick: bool,
    out: dict[str, Any],
    builds: tuple[int, list[float], list[float]] | None,
) -> dict[str, Any]:
    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory

    if builds is None:  # --no-build: bring the index up to date and count its chunks
        memory = Memory(load_settings(workspace=str(ws_root)))
        memory.index.sync(force=True)
        out["chunks"] = memory.index.state().chunks
        out["build"] = None
        return _measure_rest(label, ws_root, base, quick, out)
    chunks, plain, ours = builds
    out["chunks"] = chunks
    out["build"] = {
        "reme_chunks_per_s": chunks / statistics.median(ours),
        "plain_whoosh_chunks_per_s": chunks / statistics.median(plain),
        "reme_s": statistics.median(ours),
        "plain_s": statistics.median(plain),
    }
    out["build"]["speedup"] = out["build"]["reme_chunks_per_s"] / out["build"]["plain_whoosh_chunks_per_s"]
    print(f"[{label}] {chunks} chunks; build {out['build']}", file=sys.stderr)
    return _measure_rest(label, ws_root, base, quick, out)


def _measure_rest(label: str, ws_root: Path, base: Path, quick: bool, out: dict[str, Any]) -> dict[str, Any]:
    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory

    # Search: the MCP tool's operation, and FTS5 on the same chunks and queries.
    queries = make_queries(n=60 if quick else 300)
    conn = fts5_build(ws_root, base / f"fts-{label}.db")
    memory = Memory(load_settings(workspace=str(ws_root)))
    memory.search("warm up")
    for q in queries[:20]:  # warm the page cache and both engines' caches
        memory.search(q)
        fts5_search(conn, q)
    ours_t, fts_t = [], []
    for q in queries:
        seconds, _ = timed(lambda q=q: fts5_search(conn, q))  # type: ignore[misc]
        fts_t.append(seconds)
        seconds, _ = timed(lambda q=q: memory.search(q))  # type: ignore[misc]
        ours_t.append(seconds)
    conn.close()
    out["search"] = {"reme": stats(ours_t), "fts5_trigram": stats(fts_t)}
    out["search"]["p95_ratio"] = out["search"]["reme"]["p95_ms"] / max(1e-9, out["search"]["fts5_trigram"]["p95_ms"])
    print(f"[{label}] search {out['search']}", file=sys.stderr)

    # Sync: a scan on every search (interval 0), so the only difference is what changed.
    settings = load_settings(workspace=str(ws_root))
    settings = type(settings)(workspace=settings.workspace, timezone=settings.timezone, sync_interval=0.0)
    memory = Memory(settings)
    memory.search("warm up")
    notes = sorted((ws_root / "daily").glob("*/*.md"))
    rng = random.Random(SEED + 2)
    sync: dict[str, Any] = {}
    scans = []
    for _ in range(5 if quick else 10):
        seconds, _ = timed(lambda: memory.index.sync(force=True))
        scans.append(seconds)
    sync["scan_unchanged"] = stats(scans)
    # Paired trials: each search after touching n files is preceded by one with nothing
    # touched, and the added cost is the median of the pairs' differences, in wall and in
    # CPU time. Medians of separate runs of a few tens of ms swing by more than the cost.
    trials = 3 if quick else 15
    touch_counts = (1, 10) if quick else (1, 10, 100)  # --quick must stay well under a minute
    for touched in touch_counts:
        walls, cpus, bases = [], [], []
        for _ in range(trials):
            base_wall, base_cpu = _timed_search(memory)
            for note in rng.sample(notes, min(touched, len(notes))):
                with note.open("a", encoding="utf-8") as fh:
                    fh.write(f"\nappended {rng.randint(0, 10**9)}\n")
            wall, cpu = _timed_search(memory)
            walls.append(wall - base_wall)
            cpus.append(cpu - base_cpu)
            bases.append(base_wall)
        sync[f"added_{touched}_ms"] = statistics.median(walls) * 1000
        sync[f"added_{touched}_cpu_ms"] = statistics.median(cpus) * 1000
        sync[f"untouched_{touched}"] = stats(bases)
    out["sync"] = sync
    print(f"[{label}] sync {sync}", file=sys.stderr)

    # Cold start with an up-to-date index, and the server's peak RSS.
    memory.index.sync(force=True)
    warm = queries[: 5 if quick else 30]
    starts = [asyncio.run(cold_start_once(ws_root, "deploy", warm)) for _ in range(3 if quick else 5)]
    out["cold_start"] = {
        "tools_list": stats([s["ready"] for s in starts]),
        "first_search": stats([s["first_search"] for s in starts]),
    }
    out["peak_rss_mb"] = max((s["rss_mb"] or 0.0) for s in starts)
    print(f"[{label}] cold start {out['cold_start']} rss {out['peak_rss_mb']:.0f} MB", file=sys.stderr)

    # remember: call to answer (written, day index refreshed, searchable).
    memory = Memory(load_settings(workspace=str(ws_root)))
    memory.search("warm up")
    rng = random.Random(SEED + 3)
    samples = []
    for i in range(10 if quick else 30):
        content = f"Benchmark fact {i}: the {rng.choice(COMMON_EN)} uses {rng.randint(0, 10**12)} units."
        seconds, result = timed(lambda c=content: memory.remember(c, date="2030-01-01"))  # type: ignore[misc]
        assert result.created
        samples.append(seconds)
    out["remember"] = stats(samples)
    print(f"[{label}] remember {out['remember']}", file=sys.stderr)
    return out


def render_table(results: list[dict[str, Any]]) -> str:
    rows: list[tuple[str, ...]] = [("", *[f"{r['size']} ({r['chunks']} chunks, {r['files']} files)" for r in results])]

    def row(name: str, fn: Callable[[dict[str, Any]], str]) -> None:
        rows.append((name, *[fn(r) for r in results]))

    row("cold start to tools/list p50 / p95", lambda r: _pair(r["cold_start"]["tools_list"], "s"))
    row("first search after start p50 / p95", lambda r: _pair(r["cold_start"]["first_search"]))
    row("search p50 / p95 (reme-mcp)", lambda r: _pair(r["search"]["reme"]))
    row("search p50 / p95 (FTS5 trigram)", lambda r: _pair(r["search"]["fts5_trigram"]))
    row("search p95 ratio reme / FTS5", lambda r: f"{r['search']['p95_ratio']:.2f}x")
    row("sync: scan, nothing changed p50", lambda r: f"{r['sync']['scan_unchanged']['p50_ms']:.1f} ms")
    for n in (1, 10, 100):
        row(f"sync: +{n} touched file(s), added p50 wall / CPU", lambda r, n=n: _added(r, n))
    row("full build (reme-mcp) chunks/s", lambda r: _build(r, "reme_chunks_per_s", "{:.0f}"))
    row("full build (plain Whoosh) chunks/s", lambda r: _build(r, "plain_whoosh_chunks_per_s", "{:.0f}"))
    row("full build speed-up", lambda r: _build(r, "speedup", "{:.2f}x"))
    row("remember p50 / p95", lambda r: _pair(r["remember"]))
    row("server peak RSS", lambda r: f"{r['peak_rss_mb']:.0f} MB")
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _added(r: dict[str, Any], n: int) -> str:
    wall, cpu = r["sync"].get(f"added_{n}_ms"), r["sync"].get(f"added_{n}_cpu_ms")
    return "(not run)" if wall is None or cpu is None else f"{wall:.1f} / {cpu:.1f} ms"


def _build(r: dict[str, Any], key: str, fmt: str) -> str:
    return fmt.format(r["build"][key]) if r["build"] else "(not run)"


def _pair(s: dict[str, float], unit: str = "ms") -> str:
    if unit == "s":
        return f"{s['p50_ms'] / 1000:.2f} / {s['p95_ms'] / 1000:.2f} s"
    return f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f} ms"


def main() -> None:
    # The lexical engine's numbers: the semantic stage has its own (bench/semantic_perf.py).
    os.environ.setdefault("REME_SEMANTIC", "off")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="The 1k size only, fewer trials (a CI smoke test).")
    parser.add_argument("--sizes", default="1k,10k,100k", help="Comma-separated sizes among 1k, 10k, 100k.")
    parser.add_argument("--json", type=Path, help="Also write the results as JSON to this path.")
    parser.add_argument(
        "--workdir", type=Path, help="Keep the generated workspaces here and reuse them (default: a temp folder)."
    )
    parser.add_argument("--no-build", action="store_true", help="Skip the full-build comparison (slow at 100k).")
    args = parser.parse_args()
    sizes = ["1k"] if args.quick else [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown size(s) {', '.join(unknown)}: use 1k, 10k or 100k")
    base = args.workdir or Path(tempfile.mkdtemp(prefix="reme-perf-"))
    base.mkdir(parents=True, exist_ok=True)
    # The indexes go beside the workspaces (a server it starts inherits this), not into ~/.cache.
    os.environ.setdefault("REME_INDEX_DIR", str(base / "index-home"))
    try:
        results = [measure_size(s, SIZES[s], base, args.quick, build=not args.no_build) for s in sizes]
    finally:
        if not args.workdir:
            shutil.rmtree(base, ignore_errors=True)
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()}"
    print(f"\nreme-mcp perf ({machine}); command: python bench/perf.py {' '.join(sys.argv[1:])}".rstrip())
    print(render_table(results))
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "results": results}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
