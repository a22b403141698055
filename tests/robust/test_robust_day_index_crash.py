"""The day index after crashes and a full disk: it lists exactly its day's notes in the end (issue 25).

Proves, with a real `reme-mcp serve --transport http` process: six MCP clients write
notes of one day while the server gets SIGKILL, then SIGTERM, then SIGINT; after each
it is started again and every request not acknowledged is retried with its
request_id; after a clean stop `daily/<date>.md` lists every note on disk of that
day, once. And with a workspace on a real full tmpfs: a `remember` refused for the
full disk (its note kept, the error naming it), space freed, more notes that day:
the day index lists every note.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from reme_mcp.storage.documents import BLOCK_END, BLOCK_START
from tests.robust.test_robust_disk import fill, mount
from tests.robust.test_robust_http import TOKEN, env_with, free_port

DAY = "2026-11-28"
CLIENTS = 6
WRITING = 0.3  # seconds of writes before each signal


def listed(ws: Path, day: str) -> list[str]:
    """The paths the day index's block lists, in order (duplicates kept)."""
    text = (ws / "daily" / f"{day}.md").read_text(encoding="utf-8")
    assert text.count(BLOCK_START) == 1 and text.count(BLOCK_END) == 1, text[:300]
    block = text[text.index(BLOCK_START) : text.index(BLOCK_END)]
    return [line.split("]]")[0][4:] for line in block.splitlines() if line.startswith("- [[")]


def on_disk(ws: Path, day: str) -> list[str]:
    return sorted(f"daily/{day}/{p.name}" for p in (ws / "daily" / day).glob("*.md"))


@contextmanager
def http_server(ws: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "serve", "-w", str(ws), "--transport", "http", "--port", str(port)],
        env={**env_with(TOKEN), "REME_TIMEZONE": "UTC"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready(port):
            assert proc.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def ready(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def client_writes(port: int, todo: list[int], acked: set[int], stop: threading.Event) -> None:
    """Remember notes `todo` in order with their request_ids until the server goes away or `stop` is set."""

    async def run() -> None:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
            for n in todo:
                if stop.is_set():
                    return
                if n in acked:
                    continue
                args = {"content": f"Crash day fact {n}: zqcd{n} holds.", "date": DAY, "request_id": f"cd-{n}"}
                result = await c.call_tool("remember", args)
                if not result.is_error:
                    acked.add(n)

    try:
        anyio.run(run)
    except BaseException:  # the server was signalled: what was not acknowledged is retried later
        return


def write_round(port: int, plans: list[list[int]], acked: set[int], stop: threading.Event) -> list[threading.Thread]:
    threads = [threading.Thread(target=client_writes, args=(port, plan, acked, stop)) for plan in plans]
    for thread in threads:
        thread.start()
    return threads


@pytest.mark.slow
def test_day_index_lists_every_note_after_signals_and_retries(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "daily").mkdir(parents=True)
    port = free_port()
    per_client = 60
    plans = [list(range(c * per_client, (c + 1) * per_client)) for c in range(CLIENTS)]
    acked: set[int] = set()
    for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
        with http_server(ws, port) as proc:
            stop = threading.Event()
            before = len(acked)
            threads = write_round(port, plans, acked, stop)
            # Timed from the first acknowledgements: a server's start varies tenfold with the load.
            deadline = time.monotonic() + 60
            while len(acked) < before + CLIENTS and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(WRITING)
            proc.send_signal(sig)
            # The calls in flight meet the signal; no new ones follow it. A server that ends
            # gracefully (SIGTERM, SIGINT) would otherwise take the rest of the notes in its
            # last seconds, and on a fast machine leave nothing to retry.
            stop.set()
            proc.wait(timeout=30)
            for thread in threads:
                thread.join(timeout=60)
    assert 0 < len(acked) < CLIENTS * per_client, len(acked)
    written = len(on_disk(ws, DAY))
    # Every request retried with its request_id, the rest written, then a clean stop.
    with http_server(ws, port) as proc:
        stop = threading.Event()
        for thread in write_round(port, plans, acked, stop):
            thread.join(timeout=120)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    notes = on_disk(ws, DAY)
    assert len(acked) == len(notes) == CLIENTS * per_client > written
    texts = [(ws / p).read_text(encoding="utf-8") for p in notes]
    facts = [t.split("Crash day fact ")[1].split(":")[0] for t in texts]
    assert len(facts) == len(set(facts)), "a retried request was stored twice"
    shown = listed(ws, DAY)
    missing = sorted(set(notes) - set(shown))
    assert not missing, f"{len(missing)} of {len(notes)} notes missing from the day index, e.g. {missing[:3]}"
    assert sorted(shown) == notes, "the day index lists a note twice or one that is not on disk"


def test_day_index_lists_every_note_after_a_full_disk(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(ws))
    try:
        (ws / "daily").mkdir()
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "reme_mcp", "-w", str(ws)],
            env={**os.environ, "REME_TIMEZONE": "UTC"},
        )

        async def session() -> None:
            async with Client(params, read_timeout_seconds=120) as client:
                for k in range(3):
                    done = await client.call_tool("remember", {"content": f"Before fact {k} zqbf{k}.", "date": DAY})
                    assert not done.is_error
                filler = fill(ws)
                kept = []
                for k in range(20):  # a page freed at a time: the note fits, the day index's new copy does not
                    os.truncate(filler, max(0, filler.stat().st_size - 4096))
                    await anyio.sleep(0.6)  # not in a burst: the day index is refreshed by this call
                    done = await client.call_tool("remember", {"content": f"Full fact {k} zqff{k}.", "date": DAY})
                    line = "".join(getattr(c, "text", "") for c in done.content)
                    assert not done.is_error or "the disk is full" in line, line
                    if not done.is_error and "caught up as soon as it can be written" in line:
                        kept.append(line)
                        break
                assert kept, "no remember stored its note with its day index left behind"
                filler.unlink()
                for k in range(3):
                    done = await client.call_tool("remember", {"content": f"After fact {k} zqaf{k}.", "date": DAY})
                    assert not done.is_error, done

        anyio.run(session)
        assert sorted(listed(ws, DAY)) == on_disk(ws, DAY)
    finally:
        subprocess.run(["umount", "-l", str(ws)], check=True)


