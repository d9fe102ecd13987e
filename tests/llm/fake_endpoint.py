"""A fake model endpoint: a real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and
Anthropic messages wire formats, so the tests exercise the official SDKs' real client code.

By default it plays the toy suite's digit game well (a bisection read off the conversation it is sent),
answering in whichever form the request asks for: native tool calls, the JSON text protocol, or the toy
suite's own ``probe N`` syntax. Scripted replies and faults queued in :attr:`FakeEndpoint.script` are
served first, one per request.
"""

import contextlib
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RESULT = re.compile(r"the hidden digit is (higher than|lower than|equal to) ([0-9])")


@dataclass
class Status:
    """Answer with an HTTP error status."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted failure"


@dataclass
class Delay:
    """Wait this long before answering normally (longer than the client's timeout: a timeout)."""

    seconds: float


@dataclass
class Raw:
    """Answer 200 with this body, whatever it is."""

    body: bytes


@dataclass
class Say:
    """Reply with this text and no tool call."""

    text: str


@dataclass
class Calls:
    """Reply with these tool calls: (name, raw JSON arguments) pairs."""

    calls: list[tuple[str, str]]


@dataclass
class Drop:
    """Close the connection without answering."""


@dataclass
class Kill:
    """Close the connection and shut the whole server down: the endpoint is gone."""


@dataclass
class Normal:
    """Answer as the endpoint would unscripted."""


Scripted = Status | Delay | Raw | Say | Calls | Drop | Kill | Normal


@dataclass
class Request:
    """A request the endpoint received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _texts(content: Any) -> list[str]:
    """The text parts of an OpenAI or Anthropic message content."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for part in content or []:
        if part.get("type") == "text":
            texts.append(part["text"])
        elif part.get("type") == "tool_result":
            texts.extend(_texts(part.get("content")))
    return texts


def conversation_texts(body: dict[str, Any]) -> list[str]:
    """Every text the client sent, in order (system prompt first)."""
    system = body.get("system")
    texts = _texts(system) if system else []
    for message in body.get("messages", []):
        texts.extend(_texts(message.get("content")))
    return texts


def bisect(body: dict[str, Any]) -> tuple[str, int]:
    """The next move of a bisection over the results in the conversation."""
    low, high = 0, 9
    for text in conversation_texts(body):
        for relation, digit in RESULT.findall(text):
            n = int(digit)
            if relation == "equal to":
                return "submit", n
            if relation == "higher than":
                low = max(low, n + 1)
            else:
                high = min(high, n - 1)
    if low >= high:
        return "submit", low
    return "probe", (low + high) // 2


def reply_style(body: dict[str, Any]) -> str:
    """``native`` when the request offers tools, ``json`` for the JSON text protocol, else ``suite``."""
    if body.get("tools"):
        return "native"
    return "json" if any('{"tool"' in text for text in conversation_texts(body)[:1]) else "suite"


class FakeEndpoint:
    """The server. ``url`` is the OpenAI-style base URL (``.../v1``); ``root`` suits Anthropic's SDK."""

    def __init__(self, port: int = 0) -> None:
        self.script: deque[Scripted] = deque()
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.replies = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def start(self) -> "FakeEndpoint":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down and close its socket: later connections are refused."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakeEndpoint":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_scripted(self) -> Scripted | None:
        with self.lock:
            return self.script.popleft() if self.script else None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in separate writes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with endpoint.lock:
                    endpoint.requests.append(Request(self.path, headers, body))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    self._answer(body)

            def _answer(self, body: dict[str, Any]) -> None:
                anthropic = self.path.endswith("/messages")
                scripted = endpoint._next_scripted()
                if isinstance(scripted, Delay):
                    threading.Event().wait(scripted.seconds)
                    scripted = None
                if isinstance(scripted, Drop | Kill):
                    self.close_connection = True
                    self.connection.shutdown(2)
                    if isinstance(scripted, Kill):
                        endpoint.stop()
                    return
                if isinstance(scripted, Status):
                    error = {"error": {"type": "scripted", "message": scripted.message}}
                    self._send(scripted.code, json.dumps(error).encode(), scripted.headers)
                    return
                if isinstance(scripted, Raw):
                    self._send(200, scripted.body)
                    return
                text, calls = self._decide(body, scripted)
                with endpoint.lock:
                    endpoint.replies += 1
                # Ids depend on the conversation alone, so a conversation always gets the same reply.
                number = len(body.get("messages", []))
                reply = (anthropic_reply if anthropic else openai_reply)(body, text, calls, number)
                self._send(200, json.dumps(reply).encode())

            def _decide(self, body: dict[str, Any], scripted: Scripted | None) -> tuple[str, list[tuple[str, str]]]:
                if isinstance(scripted, Say):
                    return scripted.text, []
                if isinstance(scripted, Calls):
                    return "", scripted.calls
                tool, n = bisect(body)
                style = reply_style(body)
                if style == "native":
                    return f"I will {tool} {n}.", [(tool, json.dumps({"n": n}))]
                if style == "json":
                    return json.dumps({"tool": tool, "args": {"n": n}}), []
                return f"{tool} {n}", []

            def _send(self, code: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                send(self, code, payload, "application/json", headers)

        return Handler


def _token_counts(body: dict[str, Any], text: str, calls: list[tuple[str, str]]) -> tuple[int, int]:
    """Deterministic stand-ins for token counts: a quarter of the characters sent and received."""
    sent = len(json.dumps(body.get("messages", []), sort_keys=True)) // 4
    received = (len(text) + sum(len(name) + len(args) for name, args in calls)) // 4 + 1
    return sent, received


def openai_reply(body: dict[str, Any], text: str, calls: list[tuple[str, str]], number: int) -> dict[str, Any]:
    """A chat completion, with tool calls if any; a quarter of the input counts as cached."""
    prompt, completion = _token_counts(body, text, calls)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{number}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(calls)
        ]
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": prompt // 4},
        },
    }


def anthropic_reply(body: dict[str, Any], text: str, calls: list[tuple[str, str]], number: int) -> dict[str, Any]:
    """A message, with tool_use blocks if any; a quarter of the input is reported as cache reads."""
    prompt, completion = _token_counts(body, text, calls)
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for i, (name, args) in enumerate(calls):
        try:
            arguments = json.loads(args)
        except json.JSONDecodeError:
            arguments = {"unparsable": args}
        content.append({"type": "tool_use", "id": f"toolu_{number}_{i}", "name": name, "input": arguments})
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt - prompt // 4,
            "output_tokens": completion,
            "cache_read_input_tokens": prompt // 4,
            "cache_creation_input_tokens": 0,
        },
    }


def send(
    handler: BaseHTTPRequestHandler, code: int, payload: bytes, content_type: str, headers: dict[str, str] | None
) -> None:
    """Answer the handler's request with ``payload`` (its length declared) and any extra ``headers``."""
    handler.send_response(code)
    handler.send_header("content-type", content_type)
    handler.send_header("content-length", str(len(payload)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(payload)
