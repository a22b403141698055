"""The stdio server process: the SDK serves, a thin front answers the handshake while it loads.

The front owns the process's stdin and stdout. It passes every client line on to the
SDK (running in a thread over a pair of pipes) and every SDK line back to the client;
until the SDK has spoken, it also answers `initialize`, `tools/list` and
`server/discover` from the SDK's recorded answers (reme_mcp/faces/stdio/handshake.py), and drops the
SDK's later copy of those answers. A first `search` arriving before the SDK loads is
answered early too, from the Memory the SDK then serves with, and not passed on
(reme_mcp/faces/stdio/early_search.py).
Lines the SDK would leave unanswered get a JSON-RPC error from reme_mcp/faces/stdio/wire.py instead.
SIGINT and SIGTERM end the process within FINISH_TIMEOUT seconds: what waits for a batch
(a burst's day index, index commits) is written first, and every file is written
atomically, so nothing else needs tidying.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from reme_mcp import process
from reme_mcp._version import __version__
from reme_mcp.config import Settings
from reme_mcp.faces.deferred_memories import DeferredMemories
from reme_mcp.faces.stdio import early_search, handshake, wire
from reme_mcp.faces.stdio.sdk import run_sdk


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """Private copies of stdin and stdout for the protocol; fd 0 reads nothing and fd 1 goes to
    stderr, so a stray print from any library cannot corrupt the wire."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return wire_in, wire_out


# What a person who starts the server in a terminal is told, in one line, on stderr.
TERMINAL_START = (
    f"reme-mcp {__version__}: an MCP server waiting for a client's JSON-RPC on stdin (Ctrl-C stops it); "
    "for yourself run reme-mcp search WORDS or reme-mcp view, to add it to a client reme-mcp config CLIENT"
)


def _tell_a_person() -> None:
    """A person who started this in a terminal, not an MCP client, is told what it is (a pipe stays silent)."""
    if sys.stdin.isatty():
        print(TERMINAL_START, file=sys.stderr, flush=True)


def serve(settings: Settings) -> None:
    """Serve MCP over this process's stdin and stdout until the client closes stdin or signals."""
    _tell_a_person()
    memory = DeferredMemories(settings)
    process.end_on_signals(memory.finish)  # what waits for a batch is written first, for a few seconds at most
    # The recorded answers list the five tools: with `forget` turned on, the SDK answers itself.
    answers = None if settings.allow_forget else handshake.load(prompts=settings.prompts)
    early = early_search.load(answers, memory)
    wire_in, wire_out = _claim_stdio()
    sdk_in_r, sdk_in_w = os.pipe()
    sdk_out_r, sdk_out_w = os.pipe()
    write_lock = threading.Lock()
    sdk_spoke = threading.Event()
    exit_code = [0]

    def send(data: bytes) -> None:
        with write_lock:
            try:
                wire_out.write(data)
                wire_out.flush()
            except OSError:  # the client closed our stdout: nobody is left to answer
                os._exit(0)

    def sdk() -> None:
        # The pump ends the process once the SDK's end of the pipe is closed, whatever the cause.
        try:
            if early is not None:  # the memory operations first, then the SDK: see early_search.py
                early.prepare()
                early.wait_for_sdk_turn()
            from reme_mcp.faces.server import build_server

            server = build_server(settings, memory=memory)
        except BaseException as exc:
            _stopped(exc)
            for fd in (sdk_in_r, sdk_out_w):
                os.close(fd)
            return
        try:
            run_sdk(server, sdk_in_r, sdk_out_w)
        except BaseException as exc:
            _stopped(exc)

    def _stopped(exc: BaseException) -> None:
        exit_code[0] = 1
        print(f"reme-mcp: the MCP server stopped: {exc!r}", file=sys.stderr)

    def pump() -> None:
        with os.fdopen(sdk_out_r, "rb") as from_sdk:
            for line in iter(from_sdk.readline, b""):
                sdk_spoke.set()
                drop, contradicted = answers.settle(line) if answers is not None else (False, None)
                if contradicted is not None:
                    print(
                        f"reme-mcp: the early answer to request {contradicted} differs from the SDK's", file=sys.stderr
                    )
                if not drop:
                    send(line)
        sys.stderr.flush()
        os._exit(exit_code[0])

    _start(sdk, "reme-sdk")
    _start(pump, "reme-pump")
    with os.fdopen(sdk_in_w, "wb") as to_sdk:
        for line in iter(wire_in.readline, b""):
            refused = wire.refusal(line)
            if refused is not None:
                send(refused)
                continue
            reply = answers.reply(line) if answers is not None and not sdk_spoke.is_set() else None
            searched = early.reply(line, answered=reply is not None) if early is not None else None
            if reply is not None or searched is not None:
                send(reply or searched or b"")
            if searched is not None:
                continue  # answered in full: the SDK would only run the search a second time
            try:
                to_sdk.write(line)
                to_sdk.flush()
            except (BrokenPipeError, ValueError):
                break
    threading.Event().wait()  # the pump ends the process when the SDK has written its last line


def _start(target: Callable[[], Any], name: str) -> None:
    threading.Thread(target=target, name=name, daemon=True).start()
