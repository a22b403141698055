"""Stopping a process a test started: the signal a person or a host sends, then, if it has not
ended in time, SIGKILL, so no test leaves a server behind."""

from __future__ import annotations

import signal
import subprocess


def stop(proc: subprocess.Popen[bytes] | subprocess.Popen[str], sig: int = signal.SIGTERM, timeout: float = 10) -> None:
    """Send `sig` (none when the process has ended) and wait; kill after `timeout` seconds."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
