"""Fake model endpoints for the agent CLIs: real HTTP servers on 127.0.0.1 speaking the streaming wire formats
Claude Code and Codex use, scripted reply by reply.

- :class:`AnthropicEndpoint`: ``POST /v1/messages`` (Claude Code sends ``?beta=true``), answered as server-sent
  events when the request says ``stream: true`` and as one JSON message otherwise.
- :class:`ResponsesEndpoint`: ``POST /v1/responses`` (Codex, through a custom provider), answered as
  server-sent events ``response.created``, ``response.output_item.done`` per item, ``response.completed``.

Both are the server of :mod:`tests.llm.fake_endpoint` with other answers. Each model request takes the next
entry of ``script``: ``Say(text)`` ends the turn with that text, ``Calls([(tool, json_arguments), ...])`` calls
tools of the discogym MCP server by their bare names (the endpoint namespaces them the way each CLI expects; a
name ``builtin:NAME`` calls the CLI's own tool NAME),
``Status(code)`` fails. When the script is over the endpoint says :data:`SCRIPT_OVER` and ends the turn. A test
whose CLIs run at once sets ``choose`` instead: it picks each reply from the request's body. Every request is
kept in ``requests``, so a test can see the prompt and the tools the CLI offered the model.
"""

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from tests.llm.fake_endpoint import (
    Calls,
    Delay,
    FakeEndpoint,
    Request,
    Say,
    Scripted,
    Status,
    anthropic_reply,
    send,
)

SCRIPT_OVER = "The script is over."
MCP_PREFIX = "mcp__discogym"  # how both CLIs name the tools of an MCP server called "discogym"
BUILTIN = "builtin:"  # a scripted call of "builtin:NAME" calls the CLI's own tool NAME, not an MCP tool


def mcp_name(name: str) -> tuple[str | None, str]:
    """The namespace and name a scripted tool call is sent under."""
    return (None, name.removeprefix(BUILTIN)) if name.startswith(BUILTIN) else (MCP_PREFIX, name)


def token_counts(sent: Any, text: str, calls: list[tuple[str, str]]) -> tuple[int, int]:
    """Deterministic stand-ins for token counts: a quarter of the characters sent and received."""
    received = (len(text) + sum(len(name) + len(args) for name, args in calls)) // 4 + 1
    return len(json.dumps(sent, sort_keys=True)) // 4, received


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class ScriptedEndpoint(FakeEndpoint):
    """The shared server: takes a reply from the script for every model request and records every request.

    Subclasses say which path is the model's (:attr:`model_path`) and how a reply is written (:meth:`reply`).
    """

    model_path = "/v1/messages"
    choose: Callable[[dict[str, Any]], Scripted | None] | None = None  # when set, replies by request, not in order

    def __enter__(self) -> Self:
        self.start()
        return self

    @property
    def model_requests(self) -> list[Request]:
        """The requests for a model reply, in order (side requests such as token counting left out)."""
        return [r for r in self.requests if r.path.split("?")[0] == self.model_path]

    def reply(self, body: dict[str, Any], text: str, calls: list[tuple[str, str]], number: int) -> Iterator[bytes]:
        """The chunks of a successful reply to ``body`` saying ``text`` and calling ``calls``."""
        raise NotImplementedError

    def content_type(self, body: dict[str, Any]) -> str:
        """The content type of a reply to ``body``."""
        return "text/event-stream"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with endpoint.lock:
                    endpoint.requests.append(Request(self.path, dict(self.headers.items()), {}))
                self._send(404, b'{"error": {"type": "not_found", "message": "not served here"}}', "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with endpoint.lock:
                    endpoint.requests.append(Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(body)

            def _answer(self, body: dict[str, Any]) -> None:
                if self.path.split("?")[0] != endpoint.model_path:
                    self._send(404, b'{"error": {"type": "not_found", "message": "not served here"}}')
                    return
                scripted = endpoint.choose(body) if endpoint.choose is not None else endpoint._next_scripted()
                if isinstance(scripted, Delay):  # wait, then answer as if the script were over
                    time.sleep(scripted.seconds)
                    scripted = None
                if isinstance(scripted, Status):
                    error = {"type": "error", "error": {"type": "api_error", "message": scripted.message}}
                    self._send(scripted.code, json.dumps(error).encode(), "application/json", scripted.headers)
                    return
                text, calls = SCRIPT_OVER, []
                if isinstance(scripted, Say):
                    text = scripted.text
                elif isinstance(scripted, Calls):
                    text, calls = "", scripted.calls
                elif scripted is not None:
                    raise TypeError(f"the CLI endpoints do not play {scripted!r}")
                with endpoint.lock:
                    endpoint.replies += 1
                    number = endpoint.replies
                chunks = endpoint.reply(body, text, calls, number)
                self._send(200, b"".join(chunks), endpoint.content_type(body))

            def _send(
                self, code: int, payload: bytes, content_type: str = "", headers: dict[str, str] | None = None
            ) -> None:
                send(self, code, payload, content_type or "application/json", headers)

        return Handler


class AnthropicEndpoint(ScriptedEndpoint):
    """Anthropic's Messages API as Claude Code calls it. Point ``ANTHROPIC_BASE_URL`` at :attr:`root`."""

    model_path = "/v1/messages"

    def content_type(self, body: dict[str, Any]) -> str:
        return "text/event-stream" if body.get("stream") else "application/json"

    def reply(self, body: dict[str, Any], text: str, calls: list[tuple[str, str]], number: int) -> Iterator[bytes]:
        named = [("__".join(filter(None, mcp_name(name))), arguments) for name, arguments in calls]
        message = anthropic_reply(body, text, named, number)
        if not body.get("stream"):
            yield json.dumps(message).encode()
            return
        yield from anthropic_events(message)


def anthropic_events(message: dict[str, Any]) -> Iterator[bytes]:
    """A complete Messages API reply as the events of its stream."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield sse("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
        yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
    ending = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield sse("message_delta", {"type": "message_delta", "delta": ending, "usage": usage})
    yield sse("message_stop", {"type": "message_stop"})


class ResponsesEndpoint(ScriptedEndpoint):
    """OpenAI's Responses API as Codex calls it through a custom provider whose ``base_url`` is :attr:`url`."""

    model_path = "/v1/responses"

    def reply(self, body: dict[str, Any], text: str, calls: list[tuple[str, str]], number: int) -> Iterator[bytes]:
        sent, received = token_counts(body.get("input", []), text, calls)
        response: dict[str, Any] = {"id": f"resp_{number}", "object": "response", "model": body.get("model", "fake")}
        yield sse("response.created", {"type": "response.created", "response": {**response, "status": "in_progress"}})
        items: list[dict[str, Any]] = []
        if text:
            content = [{"type": "output_text", "text": text, "annotations": []}]
            items.append({"type": "message", "id": f"msg_{number}", "role": "assistant", "content": content})
        for i, (name, arguments) in enumerate(calls):
            namespace, bare = mcp_name(name)
            item = {"type": "function_call", "id": f"fc_{number}_{i}", "call_id": f"call_{number}_{i}"}
            items.append(
                {**item, **({"namespace": namespace} if namespace else {}), "name": bare, "arguments": arguments}
            )
        for index, item in enumerate(items):
            yield sse(
                "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}
            )
        usage: dict[str, Any] = {
            "input_tokens": sent,
            "input_tokens_details": {"cached_tokens": sent // 4},
            "output_tokens": received,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": sent + received,
        }
        done = {**response, "status": "completed", "output": items, "usage": usage}
        yield sse("response.completed", {"type": "response.completed", "response": done})
