"""How fast does `reme-mcp ingest` import a host's history, and how soon is a new line searchable?

Generates a Claude Code history (default: 10,000 sessions, 1,000,000 events: user
and assistant text plus tool calls, tool results and thinking, as Claude Code
writes them) under a temporary HOME, then measures, each in its own process:

- backfill: `reme-mcp ingest backfill claude-code` (events/s read, messages/s written
  as session dialogs; 200+ logs are shared out to one worker process per core) and its
  peak RSS, the process and its workers summed;
- index build: `reme-mcp reindex` of the resulting workspace, separately, with its RSS;
- watch latency: with `reme-mcp ingest watch claude-code` running, the time from
  appending one line to a session log until `Memory.search` finds it (median of 5).

Targets: >= 20,000 messages/s ingested, RSS <= 200 MB, an appended line searchable
in <= 2 s. Timings depend on the machine: compare columns of one run.

    python bench/ingest.py                # 10,000 sessions, 1,000,000 events (about 1 GB under /tmp)
    python bench/ingest.py --quick        # 200 sessions x 50 events, a smoke test (never a timed assertion)
    python bench/ingest.py --sessions 2000 --events 100 --keep /tmp/ingest-bench
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SEED = 20261128
WORDS = [
    "deploy",
    "service",
    "ledger",
    "postgres",
    "index",
    "cache",
    "queue",
    "worker",
    "retry",
    "timeout",
    "config",
    "branch",
    "merge",
    "review",
    "test",
    "release",
    "freeze",
    "rollback",
    "metric",
    "alert",
    "latency",
    "schema",
    "migration",
    "token",
    "budget",
    "shard",
    "replica",
    "backup",
    "restore",
    "部署",
    "服务",
    "数据库",
    "缓存",
    "队列",
    "测试",
    "发布",
    "回滚",
    "监控",
    "延迟",
    "迁移",
    "备份",
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


def generate(home: Path, sessions: int, events: int) -> tuple[int, int]:
    """Write the history; returns (events, text messages) written."""
    rng = random.Random(SEED)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    total = texts = 0
    for s in range(sessions):
        project = f"/home/user/projects/p{s % 40}"
        folder = home / ".claude" / "projects" / project.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        when = start + timedelta(minutes=37 * s)
        lines: list[str] = []
        for e in range(events):
            when += timedelta(seconds=7)
            base: dict[str, Any] = {"parentUuid": None, "isSidechain": False, "cwd": project, "sessionId": sid}
            base.update(
                uuid=str(uuid.UUID(int=rng.getrandbits(128))), timestamp=when.isoformat().replace("+00:00", "Z")
            )
            kind = e % 10
            if kind in (0, 2, 4, 6):
                base.update(type="user", message={"role": "user", "content": _sentence(rng, rng.randint(8, 40))})
                texts += 1
            elif kind in (1, 3, 5, 7):
                content = [{"type": "text", "text": _sentence(rng, rng.randint(10, 60))}]
                base.update(type="assistant", message={"id": f"msg_{s}_{e}", "role": "assistant", "content": content})
                texts += 1
            elif kind == 8:
                call = {"type": "tool_use", "id": f"toolu_{e}", "name": "Bash", "input": {"command": "ls -la"}}
                base.update(type="assistant", message={"role": "assistant", "content": [call]})
            else:
                result = {"type": "tool_result", "tool_use_id": f"toolu_{e}", "content": _sentence(rng, 30)}
                base.update(type="user", message={"role": "user", "content": [result]})
            lines.append(json.dumps(base, ensure_ascii=False))
        (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        total += events
    return total, texts


def baseline(home: Path, out: Path) -> float:
    """Events/s of the least an importer must do: parse each line and write it out again, one file per log."""
    out.mkdir(parents=True, exist_ok=True)
    begin = time.perf_counter()
    count = 0
    for n, log in enumerate(sorted((home / ".claude" / "projects").rglob("*.jsonl"))):
        with log.open("rb") as fh:
            lines = [json.dumps(json.loads(line), ensure_ascii=False) for line in fh if line.strip()]
        (out / f"{n}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        count += len(lines)
    return count / (time.perf_counter() - begin)


def run_measured(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Seconds, peak RSS (MB, the process and its workers together, sampled) and stdout of one reme-mcp run."""
    import psutil  # type: ignore[import-untyped]

    begin = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "reme_mcp", *args], env=env, stdout=subprocess.PIPE, text=True)
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:  # never polls the process: wait4 below must be the one that reaps it
        with contextlib.suppress(psutil.Error):
            top = psutil.Process(proc.pid)
            while not done.is_set():
                total = 0
                for p in [top, *top.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        total += p.memory_info().rss
                peak[0] = max(peak[0], total / 2**20)
                time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - begin
    done.set()
    sampler.join(timeout=1)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"reme-mcp {' '.join(args)} failed")
    return elapsed, max(peak[0], usage.ru_maxrss / 1024), out


