"""The semantic stage's costs at size: embedding rate, search latency with the query's embedding, RSS.

The workspace is bench/perf.py's generated one (the same generator and queries). Measured
in one run, the stage off beside on: search p50/p95 lexical, then with the stage on while
it is still embedding, then once everything is embedded; the embedding rate (chunks/s, on
both cores at the lowest priority, as the server runs it, while the searches run); and the
resident memory of a real `reme-mcp` server over stdio once it has loaded the model and
the stored vectors and answered a search.

    python bench/semantic_perf.py [--chunks 10000] [--queries 300] [--workdir DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paraphrase import generate, query_text
from perf import generate_workspace, make_queries, stats

from reme_mcp import process
from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory


def search_times(memory: Memory, queries: list[str]) -> dict[str, float]:
    samples = []
    for q in queries:
        started = time.perf_counter()
        memory.search(q)
        samples.append(time.perf_counter() - started)
    return stats(samples)


async def server_rss(workspace: Path, query: str) -> float:
    """MB resident in a real stdio server after a search with the stage on and its vectors loaded."""
    import psutil
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "reme_mcp", "--workspace", str(workspace), "--semantic", "on"],
        env={**os.environ},
    )
    async with Client(params, read_timeout_seconds=120) as client:
        await client.call_tool("search", {"query": query})
        await asyncio.sleep(15)  # the model loads and the vectors are read in the background
        await client.call_tool("search", {"query": query})
        me = psutil.Process()
        servers = [p for p in me.children(recursive=True) if "reme_mcp" in " ".join(p.cmdline())]
        return max(p.memory_info().rss for p in servers) / 2**20 if servers else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--workdir", type=Path, help="keep the workspace and its index and vectors here; an earlier run's are reused"
    )
    args = parser.parse_args(argv)
    process.one_thread_libraries()  # as the `reme-mcp` command does, before any thread starts

    tmp = args.workdir or Path(tempfile.mkdtemp(prefix="reme-semperf-"))
    os.environ["REME_INDEX_DIR"] = str(tmp / "index")
    ws = tmp / "ws"
    marker = tmp / "shape.json"
    if marker.exists():
        shape = json.loads(marker.read_text(encoding="utf-8"))
    else:
        shape = generate_workspace(ws, args.chunks)
        marker.write_text(json.dumps(shape), encoding="utf-8")
    settings = load_settings(str(ws))
    queries = make_queries(n=args.queries)
    out: dict[str, Any] = {"workspace": shape}

    lexical = Memory(replace(settings, semantic="off"))
    lexical.index.sync(force=True)
    chunks = lexical.index.state().chunks
    out["chunks"] = chunks
    for q in queries[:20]:
        lexical.search(q)
    out["search_off"] = search_times(lexical, queries)

    semantic = Memory(replace(settings, semantic="on"))
    hook = semantic.index.semantic
    assert hook is not None
    started = time.monotonic()
    semantic.search("warm up")
    hook.stage.loaded(120)
    loaded_s = time.monotonic() - started
    out["search_on_while_embedding"] = search_times(semantic, queries[:100])
    hook.wait(7200)
    embed_s = time.monotonic() - started - loaded_s
    state = hook.state()
    out["embedded"] = state.embedded
    out["model_load_s"] = loaded_s
    out["embed_chunks_per_s"] = state.embedded / max(1e-9, embed_s)
    for q in queries[:20]:
        semantic.search(q)
    out["search_on"] = search_times(semantic, queries)
    # Questions whose words the workspace hardly holds (the paraphrase benchmark's): the
    # lexical stage is weak, so each is embedded twice (as a question and as text).
    _, plan, _ = generate(7, 150)
    other_words = [query_text(fact, "en" if i % 2 else "zh") for i, (fact, _) in enumerate(plan)]
    out["search_on_other_words"] = search_times(semantic, other_words)
    out["server_rss_mb"] = asyncio.run(server_rss(ws, queries[0]))

    print(
        f"{chunks} chunks ({shape}); model {state.model} loaded in {loaded_s:.1f} s; "
        f"{state.embedded} chunks embedded at {out['embed_chunks_per_s']:.1f} chunks/s"
    )
    print(f"{'search':<34}{'p50 ms':>10}{'p95 ms':>10}")
    for key, label in (
        ("search_off", "stage off (lexical)"),
        ("search_on_while_embedding", "stage on, while embedding"),
        ("search_on", "stage on, all embedded"),
        ("search_on_other_words", "stage on, questions in other words"),
    ):
        print(f"{label:<34}{out[key]['p50_ms']:>10.1f}{out[key]['p95_ms']:>10.1f}")
    print(f"server RSS with the model and vectors loaded: {out['server_rss_mb']:.0f} MB")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
