"""How often does the secret check refuse benign text? LoCoMo's dialogs and the bench workspaces.

`remember` refuses content that looks like a secret (reme_mcp/safety/secrets.py); the
check by shape (reme_mcp/safety/encoded.py: key material and credentials inside base64)
must not refuse ordinary notes. This scans, with the whole check and, as the baseline in
the same run, with the shape check switched off:

- every turn of LoCoMo's development split (../shared/data/locomo/locomo-dev.json), each
  session's turns joined as one text, and the image captions;
- every file of the workspace bench/perf.py generates (English, Chinese and mixed notes,
  digests, day indexes, dialogs), at about 10k chunks;
- the notes of the peer harness's corpus (../shared/peers/bench_mcp.py), seeds 1 and 2;

and prints, per corpus, how many texts were refused by each and what the check costs.

    python bench/secrets_fp.py
    python bench/secrets_fp.py --chunks 1000     # a smaller generated workspace
    python bench/secrets_fp.py --locomo /work/shared/data/locomo/locomo-dev.json \
        --harness /work/shared/peers/bench_mcp.py  # from a checkout not beside shared/
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
LOCOMO = SHARED / "data" / "locomo" / "locomo-dev.json"
HARNESS = SHARED / "peers" / "bench_mcp.py"
sys.path.insert(0, str(ROOT))

from reme_mcp.safety import secrets  # noqa: E402


def locomo_texts(path: Path) -> Iterator[str]:
    for conversation in json.loads(path.read_text(encoding="utf-8")):
        sessions = conversation["conversation"]
        for key, turns in sessions.items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            for turn in turns:
                yield turn["text"]
                if turn.get("blip_caption"):
                    yield turn["blip_caption"]
            yield "\n".join(f"{turn['speaker']}: {turn['text']}" for turn in turns)


def perf_texts(chunks: int) -> Iterator[str]:
    spec = importlib.util.spec_from_file_location("perf", ROOT / "bench" / "perf.py")
    assert spec is not None and spec.loader is not None
    perf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(perf)
    with tempfile.TemporaryDirectory(prefix="reme-secrets-fp-") as tmp:
        root = Path(tmp) / "ws"
        perf.generate_workspace(root, chunks)
        for file in sorted(root.rglob("*")):
            if file.is_file():
                yield file.read_text(encoding="utf-8", errors="replace")


def peer_texts(harness: Path, seed: int) -> Iterator[str]:
    spec = importlib.util.spec_from_file_location("bench_mcp", harness)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_mcp"] = bench
    spec.loader.exec_module(bench)
    for note in bench.make_corpus(2000, seed):
        yield f"# {note.title}\n\n{note.text}"


def measure(name: str, texts: list[str]) -> dict[str, object]:
    def scan(check: Callable[[str], object]) -> tuple[list[tuple[int, object]], float]:
        began = time.perf_counter()
        found = [(i, f) for i, text in enumerate(texts) if (f := check(text)) is not None]
        return found, time.perf_counter() - began

    shape = secrets.find_encoded
    secrets.find_encoded = lambda text, inner: None  # type: ignore[assignment]  # the baseline: rules only
    try:
        rules, rules_s = scan(secrets.find_secret)
    finally:
        secrets.find_encoded = shape
    whole, whole_s = scan(secrets.find_secret)
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    return {
        "corpus": name,
        "texts": len(texts),
        "MB": round(mb, 2),
        "refused (rules only)": len(rules),
        "refused (with shape)": len(whole),
        "ms/MB (rules only)": round(rules_s * 1000 / max(mb, 1e-9), 1),
        "ms/MB (with shape)": round(whole_s * 1000 / max(mb, 1e-9), 1),
        "examples": [f"{texts[i][:80]!r}: {f}" for i, f in whole[:3]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="size of the perf.py workspace")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo's locomo-dev.json")
    parser.add_argument("--harness", type=Path, default=HARNESS, help="the peer harness's bench_mcp.py")
    args = parser.parse_args()
    corpora: list[tuple[str, Callable[[], Iterator[str]]]] = []
    if args.locomo.is_file():
        corpora.append(("LoCoMo dev (turns, sessions, captions)", lambda: locomo_texts(args.locomo)))
    else:
        print(f"(no LoCoMo at {args.locomo}: pass --locomo)")
    corpora.append((f"bench/perf.py workspace (~{args.chunks} chunks)", lambda: perf_texts(args.chunks)))
    if args.harness.is_file():
        corpora += [(f"peer harness corpus, seed {s}", lambda s=s: peer_texts(args.harness, s)) for s in (1, 2)]  # type: ignore[misc]
    else:
        print(f"(no peer harness at {args.harness}: pass --harness)")
    rows = [measure(name, list(make())) for name, make in corpora]
    cols = ["texts", "MB", "refused (rules only)", "refused (with shape)", "ms/MB (rules only)", "ms/MB (with shape)"]
    print(f"{'corpus':<44}" + "".join(f"{c:>22}" for c in cols))
    for row in rows:
        print(f"{row['corpus']!s:<44}" + "".join(f"{row[c]!s:>22}" for c in cols))
        for example in row["examples"]:  # type: ignore[attr-defined]
            print(f"    refused: {example}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
