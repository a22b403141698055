"""The scripted model every host test uses, and the HTTP server that speaks for it on 127.0.0.1.

The script is the acceptance test of every host: in one session the user says
REMEMBER_PROMPT and the model calls reme's `remember`; in a new session the user asks
RECALL_PROMPT and the model calls reme's `search`. Each API module (Anthropic Messages,
OpenAI Responses, OpenAI chat completions) only translates between its wire format and
`Script.next_step`; the server records every request so that a test can assert what the
host really offered the model and what the tools really answered.

A test that needs other calls writes them into the user's words with `planned_prompt`: the
model then calls exactly those tools with exactly those arguments, one after the other, and
`planned_results` gives back what each call answered, as the host sent it to the model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PASSPHRASE = "蓝鲸-731"
REMEMBER_PROMPT = "请记住，这个项目的测试口令是蓝鲸-731。"
RECALL_PROMPT = "这个项目的测试口令是什么？"
REME_TOOLS = ("search", "read", "traverse", "daily_list", "remember")
SEPARATORS = ("__", "_", ".", "-", "/", ":")
PLAN_MARKER = "reme-test-plan"


def reme_tools(names: list[str]) -> dict[str, str]:
    """The reme tools among the names a host offered, by short name: `mcp__reme__search`,
    `mcp__plugin_reme-mcp_reme__search`, `reme_search`, `reme__search` all map to `search`."""
    found: dict[str, str] = {}
    for name in names:
        if "reme" not in name.lower():
            continue
        for short in REME_TOOLS:
            matches = name == short or any(name.endswith(sep + short) for sep in SEPARATORS)
            # Where two names end alike (a wrapper beside the tool itself), the shorter is the tool.
            if matches and (short not in found or len(found[short]) > len(name)):
                found[short] = name
    return found


@dataclass
class Call:
    """The model asks the host to run one tool."""

    tool: str
    arguments: dict[str, Any]
    call_id: str


@dataclass
class Say:
    """The model answers the user in text and ends its turn."""

    text: str


@dataclass
class Request:
    """One request a host sent to the model, as the script understood it."""

    offered: list[str]
    user_text: str
    tool_results: list[str]


@dataclass
class Script:
    """Decides the model's next step from the user's words and the tool results so far."""

    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_step(self, offered: list[str], user_text: str, tool_results: list[str]) -> Call | Say:
        with self.lock:
            self.requests.append(Request(list(offered), user_text, list(tool_results)))
            number = len(self.requests)
        plan = planned_calls(user_text)
        if plan is not None:
            return _planned_step(plan, offered, tool_results, number)
        if tool_results:
            return Say("好的。" + tool_results[-1][:200])
        tools = reme_tools(offered)
        if "请记住" in user_text and "remember" in tools:
            content = REMEMBER_PROMPT.removeprefix("请记住，")
            return Call(tools["remember"], {"content": content, "name": "test-passphrase"}, f"call_{number}")
        if "是什么" in user_text and "search" in tools:
            return Call(tools["search"], {"query": RECALL_PROMPT}, f"call_{number}")
        return Say("OK.")

    def session_requests(self, marker: str) -> list[Request]:
        """The requests of the session whose user said `marker`, in order."""
        with self.lock:
            return [request for request in self.requests if marker in request.user_text]


def planned_prompt(tag: str, *calls: tuple[str, dict[str, Any]]) -> str:
    """The user's words of a session whose model calls `calls` (short tool name, arguments) in
    order; `tag` names the session among the others of a test (planned_results)."""
    plan = [{"tool": tool, "arguments": arguments} for tool, arguments in calls]
    return f"{PLAN_MARKER} {tag}: {json.dumps(plan, ensure_ascii=False)}"


def planned_calls(user_text: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls a planned prompt asks for, or None for any other words."""
    at = user_text.find(PLAN_MARKER + " ")
    if at < 0:
        return None
    start = user_text.find("[", at)
    try:
        # raw_decode: a host may add its own text after the person's words in the same turn.
        plan, _ = json.JSONDecoder().raw_decode(user_text, start)
    except ValueError:
        return None
    return [(str(item["tool"]), dict(item["arguments"])) for item in plan]


def _planned_step(
    plan: list[tuple[str, dict[str, Any]]], offered: list[str], tool_results: list[str], number: int
) -> Call | Say:
    # Each answered call adds one result, so their count says which call comes next.
    if len(tool_results) >= len(plan):
        return Say("Done.")
    tool, arguments = plan[len(tool_results)]
    tools = reme_tools(offered)
    if tool not in tools:
        return Say(f"The reme tool {tool!r} was not offered: {offered}")
    return Call(tools[tool], arguments, f"call_{number}")


def planned_results(script: Script, tag: str) -> list[str]:
    """What each planned call of the session `tag` answered, as the host sent it to the model
    (its last request carries every result of the turn); fails when a call never answered."""
    requests = script.session_requests(f"{PLAN_MARKER} {tag}: ")
    assert requests, f"the host never sent the model the words of session {tag!r}"
    plan = planned_calls(requests[-1].user_text) or []
    results = requests[-1].tool_results
    assert len(results) == len(plan), f"session {tag!r}: {len(plan)} calls planned, {len(results)} answered: {results}"
    return results


def text_of(content: Any) -> str:
    """The plain text of a message's content in any of the three APIs (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                value = part.get("text", part.get("content", part.get("output", "")))
                parts.append(text_of(value))
            else:
                parts.append(str(part))
        return "\n".join(parts)
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False)


class ModelHandler(BaseHTTPRequestHandler):
    """Base of each API's handler: JSON in, JSON or server-sent events out; `self.server.script`."""

    server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest's output clean
        return

    def read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.raw.append((self.path, body))
        return json.loads(body or b"{}")

    def send_json(self, payload: Any, status: int = 200) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def start_events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_event(self, data: Any, event: str | None = None) -> None:
        chunk = (f"event: {event}\n" if event else "") + f"data: {json.dumps(data, ensure_ascii=False)}\n\n"
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    def send_raw_event(self, line: str) -> None:
        self.wfile.write(f"data: {line}\n\n".encode())
        self.wfile.flush()


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: type[ModelHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.script = Script()
        self.raw: list[tuple[str, bytes]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def serve_model(handler: type[ModelHandler]) -> Iterator[ModelServer]:
    """A fake model on 127.0.0.1 for the length of the block."""
    server = ModelServer(handler)
    thread = threading.Thread(target=server.serve_forever, name="fake-model", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
