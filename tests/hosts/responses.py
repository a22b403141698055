"""A fake OpenAI Responses API on 127.0.0.1, driven by the acceptance Script.

Codex speaks this API to a custom model provider (`wire_api = "responses"`). The
handler answers `POST /v1/responses` (streamed as server-sent events, as Codex always
asks) and `GET /v1/models`; it reads the offered tools, the last user message and the
`function_call_output` items since then, and lets `Script.next_step` choose between
one function call and a final text answer.

Codex groups an MCP server's tools in a namespace (`{"type": "namespace", "name":
"mcp__reme", "tools": [...]}`); the script sees them as `mcp__reme__search`, ..., and a
call goes back as the tool's own name with its namespace, the way the real API answers.

    with serve_responses() as server:
        base_url = server.url + "/v1"
        ...  # run codex exec against base_url
        first = server.script.session_requests(REMEMBER_PROMPT)[0]
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any

from tests.hosts.script import Call, ModelHandler, ModelServer, Say, serve_model, text_of

MODEL_ID = "reme-scripted"
"""The model the script speaks for; requests for any other model get a short text."""


def offered_tools(body: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    """The tools a request offers, by the name the script sees: `(namespace, name)` each.

    A plain function is offered by its own name; a namespace's function as
    `<namespace>__<name>` (Codex already names its MCP namespaces `mcp__<server>`)."""
    offered: dict[str, tuple[str | None, str]] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    offered[f"{tool['name']}__{inner['name']}"] = (tool["name"], inner["name"])
        elif isinstance(tool.get("name"), str):
            offered[tool["name"]] = (None, tool["name"])
    return offered


def _output_text(output: Any) -> str:
    if isinstance(output, dict) and "content" in output:
        return text_of(output["content"])
    return text_of(output)


def conversation(items: list[Any]) -> tuple[str, list[str]]:
    """The text of the last user message, and the function results that came after it.

    Codex sends its environment context and instructions as earlier user messages; the
    person's words are the last one."""
    user_text = ""
    results: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            user_text = text_of(item.get("content"))
            results = []
        elif kind == "function_call_output":
            results.append(_output_text(item.get("output")))
    return user_text, results


_USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 15,
}


class ResponsesHandler(ModelHandler):
    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "reme"}]})
        else:
            self.send_json({"error": {"message": f"no route {self.path}"}}, status=404)

    def do_POST(self) -> None:
        body = self.read_json()
        if not self.path.split("?")[0].rstrip("/").endswith("/responses") or not isinstance(body, dict):
            self.send_json({"error": {"message": f"no route {self.path}"}}, status=404)
            return
        model = str(body.get("model") or MODEL_ID)
        offered = offered_tools(body)
        step: Call | Say
        if model != MODEL_ID:
            step = Say("Project passphrase")
        else:
            items = body.get("input")
            user_text, results = conversation(items if isinstance(items, list) else [])
            step = self.server.script.next_step(list(offered), user_text, results)
        ident = f"resp_{len(self.server.raw)}"
        item = _item(step, offered, ident)
        response = {"id": ident, "object": "response", "model": model, "status": "in_progress", "output": []}
        self.start_events()
        self._event("response.created", {"response": response})
        self._event("response.output_item.added", {"output_index": 0, "item": {**item, "status": "in_progress"}})
        if isinstance(step, Say):
            delta = {"output_index": 0, "item_id": item["id"], "content_index": 0, "delta": step.text}
            self._event("response.output_text.delta", delta)
        self._event("response.output_item.done", {"output_index": 0, "item": item})
        done = {**response, "status": "completed", "output": [item], "usage": _USAGE}
        self._event("response.completed", {"response": done})

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        self.send_event({"type": kind, **data}, event=kind)


def _item(step: Call | Say, offered: dict[str, tuple[str | None, str]], ident: str) -> dict[str, Any]:
    if isinstance(step, Say):
        content = [{"type": "output_text", "text": step.text, "annotations": []}]
        return {"type": "message", "id": f"msg_{ident}", "role": "assistant", "status": "completed", "content": content}
    namespace, name = offered.get(step.tool, (None, step.tool))
    call: dict[str, Any] = {
        "type": "function_call",
        "id": f"fc_{ident}",
        "call_id": step.call_id,
        "name": name,
        "arguments": json.dumps(step.arguments, ensure_ascii=False),
        "status": "completed",
    }
    if namespace is not None:
        call["namespace"] = namespace
    return call


def request_bodies(server: ModelServer) -> list[dict[str, Any]]:
    """Every Responses request body the fake received, in order."""
    bodies = []
    for path, raw in list(server.raw):
        if path.split("?")[0].rstrip("/").endswith("/responses"):
            body = json.loads(raw or b"{}")
            if isinstance(body, dict):
                bodies.append(body)
    return bodies


def serve_responses() -> AbstractContextManager[ModelServer]:
    """A fake Responses model on 127.0.0.1; `server.url + "/v1"` is the provider's base URL."""
    return serve_model(ResponsesHandler)
