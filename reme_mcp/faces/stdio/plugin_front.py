"""The plugin's first start: the handshake answered at once while the environment is built.

bin/reme-mcp runs this with the python3 on PATH when the environment it starts the server
from is not built yet (the first start after installing or updating the plugin). Building
takes seconds to minutes; a host gives a server about a second to answer its handshake
and then runs the session without the tools that were late, but it waits far longer for
a tool call. So this process:

- builds the environment, or waits for the build another start runs
  (reme_mcp/faces/stdio/plugin_build.py), in a thread;
- answers `initialize`, `tools/list` and `server/discover` from the answers recorded in
  the package (reme_mcp/faces/stdio/handshake.json), `ping`, and the acknowledgement that opens a
  `subscriptions/listen` stream, as the SDK does; and keeps every client line;
- once the environment is ready, starts the real server, replays every kept line (the
  handshake included, so the server's state is that of a normal connection; its own
  answers to requests answered here are dropped), then copies lines both ways until the
  server exits;
- if the build fails, answers each request that needs the server with a JSON-RPC error
  carrying the build's one-line reason, which says what to do.

It runs on any Python from 3.10 with the standard library alone: it imports only the
package's handshake, wire and plugin_* modules and storage.os_lock, which import nothing else. When the
environment asked for is the semantic extra's (the plugin's default), plugin_extra.py
chooses which environment serves. stdout carries the protocol only; this process's own
messages are single lines on stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import IO, Any

from reme_mcp import process
from reme_mcp._version import __version__
from reme_mcp.faces.stdio import handshake, plugin_build, plugin_extra, wire

# JSON-RPC's range for errors the implementation defines.
SERVER_ERROR = -32000
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
LIST_CHANGED = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")


def recorded_answers(prompts: bool = True) -> handshake.EarlyAnswers | None:
    """The handshake answers shipped in the package, when recorded for this reme-mcp version.

    Unlike handshake.load(), the SDK's version is not compared: the SDK is not installed
    where this runs. Should the SDK the build installs answer differently, the server's
    own answer is still dropped and the difference reported on stderr (EarlyAnswers.settle).
    """
    try:
        recorded = json.loads(handshake.ANSWERS_FILE.read_text(encoding="utf-8"))
        if recorded["reme_mcp"] != __version__:
            return None
        key = handshake.ANSWERS_KEY if prompts else handshake.ANSWERS_WITHOUT_PROMPTS_KEY
        return handshake.EarlyAnswers(dict(recorded[key]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def error_line(request_id: Any, message: str) -> bytes:
    reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": SERVER_ERROR, "message": message}}
    return json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"


def _message(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _request_key(message: dict[str, Any]) -> str | None:
    """A request's id as JSON (the key EarlyAnswers uses), or None for anything else."""
    if not isinstance(message.get("method"), str) or "id" not in message:
        return None
    return json.dumps(message["id"], ensure_ascii=False)