def test_a_note_a_killed_process_left_unmarked_is_listed_by_the_next_start(tmp_path: Path) -> None:
    """A process killed after writing a note and before marking its day: the next server lists it."""
    ws = tmp_path / "ws"
    (ws / "daily").mkdir(parents=True)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "-w", str(ws)], env={**os.environ, "REME_TIMEZONE": "UTC"}
    )

    async def write_one() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            done = await client.call_tool("remember", {"content": "First fact zqfirstone.", "date": DAY})
            assert not done.is_error

    anyio.run(write_one)
    time.sleep(0.05)  # the note below is written after the day index, as the killed process wrote it
    (ws / "daily" / DAY / "orphan.md").write_text(
        "---\nname: orphan\ndescription: Orphan fact\n---\nThe zqorphan fact.\n", encoding="utf-8"
    )
    assert f"daily/{DAY}/orphan.md" not in listed(ws, DAY)

    async def start_only() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await client.list_tools()  # the warm-up starts once the tools are listed
            deadline = time.monotonic() + 20
            while f"daily/{DAY}/orphan.md" not in listed(ws, DAY) and time.monotonic() < deadline:
                await anyio.sleep(0.1)

    anyio.run(start_only)
    assert sorted(listed(ws, DAY)) == on_disk(ws, DAY)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stdio_server_ended_by_a_signal_writes_its_day_index(tmp_path: Path, sig: signal.Signals) -> None:
    """A host ends its stdio server with a signal right after a burst of notes: the day index lists them all."""
    ws = tmp_path / "ws"
    (ws / "daily").mkdir(parents=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "-w", str(ws)],
        env={**os.environ, "REME_TIMEZONE": "UTC"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(message: dict[str, object]) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    info = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": info})
    proc.stdout.readline()
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    notes = 8
    for k in range(1, notes + 1):
        args = {"content": f"Burst fact {k}: zqburst{k}.", "date": DAY}
        ask({"jsonrpc": "2.0", "id": k, "method": "tools/call", "params": {"name": "remember", "arguments": args}})
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == k and not answer["result"].get("isError"), answer
    proc.send_signal(sig)  # within the burst's batch window: the last notes wait for their batch
    proc.wait(timeout=30)
    assert sorted(listed(ws, DAY)) == on_disk(ws, DAY) and len(on_disk(ws, DAY)) == notes
