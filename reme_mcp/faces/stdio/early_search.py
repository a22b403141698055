"""A connection's first `search`, answered by the stdio front while the SDK is still loading.

Importing the SDK takes about a second, the memory operations a third of one, and a search
on a synced index a few milliseconds; hosts and benchmarks alike call `search` first. So
when the first tools/call is a `search` with plainly valid arguments, the front answers it
from the shared Memory, in exactly the bytes the SDK writes: `handshake.json` holds the
SDK's answer to a search per protocol version with the text and the structured result cut
out (`cut_frame`), and the front fills them in with pydantic's serializer, the one the SDK
writes with. A search answered here is not passed on: the SDK never sees it, so it runs
once. Anything unusual is left to the SDK.

On two cores the SDK's import would take the GIL from the search half the time, so the SDK
waits its turn (`wait_for_sdk_turn`): it loads once a request needs it, once the early
search is answered, or after a short quiet spell with no line from the client.

Imported before the SDK: nothing heavy at the top.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from typing import Any

from reme_mcp.faces.deferred_memories import DeferredMemories
from reme_mcp.faces.stdio.handshake import SEARCH_FRAME, EarlyAnswers, envelope_version
from reme_mcp.ops.limits import SCOPES, SEARCH_LIMIT, SEARCH_MAX_CHARS, Limit

FRAME_PREFIX = f"{SEARCH_FRAME}@"
# Where a frame takes the answer's text and its structured result (NUL never appears raw in JSON).
TEXT = "\x00text\x00"
STRUCTURED = "\x00structured\x00"
# How long the client may be silent before the SDK loads anyway: clients that call at once
# do so within milliseconds of the tools/list answer; hosts take seconds.
QUIET = 0.1

_INTS: dict[str, Limit] = {"limit": SEARCH_LIMIT, "max_chars": SEARCH_MAX_CHARS}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_MAX_ID = 2**53


def cut_frame(body: str, text: str, structured: dict[str, Any]) -> str:
    """A recorded answer body with its text and structured result replaced by the markers."""
    from pydantic_core import to_json

    for value, marker in ((text, TEXT), (structured, STRUCTURED)):
        serialized = to_json(value).decode()
        if body.count(serialized) > 1 or (marker == TEXT and serialized not in body):
            raise ValueError(f"cannot cut {marker!r} out of the recorded search answer: {body}")
        body = body.replace(serialized, marker)
    return body


def plain_arguments(arguments: Any) -> dict[str, Any] | None:
    """The search arguments when the SDK takes them as they are (no coercion, no error); else None."""
    if not isinstance(arguments, dict) or not isinstance(arguments.get("query"), str):
        return None
    for key, value in arguments.items():
        if key in _INTS:
            if type(value) is not int or not _INTS[key].low <= value <= _INTS[key].high:
                return None
        elif key in ("start_date", "end_date"):
            if value is not None and not (isinstance(value, str) and _DATE.fullmatch(value)):
                return None
        elif key == "path_prefix":
            if value is not None and not (isinstance(value, str) and _kept_as_string(value)):
                return None
        elif key == "scope":
            if value not in SCOPES:
                return None
        elif key != "query":
            return None
    return dict(arguments)


def _kept_as_string(value: str) -> bool:
    """Whether the SDK's JSON pre-parsing of a non-`str` field leaves this string alone."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return True
    return isinstance(parsed, str | int | float)


