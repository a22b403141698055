"""The robustness tests' shared fixture: the machine kept busy beside a test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest


@pytest.fixture
def load(request: pytest.FixtureRequest) -> Iterator[str]:
    """ "quiet", or "busy": every core kept busy by a busy loop beside the test, as a person's build
    would. Parametrize indirectly (`@pytest.mark.parametrize("load", ["quiet", "busy"], indirect=True)`)
    on the few tests whose guarantees timing could break: the whole folder twice would double CI."""
    kind = str(getattr(request, "param", "quiet"))
    loops: list[subprocess.Popen[bytes]] = []
    if kind == "busy":
        loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        yield kind
    finally:
        for loop in loops:
            loop.kill()
            loop.wait(timeout=30)