class Front:
    """One client connection, answered here until the real server takes it over."""

    def __init__(self, answers: handshake.EarlyAnswers | None, wire_out: IO[bytes], server_args: list[str]) -> None:
        self.answers = answers
        self.wire_out = wire_out
        self.server_args = server_args
        # Guards the state below, and keeps client lines in order on their way to the server.
        self.lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.kept: list[bytes] = []
        # Requests only the server can answer: id as JSON -> the id itself.
        self.waiting: dict[str, Any] = {}
        self.server: subprocess.Popen[bytes] | None = None
        self.failure: str | None = None
        # `subscriptions/listen` streams acknowledged here, by id as JSON.
        self.acknowledged: set[str] = set()
        self.client_gone = False

    def send(self, data: bytes) -> None:
        with self.write_lock:
            try:
                self.wire_out.write(data)
                self.wire_out.flush()
            except (OSError, ValueError):  # the client closed our stdout: nobody is left to answer
                self.stop(0)

    def from_client(self, line: bytes) -> None:
        with self.lock:
            if self.server is not None:
                self._track(_message(line))
                self._to_server(line)
                return
            refused = wire.refusal(line)
            if refused is not None:
                self.send(refused)
                return
            message = _message(line)
            key = _request_key(message)
            if key is not None and self._legacy_ping(message):
                self.send(f'{{"jsonrpc":"2.0","id":{key},"result":{{}}}}\n'.encode())
                return
            reply = self._early(message, line)
            acknowledged = self._acknowledge(message) if reply is None else None
            if reply is not None:
                self.send(reply)
            elif acknowledged is not None:
                # The stream stays open (the server answers it only when it ends), so nobody waits on it.
                self.send(acknowledged)
            elif key is not None and self.failure is not None:
                self.send(error_line(message["id"], self.failure))
            else:
                self._track(message)
            if self.failure is None:
                self.kept.append(line)

    def _track(self, message: dict[str, Any]) -> None:
        """A request the server must answer before this process may let it go.

        The SDK drops the requests still running when its stdin closes, so when the client
        closes first, the server's stdin stays open until these are answered. A listen
        stream is answered only when it ends, so it is not waited for.
        """
        key = _request_key(message)
        if key is not None and message["method"] != "subscriptions/listen":
            self.waiting[key] = message["id"]

    def _legacy_ping(self, message: dict[str, Any]) -> bool:
        """A ping the SDK answers with an empty result: before 2026-07-28, which removed ping."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        modern = self.answers is not None and self.answers.era == "modern"
        enveloped = isinstance(meta, dict) and handshake.PROTOCOL_VERSION_KEY in meta
        return message["method"] == "ping" and not modern and not enveloped and params in (None, {})

    def _early(self, message: dict[str, Any], line: bytes) -> bytes | None:
        if self.answers is None:
            return None
        reply = self.answers.reply(line)
        params = message.get("params")
        if reply is None and message.get("method") == "initialize" and isinstance(params, dict):
            # A version the recorded answers lack: the SDK answers with the newest it knows,
            # which is the newest recorded, so that is the answer.
            versions = sorted(key.split("@", 1)[1] for key in self.answers.bodies if key.startswith("initialize@"))
            if versions and isinstance(params.get("protocolVersion"), str):
                newest = {**message, "params": {**params, "protocolVersion": versions[-1]}}
                reply = self.answers.reply(json.dumps(newest).encode())
        return reply

    def _acknowledge(self, message: dict[str, Any]) -> bytes | None:
        """The first frame of a `subscriptions/listen` stream (2026-07-28), as the SDK sends it.

        A client may wait for it before it lists the tools (Claude Code does), so it cannot
        wait for the build. The SDK honours every kind asked for, and drops the rest.
        """
        params = message.get("params")
        if message.get("method") != "subscriptions/listen" or not isinstance(params, dict):
            return None
        meta, asked, request_id = params.get("_meta"), params.get("notifications"), message.get("id")
        if not isinstance(meta, dict) or handshake.PROTOCOL_VERSION_KEY not in meta or not isinstance(asked, dict):
            return None
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        honored: dict[str, Any] = {kind: True for kind in LIST_CHANGED if asked.get(kind)}
        if asked.get("resourceSubscriptions"):
            honored["resourceSubscriptions"] = asked["resourceSubscriptions"]
        self.acknowledged.add(json.dumps(request_id))
        body = {"_meta": {SUBSCRIPTION_ID_KEY: request_id}, "notifications": honored}
        notification = {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": body}
        return json.dumps(notification, ensure_ascii=False).encode("utf-8") + b"\n"

    def _duplicate_ack(self, line: bytes) -> bool:
        """Whether this server line acknowledges a stream already acknowledged here."""
        if not self.acknowledged or ACKNOWLEDGED.encode() not in line:
            return False
        params = _message(line).get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        stream = json.dumps(meta.get(SUBSCRIPTION_ID_KEY)) if isinstance(meta, dict) else None
        if stream not in self.acknowledged:
            return False
        self.acknowledged.discard(stream)
        return True

    def _to_server(self, line: bytes) -> None:
        assert self.server is not None and self.server.stdin is not None
        try:
            self.server.stdin.write(line)
            self.server.stdin.flush()
        except (OSError, ValueError):
            pass  # the server has gone; its pump ends this process

    def hand_over(self, venv: Path, env: dict[str, str] | None = None) -> None:
        """Start the real server from this environment and give it the connection."""
        argv = [str(venv / "bin" / "python"), "-m", "reme_mcp", *self.server_args]
        try:
            server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError as exc:
            self.fail(f"reme-mcp: the plugin's server could not be started ({exc}); reinstall the plugin")
            return
        threading.Thread(target=self._pump, args=(server,), name="reme-pump", daemon=True).start()
        with self.lock:
            self.server = server
            for line in self.kept:
                self._to_server(line)
            self.kept.clear()
            if self.client_gone and not self.waiting:
                self._release(server)

    def _pump(self, server: subprocess.Popen[bytes]) -> None:
        assert server.stdout is not None
        for line in iter(server.stdout.readline, b""):
            drop, contradicted = self.answers.settle(line) if self.answers is not None else (False, None)
            if contradicted is not None:
                print(
                    f"reme-mcp: the early answer to request {contradicted} differs from the server's", file=sys.stderr
                )
            # Without the lock: a writer holding it may be blocked on the server, which may be
            # blocked on this very read; one dict operation is atomic anyway.
            if self.waiting:
                self.waiting.pop(json.dumps(_message(line).get("id"), ensure_ascii=False), None)
                if self.client_gone and not self.waiting:
                    self._release(server)
            if not drop and not self._duplicate_ack(line):
                self.send(line)
        code = server.wait()
        with self.lock:
            for request_id in self.waiting.values():
                message = (
                    f"reme-mcp: the plugin's server exited (code {code}) before answering; its messages are on stderr"
                )
                self.send(error_line(request_id, message))
        self.stop(code)

    def fail(self, reason: str) -> None:
        """The server cannot start: requests get the reason, the handshake is still answered."""
        print(reason, file=sys.stderr)
        with self.lock:
            self.failure = reason
            for request_id in self.waiting.values():
                self.send(error_line(request_id, reason))
            self.waiting.clear()
            self.kept.clear()
            if self.client_gone:
                self.stop(1)

    def client_closed(self) -> None:
        """stdin ended: finish what the client still waits for, then end."""
        with self.lock:
            self.client_gone = True
            if self.server is not None:
                if not self.waiting:
                    self._release(self.server)
            elif self.failure is not None:
                self.stop(1)
            elif not self.waiting:
                self.stop(0)

    @staticmethod
    def _release(server: subprocess.Popen[bytes]) -> None:
        """Close the server's stdin: it ends, and then its pump ends this process."""
        if server.stdin is not None and not server.stdin.closed:
            with contextlib.suppress(OSError):
                server.stdin.close()

    def stop(self, code: int) -> None:
        # A signal handler may run this while its own thread was writing to stderr: the flush
        # would then raise (a reentrant call), and the process must end all the same.
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)

    def end_on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.server is not None:
            self.server.send_signal(signum)
        self.stop(128 + signum)


