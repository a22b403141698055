"""A fake Anthropic Messages API on 127.0.0.1, driven by the acceptance Script.

Claude Code speaks this API to `ANTHROPIC_BASE_URL`. The handler answers
`POST /v1/messages` (streamed as server-sent events when the request says
`"stream": true`, one JSON message otherwise) and `POST /v1/messages/count_tokens`;
it reads the offered tool names, the last user turn and the `tool_result` blocks since
then, and lets `Script.next_step` choose between one `tool_use` and a final text answer.

Requests for any model other than MODEL_ID (Claude Code's side requests on its small
model: titles, summaries, quota probes) get a short text and stay out of the script, so
that a session's first scripted request is the agent's own.

    with serve_anthropic() as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        ...  # run claude -p --model MODEL_ID
        first = server.script.session_requests(REMEMBER_PROMPT)[0]
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any

from tests.hosts.script import Call, ModelHandler, ModelServer, Say, serve_model, text_of

MODEL_ID = "reme-scripted"
"""The model the script speaks for (pass it as `--model`)."""

AUX_MODEL = "reme-aux"
"""The model for side requests (point ANTHROPIC_SMALL_FAST_MODEL and the haiku default at it)."""


def offered_tools(body: dict[str, Any]) -> list[str]:
    """The names in a request's `tools` (`{"name", "description", "input_schema"}` each)."""
    return [tool["name"] for tool in body.get("tools") or [] if isinstance(tool, dict) and "name" in tool]


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def conversation(messages: list[Any]) -> tuple[str, list[str]]:
    """The text of the last user turn, and the tool results that came after it.

    A user message that carries `tool_result` blocks answers the model's tool call; one
    without is a new turn from the person (Claude Code may add reminder text blocks to
    either, so the whole text of a turn is kept for the script to find its marker in)."""
    user_text = ""
    results: list[str] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        blocks = _blocks(message.get("content"))
        answers = [block for block in blocks if block.get("type") == "tool_result"]
        if answers:
            results.extend(text_of(block.get("content")) for block in answers)
        else:
            user_text = "\n".join(text_of(block.get("text", "")) for block in blocks)
            results = []
    return user_text, results


_USAGE = {"input_tokens": 10, "output_tokens": 5}


def _content(step: Call | Say) -> dict[str, Any]:
    if isinstance(step, Call):
        return {"type": "tool_use", "id": step.call_id, "name": step.tool, "input": step.arguments}
    return {"type": "text", "text": step.text}


class AnthropicHandler(ModelHandler):
    def do_POST(self) -> None:
        body = self.read_json()
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/messages/count_tokens"):
            self.send_json({"input_tokens": 10})
            return
        if not path.endswith("/v1/messages") or not isinstance(body, dict):
            self.send_json({"type": "error", "error": {"type": "not_found_error", "message": self.path}}, 404)
            return
        model = str(body.get("model") or MODEL_ID)
        step: Call | Say
        if model != MODEL_ID:
            step = Say("Project passphrase")
        else:
            user_text, results = conversation(body.get("messages") or [])
            step = self.server.script.next_step(offered_tools(body), user_text, results)
        ident = f"msg_{len(self.server.raw)}"
        stop = "tool_use" if isinstance(step, Call) else "end_turn"
        message: dict[str, Any] = {"id": ident, "type": "message", "role": "assistant", "model": model}
        if not body.get("stream"):
            self.send_json({**message, "content": [_content(step)], "stop_reason": stop, "usage": _USAGE})
            return
        self.start_events()
        start = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": _USAGE}
        self._event("message_start", {"message": start})
        if isinstance(step, Call):
            head = {"type": "tool_use", "id": step.call_id, "name": step.tool, "input": {}}
            self._event("content_block_start", {"index": 0, "content_block": head})
            arguments = json.dumps(step.arguments, ensure_ascii=False)
            # Arguments arrive in pieces, as from a real model; the host must join them.
            middle = len(arguments) // 2
            for piece in (arguments[:middle], arguments[middle:]):
                delta = {"type": "input_json_delta", "partial_json": piece}
                self._event("content_block_delta", {"index": 0, "delta": delta})
        else:
            self._event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
            self._event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": step.text}})
        self._event("content_block_stop", {"index": 0})
        ending: dict[str, Any] = {"stop_reason": stop, "stop_sequence": None}
        self._event("message_delta", {"delta": ending, "usage": {"output_tokens": 5}})
        self._event("message_stop", {})

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        self.send_event({"type": kind, **data}, event=kind)


def request_bodies(server: ModelServer) -> list[dict[str, Any]]:
    """Every Messages request body the fake received, in order (side requests too)."""
    bodies = []
    for path, raw in list(server.raw):
        if path.split("?")[0].rstrip("/").endswith("/v1/messages"):
            body = json.loads(raw or b"{}")
            if isinstance(body, dict):
                bodies.append(body)
    return bodies


def serve_anthropic() -> AbstractContextManager[ModelServer]:
    """A fake Anthropic Messages model on 127.0.0.1; `server.url` is ANTHROPIC_BASE_URL."""
    return serve_model(AnthropicHandler)
