"""Several servers on one workspace: is it embedded once, or once a server?

Two hosts open on one project each start a reme-mcp with search by meaning. This starts 1,
then N processes together on bench/perf.py's generated workspace with no vectors yet (its
index built beforehand, as a running server would have it), each waiting until its stage
says everything is embedded. Printed: how long until every process was ready, and the CPU
time of all of them together; N processes should cost what one does.

    python bench/shared_embedding.py [--chunks 10000] [--servers 2] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf import generate_workspace

SERVER = """
import resource, sys
from reme_mcp import process
from reme_mcp.config import load_settings
process.one_thread_libraries()
from reme_mcp.ops.memory import Memory
m = Memory(load_settings(sys.argv[1], "UTC", "on"))
m.search("anything")
assert m.index.semantic.wait(7200)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime)
"""


def run(ws: Path, index: Path, servers: int) -> tuple[float, float]:
    """Seconds until all `servers` processes were ready, and their CPU seconds together."""
    shutil.rmtree(index, ignore_errors=True)
    env = {**os.environ, "REME_INDEX_DIR": str(index), "REME_TIMEZONE": "UTC"}
    lexical = "from reme_mcp.config import load_settings\nfrom reme_mcp.ops.memory import Memory\n"
    lexical += f"Memory(load_settings({str(ws)!r}, 'UTC', 'off')).search('anything')\n"
    built = subprocess.run([sys.executable, "-c", lexical], env=env, capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit(f"shared_embedding: the index could not be built: {built.stderr.strip()}")
    started = time.monotonic()
    procs = [
        subprocess.Popen([sys.executable, "-c", SERVER, str(ws)], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(servers)
    ]
    cpu = 0.0
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"shared_embedding: a process ended with status {proc.returncode}")
        cpu += float(out.split()[-1])
    return time.monotonic() - started, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--workdir", type=Path, help="keep the generated workspace here; an earlier run's is reused")
    args = parser.parse_args(argv)
    tmp = args.workdir or Path(tempfile.mkdtemp(prefix="reme-shared-"))
    ws = tmp / "ws"
    if not ws.is_dir():
        generate_workspace(ws, args.chunks)
    print(f"{'processes':<12}{'all ready s':>14}{'CPU s, all':>14}")
    for servers in (1, args.servers):
        wall, cpu = run(ws, tmp / "index", servers)
        print(f"{servers:<12}{wall:>14.1f}{cpu:>14.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