def _await_build(front: Front, root: Path, data: str, venv: Path, started: threading.Event) -> None:
    failure = plugin_build.build(root, data, venv, started)
    if failure is None:
        front.hand_over(venv)
    else:
        front.fail(failure)


# The longest a signalled first start waits for its build to be started before it ends.
BUILD_START_WAIT = 10.0
SIGNAL_LOOK = 0.2  # seconds between the main thread's looks for a signal taken by another thread


def main(argv: list[str]) -> None:
    """`main([plugin root, data folder, environment folder, plain environment folder or "",
    *server arguments])`, from bin/reme-mcp. The plain folder is given when the environment
    asked for is the one with the semantic extra (unless REME_SEMANTIC is off)."""
    root, data, venv, server_args = Path(argv[0]), argv[1], Path(argv[2]), argv[4:]
    plain = Path(argv[3]) if argv[3] else None
    answers = recorded_answers(prompts="--no-prompts" not in server_args)
    if answers is None:
        print(
            "reme-mcp: the plugin's recorded handshake is missing or stale; the host waits for the build",
            file=sys.stderr,
        )
    front = Front(answers, sys.stdout.buffer, server_args)
    started = threading.Event()

    def end(signum: int, frame: FrameType | None) -> None:
        # A host that gives up right after the handshake must still leave the build running:
        # the build is started on its own first (it survives this process), then this ends.
        started.wait(BUILD_START_WAIT)
        front.end_on_signal(signum, frame)

    process.on_end_signals(end)
    if plain is None:
        build = threading.Thread(
            target=_await_build, args=(front, root, data, venv, started), name="reme-build", daemon=True
        )
    else:
        build = threading.Thread(
            target=plugin_extra.serve, args=(front, root, data, venv, plain, started), name="reme-build", daemon=True
        )
    build.start()
    threading.Thread(target=_read_client, args=(front,), name="reme-client", daemon=True).start()
    # Python runs a signal's handler in the main thread, between two of its bytecodes, and the
    # kernel hands a signal to any thread: one taken by a thread blocked in a read used to wait
    # for the host's next line, so a host that ended a first start waited on it. The main thread
    # only sleeps, so a handler runs within SIGNAL_LOOK; the pump, or a failed build, ends the
    # process.
    while True:
        time.sleep(SIGNAL_LOOK)


def _read_client(front: Front) -> None:
    for line in iter(sys.stdin.buffer.readline, b""):
        front.from_client(line)
    front.client_closed()
