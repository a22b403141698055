"""A fake OpenAI chat-completions API on 127.0.0.1, driven by the acceptance Script.

OpenCode, OpenClaw, Hermes and Pi all speak this API to a custom provider. The handler
answers `POST /v1/chat/completions` (streamed as server-sent events when the request
says `"stream": true`, one JSON object otherwise) and `GET /v1/models`; it reads the
offered tool names, the last user message and the tool results since then, and lets
`Script.next_step` choose between one tool call and a final text answer.

    with serve_chat_completions() as server:
        base_url = server.url + "/v1"
        ...  # run the host against base_url
        first = server.script.session_requests(REMEMBER_PROMPT)[0]
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager
from typing import Any

from tests.hosts.script import Call, ModelHandler, ModelServer, Say, serve_model, text_of

MODEL_ID = "reme-scripted"
"""The model the script speaks for; any id other than AUX_MODEL gets the script."""

AUX_MODEL = "reme-aux"
"""A model for a host's side requests (session titles, summaries): answered with a short
text and kept out of the script, so that a session's first request is the agent's own.
Point a host's "small model" setting at it."""


def offered_tools(body: dict[str, Any]) -> list[str]:
    """The function names in a request's `tools` (the newer `{"type": "function", "function": {...}}`
    form, or a bare `{"name": ...}`)."""
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = (function if isinstance(function, dict) else tool).get("name")
            if isinstance(name, str):
                names.append(name)
    return names


def conversation(messages: list[Any]) -> tuple[str, list[str]]:
    """The text of the last user message, and the tool results that came after it.

    A host may wrap the user's words (a date header, a system reminder); the whole text of
    the message is kept so the script can find its marker in it. A user message that follows
    another user message or a tool result is the host's own addition to the same turn
    (OpenClaw sends its runtime context that way), so its text is joined to the turn's and
    the tool results are kept.
    """
    user_text = ""
    results: list[str] = []
    previous = None
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user":
            text = text_of(message.get("content"))
            if previous in ("user", "tool"):
                user_text = f"{user_text}\n{text}"
            else:
                user_text, results = text, []
        elif role == "tool":
            results.append(text_of(message.get("content")))
        previous = role
    return user_text, results


class ChatCompletionsHandler(ModelHandler):
    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(
                {
                    "object": "list",
                    "data": [{"id": m, "object": "model", "owned_by": "reme"} for m in (MODEL_ID, AUX_MODEL)],
                }
            )
        else:
            self.send_json({"error": {"message": f"no route {self.path}"}}, status=404)

    def do_POST(self) -> None:
        body = self.read_json()
        if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
            self.send_json({"error": {"message": f"no route {self.path}"}}, status=404)
            return
        model = str(body.get("model") or MODEL_ID)
        step: Call | Say
        if model == AUX_MODEL:
            step = Say("Project passphrase")
        else:
            user_text, results = conversation(body.get("messages") or [])
            step = self.server.script.next_step(offered_tools(body), user_text, results)
        if body.get("stream"):
            self._stream(step, model, bool((body.get("stream_options") or {}).get("include_usage")))
        else:
            self.send_json(_completion(step, model))

    def _stream(self, step: Call | Say, model: str, include_usage: bool) -> None:
        ident = f"chatcmpl-{len(self.server.raw)}"
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [choice],
            }

        self.start_events()
        if isinstance(step, Call):
            self.send_event(chunk({"role": "assistant", "content": None}))
            head = {
                "index": 0,
                "id": step.call_id,
                "type": "function",
                "function": {"name": step.tool, "arguments": ""},
            }
            self.send_event(chunk({"tool_calls": [head]}))
            arguments = json.dumps(step.arguments, ensure_ascii=False)
            # Arguments arrive in pieces, as from a real model; hosts must join them.
            middle = len(arguments) // 2
            for piece in (arguments[:middle], arguments[middle:]):
                self.send_event(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
            self.send_event(chunk({}, "tool_calls"))
        else:
            self.send_event(chunk({"role": "assistant", "content": ""}))
            self.send_event(chunk({"content": step.text}))
            self.send_event(chunk({}, "stop"))
        if include_usage:
            self.send_event({**chunk({}), "choices": [], "usage": _USAGE})
        self.send_raw_event("[DONE]")


_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _completion(step: Call | Say, model: str) -> dict[str, Any]:
    if isinstance(step, Call):
        call = {
            "id": step.call_id,
            "type": "function",
            "function": {"name": step.tool, "arguments": json.dumps(step.arguments, ensure_ascii=False)},
        }
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": step.text}
        finish = "stop"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _USAGE,
    }


def request_bodies(server: ModelServer) -> list[dict[str, Any]]:
    """Every chat-completions request body the fake received, in order (auxiliary ones too)."""
    bodies = []
    for path, raw in list(server.raw):
        if path.rstrip("/").endswith("/chat/completions"):
            body = json.loads(raw or b"{}")
            if isinstance(body, dict):
                bodies.append(body)
    return bodies


def serve_chat_completions() -> AbstractContextManager[ModelServer]:
    """A fake chat-completions model on 127.0.0.1; `server.url + "/v1"` is the base URL."""
    return serve_model(ChatCompletionsHandler)