class EarlySearch:
    """Answers the first tools/call of one connection when it is a plain `search`, before the SDK loads."""

    def __init__(self, answers: EarlyAnswers, memory: DeferredMemories) -> None:
        self.answers = answers
        self.memory = memory
        self._lock = threading.Lock()  # held for the early search; the SDK starts loading under it
        self._sdk_loading = False
        self._tried = False  # only the first tools/call is a candidate
        self._sdk_wanted = threading.Event()
        self._last_line = time.monotonic()
        self._first_line = threading.Event()
        self._first_answered = False
        # From the client's initialize: a client that declares roots names its project through
        # them, which only the SDK can ask for; so its first search is the SDK's to answer.
        self._roots_declared = False
        self._client: str | None = None

    # ---- the SDK thread ------------------------------------------------------------------

    def prepare(self) -> None:
        """Import the memory operations and create the Memory (the early search and every tool need it),
        then, unless a call came meanwhile, open and check the index (DeferredMemories.open_index).

        Only once the client's first line was answered early: a client the front cannot
        answer (an unrecorded protocol version) waits for the SDK, which then loads at once.
        """
        if not self._first_line.wait(QUIET) or not self._first_answered:
            return
        with contextlib.suppress(Exception):  # the first real call reports any problem properly
            self.memory.memories()
            if not self._tried:  # no call yet: open and check the index while the client is busy elsewhere
                self.memory.open_index()

    def wait_for_sdk_turn(self) -> None:
        """Until a request needs the SDK, or the client has been quiet; then no early search starts any more."""
        while not self._sdk_wanted.is_set():
            quiet_for = time.monotonic() - self._last_line
            if quiet_for >= QUIET:
                break
            self._sdk_wanted.wait(QUIET - quiet_for)
        with self._lock:
            self._sdk_loading = True

    # ---- the front's reading thread ------------------------------------------------------

    def reply(self, line: bytes, answered: bool) -> bytes | None:
        """For a client line (`answered` if a handshake answer was sent): the early answer to send, or None."""
        self._last_line = time.monotonic()
        if not self._first_line.is_set():
            self._first_answered = answered
            self._first_line.set()
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "initialize":
            self._note_client(message.get("params"))
        if not isinstance(message, dict) or "id" not in message or "method" not in message or answered:
            return None
        early = None
        if message["method"] == "tools/call" and not self._tried:
            self._tried = True
            with self._lock:
                if not self._sdk_loading:
                    early = self._answer(message)
        # Answered or not, the SDK is wanted now: for this request, or for what comes after the search.
        self._sdk_wanted.set()
        return early

    def _note_client(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        capabilities = params.get("capabilities")
        self._roots_declared = isinstance(capabilities, dict) and capabilities.get("roots") is not None
        info = params.get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        self._client = name if isinstance(name, str) else None

    def _answer(self, message: dict[str, Any]) -> bytes | None:
        if self._roots_declared and self.memory.settings.per_project:
            return None
        request_id, params = message["id"], message.get("params")
        if isinstance(request_id, bool) or not (isinstance(request_id, str) or abs(request_id) < _MAX_ID):
            return None
        if message.get("jsonrpc") != "2.0" or not isinstance(params, dict) or params.get("name") != "search":
            return None
        if not set(params) <= {"name", "arguments", "_meta"}:
            return None
        frame = self.answers.bodies.get(f"{FRAME_PREFIX}{self._version(params)}")
        arguments = plain_arguments(params.get("arguments"))
        if frame is None or arguments is None:
            return None
        try:
            return self._render(request_id, frame, arguments)
        except Exception:  # a ReMeError, a bad file: the SDK answers, with its own words
            return None

    def _version(self, params: dict[str, Any]) -> str | None:
        """The protocol version this request is answered in, when the SDK is sure to agree."""
        meta = params.get("_meta")
        if self.answers.era == "modern":
            return envelope_version(meta, plain=True)
        return self.answers.negotiated if self.answers.era == "legacy" and meta is None else None

    def _render(self, request_id: int | str, frame: str, arguments: dict[str, Any]) -> bytes:
        from pydantic_core import to_json

        result = self.memory.session(None, self._client).search(**arguments)
        # As server.py builds it: the rendered text, and the model dumped for JSON.
        text, structured = to_json(result.render()).decode(), to_json(result.model_dump(mode="json")).decode()
        # The structured JSON holds no raw NUL, so the text's marker stays the only one.
        head, _, tail = frame.replace(STRUCTURED, structured).partition(TEXT)
        body = head + text + tail
        answer = f'{{"jsonrpc":"2.0","id":{to_json(request_id).decode()},{body}\n'.encode()
        return answer


def load(answers: EarlyAnswers | None, memory: DeferredMemories) -> EarlySearch | None:
    """The early search over these recorded answers, when they hold the search frames."""
    if answers is None or not any(key.startswith(FRAME_PREFIX) for key in answers.bodies):
        return None
    return EarlySearch(answers, memory)
