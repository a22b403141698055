"""Every bad REME_TIMEZONE is one line on stderr, never a traceback (issue 25, defect 5).

Proves, through the real `reme-mcp` command: a folder of the zone database, names too
long for a file name (ASCII, multi-byte, one part too long), a path that climbs out,
an unknown name and an empty part each end in one line naming the setting, with a
short quote of the value; a good zone still works.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REME = [sys.executable, "-m", "reme_mcp"]
BAD = [
    "America",
    "Europe",
    "A" * 200,
    "é" * 200,
    "Europe/" + "x" * 300,
    "Ab/" * 67,
    "../../../../etc/passwd",
    "Nowhere/City",
    "Europe//Berlin",
]


def doctor(ws: Path, zone: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REME_TIMEZONE": zone}
    return subprocess.run([*REME, "-w", str(ws), "doctor"], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("zone", BAD, ids=lambda z: z[:20])
def test_a_bad_zone_is_one_line(tmp_path: Path, zone: str) -> None:
    done = doctor(tmp_path, zone)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "time zone" in lines[0] and "Europe/Berlin" in lines[0], done.stderr
    assert len(lines[0]) < 250, lines[0]  # the value is quoted short, not echoed whole


def test_a_good_zone_still_works(tmp_path: Path) -> None:
    done = doctor(tmp_path, "America/New_York")
    assert done.returncode == 0, done.stderr
    assert "America/New_York" in done.stdout
