"""Spawn to `tools/list` answer for the plugins' launchers: `uvx --from <plugin>` (what the
plugins ran before) beside `bin/reme-mcp` (what they run now), and the installed command as
the floor.

A host starts a plugin's server the same way each session and gives it a deadline (Codex
about 1 s for an optional server, `claude -p` 5 s, Hermes 1.5 s). `uvx --from DIR` resolves
the plugin against the package index on every start; bin/reme-mcp builds once into the data
folder and then only checksums the plugin's files before it execs the environment's Python.
Both run from a copy of this checkout, after one start that builds (not counted). Each
server gets the exchange of bench/handshake.py; spawns are interleaved so that a neighbour's
burst hits every column alike. The row "first start" is bin/reme-mcp on a data folder where
nothing is built yet: its front answers while uv builds beside it (each run waits for that
build to finish before the next).

    python bench/launcher.py                 # 7 runs each, uv/uvx from PATH
    python bench/launcher.py --runs 11 --busy
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# bench/ is a folder of scripts, not a package.
from handshake import _spin, measure, spawn_to_tools

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("bin", "pyproject.toml", "README.md", "reme_mcp", "skills")


def copy_plugin(target: Path) -> Path:
    target.mkdir()
    for name in SHIPPED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def first_starts(launcher: Path, folder: Path, workspace: list[str], runs: int) -> list[float]:
    """Spawn to tools/list answer of the launcher's first start: each run on a new data folder,
    so the answer comes from the launcher's front while uv builds the environment beside it."""
    times = []
    for run in range(runs):
        data = folder / f"first-start-{run}"
        times.append(spawn_to_tools([str(launcher), "--plugin-data", str(data), *workspace]))
        # The build goes on after the launcher exits; waiting for it keeps builds from piling up.
        deadline = time.monotonic() + 600
        while not list(data.glob("venvs/*/.reme-plugin-ready")):
            if time.monotonic() > deadline:
                raise SystemExit(f"launcher.py: the first start's build in {data} did not finish")
            time.sleep(0.2)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="spawns per launcher (default 7)")
    parser.add_argument("--busy", action="store_true", help="keep one core spinning meanwhile")
    args = parser.parse_args()
    uvx = shutil.which("uvx")
    installed = Path(sys.executable).with_name("reme-mcp")
    if uvx is None or shutil.which("uv") is None or not installed.exists():
        raise SystemExit("launcher.py: needs uv and uvx on PATH and reme-mcp installed beside this Python")
    with tempfile.TemporaryDirectory() as folder:
        plugin, data = copy_plugin(Path(folder) / "plugin"), Path(folder) / "data"
        workspace = ["--workspace", str(Path(folder) / "memory")]
        servers = {
            "uvx --from": [uvx, "--from", str(plugin), "reme-mcp", *workspace],
            "bin/reme-mcp": [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(data), *workspace],
            "installed": [str(installed), *workspace],
        }
        spinner = multiprocessing.Process(target=_spin, daemon=True) if args.busy else None
        if spinner is not None:
            spinner.start()
        try:
            load = os.getloadavg()[0]
            results = measure(servers, args.runs)  # its uncounted first spawn is each one's build
            launcher = plugin / "bin" / "reme-mcp"
            results["first start"] = first_starts(launcher, Path(folder), workspace, args.runs)
        finally:
            if spinner is not None:
                spinner.terminate()
                spinner.join()
    mode = "one core busy" if args.busy else "no extra load"
    print(f"spawn to tools/list answer, {args.runs} runs each, {os.cpu_count()} cores, {mode}, load {load:.2f}")
    floor = statistics.median(results["installed"])
    print(f"{'launcher':14} {'median s':>9} {'min s':>7} {'max s':>7} {'x installed':>12}")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"{name:14} {median:9.3f} {min(values):7.3f} {max(values):7.3f} {median / floor:12.2f}")


if __name__ == "__main__":
    main()