def watch_latency(home: Path, ws: Path, env: dict[str, str], trials: int = 5) -> list[float]:
    from reme_mcp.config import load_settings
    from reme_mcp.ops.memory import Memory

    memory = Memory(load_settings(str(ws), "UTC"))
    memory.search("warm up")
    logs = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
    watcher = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "ingest", "watch", "claude-code", "-w", str(ws), "--interval", "0.2"],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    latencies: list[float] = []
    try:
        time.sleep(2.0)  # its first pass: every log is stat-ed once against the cursors
        for trial in range(trials):
            token = f"zebrafinch{trial}x{random.randrange(10**6)}"
            event = {"type": "user", "uuid": str(uuid.uuid4()), "timestamp": "2026-12-01T00:00:00Z"}
            event["message"] = {"role": "user", "content": f"The codename is {token}."}
            begin = time.perf_counter()
            with logs[trial * 7 % len(logs)].open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(event) + "\n")
            while not memory.search(token).results:
                if time.perf_counter() - begin > 30:
                    raise SystemExit("an appended line was not searchable within 30 s")
                time.sleep(0.02)
            latencies.append(time.perf_counter() - begin)
    finally:
        watcher.terminate()
        watcher.wait(10)
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200 sessions x 50 events")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100, help="events per session")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument("--json", type=Path, help="also write the results here")
    opts = parser.parse_args()
    sessions, events = (200, 50) if opts.quick else (opts.sessions, opts.events)
    base = opts.keep or Path(tempfile.mkdtemp(prefix="reme-ingest-bench-", dir="/tmp"))
    home, ws = base / "home", base / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    # Every index of this run (the reindex, the watch latency's searches) beside its workspace.
    os.environ["REME_INDEX_DIR"] = str(base / "index")
    env = {**os.environ, "HOME": str(home), "REME_TIMEZONE": "UTC"}
    try:
        begin = time.perf_counter()
        if not (home / ".claude").exists():
            generate(home, sessions, events)
        total = sessions * events
        gen_s = time.perf_counter() - begin
        size = sum(p.stat().st_size for p in (home / ".claude").rglob("*.jsonl"))
        base_rate = baseline(home, base / "baseline")
        shutil.rmtree(base / "baseline", ignore_errors=True)
        ingest_s, ingest_rss, out = run_measured(["ingest", "backfill", "claude-code", "-q", "-w", str(ws)], env)
        written = int(out.split("session(s), ")[1].split(" message")[0])
        index_s, index_rss, _ = run_measured(["reindex", "-q", "-w", str(ws)], env)
        latencies = watch_latency(home, ws, env, trials=3 if opts.quick else 5)
        results = {
            "sessions": sessions,
            "events": total,
            "log_bytes": size,
            "generate_s": round(gen_s, 1),
            "baseline_json_roundtrip_events_per_s": round(base_rate),
            "ingest_s": round(ingest_s, 2),
            "ingest_events_per_s": round(total / ingest_s),
            "ingest_vs_baseline": round(total / ingest_s / base_rate, 2),
            "ingest_messages_written": written,
            "ingest_messages_per_s": round(written / ingest_s),
            "ingest_peak_rss_mb": round(ingest_rss, 1),
            "index_build_s": round(index_s, 2),
            "index_messages_per_s": round(written / index_s),
            "index_peak_rss_mb": round(index_rss, 1),
            "watch_to_searchable_s_median": round(statistics.median(latencies), 3),
            "watch_to_searchable_s_max": round(max(latencies), 3),
        }
    finally:
        if not opts.keep:
            shutil.rmtree(base, ignore_errors=True)
    width = max(map(len, results))
    for key, value in results.items():
        print(f"{key:<{width}}  {value}")
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
