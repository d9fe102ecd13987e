"""A fake model endpoint: a real HTTP server on 127.0.0.1 that speaks the wire formats of the model APIs the
agent uses, so the tests exercise the official SDKs' real client code.

The wire format is told by the request path:

* OpenAI chat completions, ``POST .../v1/chat/completions`` (any path not named below is answered so too);
* OpenAI Responses, ``POST .../v1/responses``;
* Anthropic messages, ``POST /v1/messages`` (and ``/v1/messages/count_tokens``);
* Google Gemini, ``POST /{version}/models/{model}:generateContent`` or ``:streamGenerateContent?alt=sse`` (and
  ``:countTokens``); google-genai, given :attr:`FakeEndpoint.root` as its base URL, calls version ``v1``.

Each is answered streamed (server-sent events) when the request asks for it: ``"stream": true`` in the body, or
Gemini's ``:streamGenerateContent``.

By default it plays the toy suite's digit game well (a bisection read off the conversation it is sent),
answering in whichever form the request asks for: native tool calls, the JSON text protocol, or the toy
suite's own ``probe N`` syntax. When the request asks for reasoning (Anthropic ``thinking``, OpenAI
``reasoning_effort`` or ``reasoning``, OpenRouter ``reasoning``, Gemini ``thinkingConfig``), the reply starts with
a deterministic thought, :func:`thought_text`, signed with :func:`signature_for`, and reports
:func:`thought_tokens` reasoning tokens inside its output tokens. Anthropic's prompt cache is simulated from the
request's ``cache_control`` markers (:class:`PromptCache`).

Scripted replies and faults queued in :attr:`FakeEndpoint.script` are served first, one per request (token
counting requests excepted). Everything is deterministic: the same request, after the same earlier requests,
gets the same bytes (only Anthropic's cache accounting depends on the earlier requests).
"""

import base64
import contextlib
import hashlib
import json
import re
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from discogym.llm.context import SUMMARY_PROMPT

RESULT = re.compile(r"the hidden digit is (higher than|lower than|equal to) ([0-9])")

DEFAULT_BUDGET = 4096
"""The output budget of a request that sets none (what :class:`Exhausted` spends then)."""

CACHE_LOOKBACK = 20
"""How many block boundaries before each ``cache_control`` marker are checked for a cache hit, as Anthropic does."""

JSON = "application/json"
SSE = "text/event-stream"


@dataclass
class Status:
    """Answer with an HTTP error status."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted failure"
    error_code: str | None = None
    """OpenAI's machine-readable ``error.code`` (``context_length_exceeded``), if any."""


@dataclass
class Delay:
    """Wait this long before answering normally (longer than the client's timeout: a timeout)."""

    seconds: float


@dataclass
class Raw:
    """Answer 200 with this body, whatever it is (typed as server-sent events if the request streams, else JSON,
    unless ``content_type`` says otherwise)."""

    body: bytes
    content_type: str | None = None


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


@dataclass
class Exhausted:
    """The reply spent its whole output budget (:func:`output_budget`) on reasoning: a thought and no text and
    no tool call, stopped for length (Anthropic ``max_tokens``, chat ``length``, Responses ``incomplete`` for
    ``max_output_tokens``, Gemini ``MAX_TOKENS``), all of the output tokens counted as reasoning."""


Scripted = Status | Delay | Raw | Say | Calls | Drop | Kill | Normal | Exhausted

Wire = Literal["chat", "responses", "anthropic", "anthropic_count", "google", "google_count"]


@dataclass
class Request:
    """A request the endpoint received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Turn:
    """What the fake model answers: text, tool calls, and the reasoning before them."""

    text: str
    calls: list[tuple[str, str]]
    thought: str | None = None
    """The reasoning (None: the reply has none), shown where the wire format shows it."""
    reasoning_tokens: int = 0
    exhausted: bool = False
    """The whole output budget went to reasoning (``reasoning_tokens`` is that budget)."""


@dataclass(frozen=True)
class CacheUsage:
    """How an Anthropic request's input tokens split: fresh, written to the cache, read from it."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


def wire_format(path: str) -> Wire:
    """The wire format a request path speaks."""
    route = path.split("?", 1)[0]
    if route.endswith("/responses"):
        return "responses"
    if route.endswith("/messages"):
        return "anthropic"
    if route.endswith("/messages/count_tokens"):
        return "anthropic_count"
    if route.endswith((":generateContent", ":streamGenerateContent")):
        return "google"
    if route.endswith(":countTokens"):
        return "google_count"
    return "chat"


def streams(path: str, body: dict[str, Any]) -> bool:
    """Whether the request asks for a streamed (server-sent events) answer."""
    return ":streamGenerateContent" in path or body.get("stream") is True


# ---------------------------------------------------------------------------------------------------------------
# Reading the conversation


def _texts(content: Any) -> list[str]:
    """The text parts of an OpenAI (chat or Responses) or Anthropic message content, tool results' included."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "tool_result":
            texts.extend(_texts(part.get("content")))
    return texts


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value, in order (a Gemini function response's texts)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _gemini_texts(parts: Any) -> list[str]:
    """The texts of Gemini parts: text (thoughts left out) and function responses."""
    texts: list[str] = []
    for part in parts or []:
        if not isinstance(part, dict) or part.get("thought"):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        response = part.get("functionResponse")
        if isinstance(response, dict):
            texts.extend(_strings(response.get("response")))
    return texts


def _responses_texts(body: dict[str, Any]) -> list[str]:
    """The texts of a Responses request: instructions, then messages' and function outputs' texts."""
    instructions = body.get("instructions")
    texts = [instructions] if isinstance(instructions, str) else []
    items = body.get("input")
    if isinstance(items, str):
        return [*texts, items]
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            texts.extend(_texts(item.get("content")))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            texts.extend(_texts(item.get("output")))
    return texts


def conversation_texts(body: dict[str, Any]) -> list[str]:
    """Every text the client sent, in order (system prompt first), in any of the wire formats. Reasoning (thinking
    blocks, reasoning items, thought parts) and tool calls' arguments are left out; tool results are in."""
    if "contents" in body:  # Gemini
        system = body.get("systemInstruction") or body.get("system_instruction")
        texts = [system] if isinstance(system, str) else _gemini_texts((system or {}).get("parts"))
        for content in body.get("contents") or []:
            if isinstance(content, dict):
                texts.extend(_gemini_texts(content.get("parts")))
        return texts
    if "input" in body:  # OpenAI Responses
        return _responses_texts(body)
    system = body.get("system")  # Anthropic's; chat completions carry theirs among the messages
    texts = _texts(system) if system else []
    for message in body.get("messages", []):
        texts.extend(_texts(message.get("content")))
    return texts


def digit_range(body: dict[str, Any]) -> tuple[int, int]:
    """The digits the results in the conversation leave possible: ``(low, high)``, one digit once it is found."""
    low, high = 0, 9
    for text in conversation_texts(body):
        for relation, digit in RESULT.findall(text):
            n = int(digit)
            if relation == "equal to":
                return n, n
            if relation == "higher than":
                low = max(low, n + 1)
            else:
                high = min(high, n - 1)
    return low, high


def bisect(body: dict[str, Any]) -> tuple[str, int]:
    """The next move of a bisection over the results in the conversation."""
    low, high = digit_range(body)
    if low >= high:
        return "submit", low
    return "probe", (low + high) // 2


def reply_style(body: dict[str, Any]) -> str:
    """``native`` when the request offers tools, ``json`` for the JSON text protocol, else ``suite``."""
    if body.get("tools"):
        return "native"
    return "json" if any('{"tool"' in text for text in conversation_texts(body)[:1]) else "suite"


# ---------------------------------------------------------------------------------------------------------------
# Reasoning


def thought_text(body: dict[str, Any]) -> str:
    """The fake model's reasoning about the conversation."""
    low, high = digit_range(body)
    return f"Bisecting: the digit lies in [{low}, {high}]."


def signature_for(thought: str) -> str:
    """The signature of a thought (Anthropic ``signature``, Responses ``encrypted_content``, Gemini
    ``thoughtSignature``): base64, so it also decodes to bytes as Gemini's must."""
    return base64.b64encode(hashlib.sha256(f"fake-signature:{thought}".encode()).digest()).decode()


def thought_tokens(thought: str) -> int:
    """The reasoning tokens a thought is reported to cost (included in the output tokens)."""
    return len(thought) // 4 + 1


def _either(fields: dict[str, Any], camel: str) -> Any:
    """A Gemini field, under its camelCase name or its snake_case one (google-genai sends some nested settings,
    e.g. ``thinkingConfig``'s, as it got them)."""
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return fields.get(camel, fields.get(snake))


def _gemini_thinking(body: dict[str, Any]) -> dict[str, Any] | None:
    """A Gemini request's thinking config, if it has one."""
    config = body.get("generationConfig") or body.get("generation_config") or {}
    thinking = _either(config, "thinkingConfig")
    return thinking if isinstance(thinking, dict) else None


def reasoning_asked(body: dict[str, Any], wire: Wire) -> bool:
    """Whether the request turns reasoning on."""
    if wire == "anthropic":
        thinking = body.get("thinking")
        return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if wire == "responses":
        reasoning = body.get("reasoning")
        return isinstance(reasoning, dict) and reasoning.get("effort") != "none"
    if wire == "google":
        thinking = _gemini_thinking(body)
        return thinking is not None and _either(thinking, "thinkingBudget") != 0
    reasoning = body.get("reasoning")  # OpenRouter's form
    if isinstance(reasoning, dict):
        return reasoning.get("enabled") is not False and reasoning.get("effort") != "none"
    return body.get("reasoning_effort") not in (None, "none")


def output_budget(body: dict[str, Any], wire: Wire) -> int:
    """The output token budget the request sets (:data:`DEFAULT_BUDGET` if none)."""
    if wire == "google":
        budget = _either(body.get("generationConfig") or {}, "maxOutputTokens")
    elif wire == "responses":
        budget = body.get("max_output_tokens")
    elif wire == "chat":
        budget = body.get("max_completion_tokens") or body.get("max_tokens")
    else:
        budget = body.get("max_tokens")
    return budget if isinstance(budget, int) and budget > 0 else DEFAULT_BUDGET


def decide(body: dict[str, Any], wire: Wire, scripted: Scripted | None = None) -> Turn:
    """The reply to a request: the scripted one, else the bisection's next move in the request's style; with a
    thought first if the request asks for reasoning (always for :class:`Exhausted`)."""
    thought = thought_text(body) if reasoning_asked(body, wire) or isinstance(scripted, Exhausted) else None
    if isinstance(scripted, Exhausted):
        return Turn("", [], thought, output_budget(body, wire), exhausted=True)
    reasoning = thought_tokens(thought) if thought is not None else 0
    if isinstance(scripted, Say):
        return Turn(scripted.text, [], thought, reasoning)
    if isinstance(scripted, Calls):
        return Turn("", scripted.calls, thought, reasoning)
    tool, n = bisect(body)
    style = reply_style(body)
    if style == "native":
        return Turn(f"I will {tool} {n}.", [(tool, json.dumps({"n": n}))], thought, reasoning)
    if style == "json":
        return Turn(json.dumps({"tool": tool, "args": {"n": n}}), [], thought, reasoning)
    return Turn(f"{tool} {n}", [], thought, reasoning)


# ---------------------------------------------------------------------------------------------------------------
# Token counts and Anthropic's prompt cache


def _token_counts(body: dict[str, Any], text: str, calls: list[tuple[str, str]]) -> tuple[int, int]:
    """Deterministic stand-ins for token counts: a quarter of the characters sent and received."""
    sent = len(json.dumps(body.get("messages", []), sort_keys=True)) // 4
    return sent, _received_tokens(text, calls)


def _received_tokens(text: str, calls: list[tuple[str, str]]) -> int:
    return (len(text) + sum(len(name) + len(args) for name, args in calls)) // 4 + 1


def _output_tokens(turn: Turn) -> int:
    """The output tokens of a reply, reasoning included."""
    if turn.exhausted:
        return turn.reasoning_tokens
    return _received_tokens(turn.text, turn.calls) + turn.reasoning_tokens


def _dump_tokens(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True)) // 4


class ChatPrefixCache:
    """OpenAI's automatic prompt caching, as a stand-in: a chat prompt's cached tokens are those of its longest
    run of leading messages equal to an earlier request's (among the last eight), counted when 1,024 or more."""

    MINIMUM = 1024
    KEPT = 8

    def __init__(self) -> None:
        self.earlier: deque[list[str]] = deque(maxlen=self.KEPT)
        self.lock = threading.Lock()

    def account(self, body: dict[str, Any]) -> int:
        messages = [json.dumps(message, sort_keys=True) for message in body.get("messages", [])]
        with self.lock:
            shared = max((_shared_prefix(messages, seen) for seen in self.earlier), default=0)
            self.earlier.append(messages)
        tokens = sum(len(message) for message in messages[:shared]) // 4
        return tokens if tokens >= self.MINIMUM else 0


def _shared_prefix(messages: list[str], seen: list[str]) -> int:
    count = 0
    for mine, theirs in zip(messages, seen, strict=False):
        if mine != theirs:
            break
        count += 1
    return count


def asks_for_summary(body: dict[str, Any]) -> bool:
    """Whether a request is the ``compact`` policy's request for a summary: its last message is the prompt."""
    messages = body.get("messages") or body.get("contents") or body.get("input") or []
    return bool(messages) and SUMMARY_PROMPT[:60] in json.dumps(messages[-1])


def prompt_tokens(body: dict[str, Any], wire: Wire) -> int:
    """The input tokens of a request: a quarter of the characters of a stable JSON dump of what it sends (chat
    completions: the messages; Responses: the input; Gemini: system instruction and contents; Anthropic: its
    :func:`prompt_blocks`)."""
    if wire in ("anthropic", "anthropic_count"):
        blocks, _ = prompt_blocks(body)
        return prefix_tokens(blocks, len(blocks))
    if wire == "responses":
        return _dump_tokens(body.get("input", ""))
    if wire in ("google", "google_count"):
        return _dump_tokens([body.get("systemInstruction"), body.get("contents", [])])
    return _dump_tokens(body.get("messages", []))


_UNCACHEABLE = ("thinking", "redacted_thinking")


def prompt_blocks(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[int]]:
    """An Anthropic request's prompt as blocks in prefix order (tools, system, then each message's content
    blocks), ``cache_control`` markers stripped; and the marked prefixes' lengths (in blocks). A top-level
    ``cache_control`` (automatic caching) marks the last cacheable message block."""
    blocks: list[dict[str, Any]] = []
    marks: list[int] = []

    def add(place: dict[str, Any], block: Any) -> None:
        if isinstance(block, dict):
            blocks.append({**place, "block": {k: v for k, v in block.items() if k != "cache_control"}})
            if "cache_control" in block:
                marks.append(len(blocks))
        else:
            blocks.append({**place, "block": block})

    for tool in body.get("tools") or []:
        add({"in": "tools"}, tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        add({"in": "system"}, block)
    last_cacheable = 0
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        place = {"in": "messages", "message": i, "role": message.get("role")}
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            add(place, block)
            if not (isinstance(block, dict) and block.get("type") in _UNCACHEABLE):
                last_cacheable = len(blocks)
    if body.get("cache_control") and (last_cacheable or blocks):
        marks.append(last_cacheable or len(blocks))
    return blocks, sorted(set(marks))


def prefix_tokens(blocks: list[dict[str, Any]], length: int) -> int:
    """The tokens of the first ``length`` prompt blocks."""
    return _dump_tokens(blocks[:length])


class PromptCache:
    """Anthropic's prompt cache, simulated: a request writes the prefix up to each of its ``cache_control``
    markers; a later request reads the longest prefix written before that ends at one of the
    :data:`CACHE_LOOKBACK` block boundaries up to and including one of its markers. Entries never expire. Keyed by
    model and the prefix's blocks (markers stripped). :meth:`account` reports ``cache_read_input_tokens`` = that
    prefix's tokens, ``cache_creation_input_tokens`` = the tokens up to the last marker minus those, and
    ``input_tokens`` = the rest; a request without markers reads and writes nothing."""

    def __init__(self) -> None:
        self.written: set[str] = set()
        self.lock = threading.Lock()

    def clear(self) -> None:
        with self.lock:
            self.written.clear()

    def account(self, body: dict[str, Any]) -> CacheUsage:
        """Split the request's input tokens, and write its marked prefixes."""
        blocks, marks = prompt_blocks(body)
        total = prefix_tokens(blocks, len(blocks))
        if not marks:
            return CacheUsage(total, 0, 0)
        model = body.get("model")
        boundaries = sorted({j for mark in marks for j in range(mark, max(mark - CACHE_LOOKBACK, 0), -1)})
        keys = {j: self._key(model, blocks, j) for j in boundaries}
        with self.lock:
            hits = [j for j in boundaries if keys[j] in self.written]
            self.written.update(keys[mark] for mark in marks)
        read = prefix_tokens(blocks, max(hits)) if hits else 0
        marked = prefix_tokens(blocks, marks[-1])
        return CacheUsage(total - marked, marked - read, read)

    @staticmethod
    def _key(model: Any, blocks: list[dict[str, Any]], length: int) -> str:
        return hashlib.sha256(json.dumps([model, blocks[:length]], sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# Replies


def _arguments(args: str) -> Any:
    try:
        return json.loads(args)
    except json.JSONDecodeError:
        return {"unparsable": args}


def _halves(text: str) -> list[str]:
    """A text in two pieces (one if it is shorter than two characters), to stream it in more than one delta."""
    middle = len(text) // 2
    return [text[:middle], text[middle:]] if middle else [text]


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    """Server-sent events, each with its ``event:`` line if named."""
    lines = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        lines.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(lines).encode()


def chat_completion(body: dict[str, Any], turn: Turn, number: int, cached: int | None = None) -> dict[str, Any]:
    """A chat completion, with tool calls if any; ``cached`` input tokens (by default a quarter) count as cached.
    When the request asks
    for reasoning its tokens are reported (in the completion tokens), and OpenRouter's form gets the thought as
    the message's ``reasoning`` (and ``reasoning_details``) unless it asked to exclude it."""
    prompt = _dump_tokens(body.get("messages", []))
    completion = _output_tokens(turn)
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    openrouter = body.get("reasoning")
    if turn.thought is not None and isinstance(openrouter, dict) and not openrouter.get("exclude"):
        message["reasoning"] = turn.thought
        message["reasoning_details"] = [
            {"type": "reasoning.text", "text": turn.thought, "format": "unknown", "index": 0}
        ]
    if turn.calls:
        message["tool_calls"] = [
            {"id": f"call_{number}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(turn.calls)
        ]
    finish = "length" if turn.exhausted else "tool_calls" if turn.calls else "stop"
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": prompt // 4 if cached is None else cached},
    }
    if turn.thought is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": turn.reasoning_tokens}
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def openai_reply(body: dict[str, Any], text: str, calls: list[tuple[str, str]], number: int) -> dict[str, Any]:
    """A chat completion, with tool calls if any; a quarter of the input counts as cached."""
    return chat_completion(body, Turn(text, calls), number)


def chat_completion_stream(completion: dict[str, Any], include_usage: bool) -> bytes:
    """A chat completion as ``chat.completion.chunk`` events (usage last if asked for), then ``[DONE]``."""
    head = {key: completion[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = completion["choices"][0]
    message = choice["message"]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning": piece} for piece in _halves(message.get("reasoning") or "") if piece]
    deltas += [{"content": piece} for piece in _halves(message.get("content") or "") if piece]
    for i, call in enumerate(message.get("tool_calls", [])):
        function = {"name": call["function"]["name"], "arguments": ""}
        deltas.append({"tool_calls": [{"index": i, "id": call["id"], "type": "function", "function": function}]})
        deltas += [
            {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
            for piece in _halves(call["function"]["arguments"])
        ]
    chunks = [head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append(head | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    if include_usage:
        chunks.append(head | {"choices": [], "usage": completion["usage"]})
    return _sse([*((None, chunk) for chunk in chunks), (None, "[DONE]")])


def anthropic_message(body: dict[str, Any], turn: Turn, number: int, cache: CacheUsage | None = None) -> dict[str, Any]:
    """A message: a thinking block first if the turn has a thought, then text and tool_use blocks. Its input is
    split as ``cache`` says; without one, statelessly: a quarter of the messages' tokens as cache reads, the rest
    as input (what the agent CLIs' fakes report)."""
    content: list[dict[str, Any]] = []
    if turn.thought is not None:
        content.append({"type": "thinking", "thinking": turn.thought, "signature": signature_for(turn.thought)})
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    for i, (name, args) in enumerate(turn.calls):
        content.append({"type": "tool_use", "id": f"toolu_{number}_{i}", "name": name, "input": _arguments(args)})
    if cache is None:
        prompt = _dump_tokens(body.get("messages", []))
        cache = CacheUsage(prompt - prompt // 4, 0, prompt // 4)
    usage: dict[str, Any] = {
        "input_tokens": cache.input_tokens,
        "output_tokens": _output_tokens(turn),
        "cache_read_input_tokens": cache.cache_read_input_tokens,
        "cache_creation_input_tokens": cache.cache_creation_input_tokens,
    }
    if turn.thought is not None:
        usage["output_tokens_details"] = {"thinking_tokens": turn.reasoning_tokens}
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": content,
        "stop_reason": "max_tokens" if turn.exhausted else "tool_use" if turn.calls else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_reply(body: dict[str, Any], text: str, calls: list[tuple[str, str]], number: int) -> dict[str, Any]:
    """A message, with tool_use blocks if any; a quarter of the input is reported as cache reads."""
    return anthropic_message(body, Turn(text, calls), number)


def anthropic_stream(message: dict[str, Any]) -> bytes:
    """A message as Anthropic's server-sent events: message_start, ping, each content block's start, deltas and
    stop, message_delta (stop reason and cumulative usage), message_stop."""
    usage = message["usage"]
    start = message | {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage | {"output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        deltas: list[dict[str, Any]]
        if block["type"] == "thinking":
            opening: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _halves(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "tool_use":
            opening = block | {"input": {}}
            arguments = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in _halves(arguments)]
        else:
            opening = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _halves(block["text"])]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
        )
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def responses_reply(body: dict[str, Any], turn: Turn, number: int) -> dict[str, Any]:
    """A Responses API response: a reasoning item (summary and encrypted content) if the turn has a thought, an
    assistant message if it has text, then its function calls. A quarter of the input counts as cached;
    reasoning tokens are part of the output tokens. An exhausted turn is ``incomplete`` (``max_output_tokens``)."""
    prompt = _dump_tokens(body.get("input", ""))
    output: list[dict[str, Any]] = []
    if turn.thought is not None:
        summary = [{"type": "summary_text", "text": turn.thought}]
        reasoning = {"id": f"rs_{number}", "type": "reasoning", "summary": summary}
        output.append(reasoning | {"encrypted_content": signature_for(turn.thought)})
    if turn.text:
        text = {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}
        message = {"id": f"msg_{number}", "type": "message", "role": "assistant", "status": "completed"}
        output.append(message | {"content": [text]})
    for i, (name, args) in enumerate(turn.calls):
        call = {"id": f"fc_{number}_{i}", "type": "function_call", "call_id": f"call_{number}_{i}", "name": name}
        output.append(call | {"arguments": args, "status": "completed"})
    completion = _output_tokens(turn)
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 0,
        "model": body.get("model", "fake"),
        "status": "incomplete" if turn.exhausted else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if turn.exhausted else None,
        "error": None,
        "instructions": body.get("instructions"),
        "metadata": {},
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools", []),
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": prompt // 4, "cache_write_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": turn.reasoning_tokens},
            "total_tokens": prompt + completion,
        },
    }


def responses_stream(response: dict[str, Any]) -> bytes:
    """A Responses API response as its server-sent events: response.created and .in_progress, each output item
    added, its content streamed, done, then response.completed (or .incomplete) with the whole response."""
    events: list[tuple[str | None, Any]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    pending = response | {"status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index, item=item | {"status": "in_progress", "content": []})
            part = item["content"][0]
            emit("response.content_part.added", **at, content_index=0, part=part | {"text": ""})
            for piece in _halves(part["text"]):
                emit("response.output_text.delta", **at, content_index=0, delta=piece, logprobs=[])
            emit("response.output_text.done", **at, content_index=0, text=part["text"], logprobs=[])
            emit("response.content_part.done", **at, content_index=0, part=part)
        elif item["type"] == "function_call":
            emit(
                "response.output_item.added", output_index=index, item=item | {"status": "in_progress", "arguments": ""}
            )
            for piece in _halves(item["arguments"]):
                emit("response.function_call_arguments.delta", **at, delta=piece)
            emit("response.function_call_arguments.done", **at, name=item["name"], arguments=item["arguments"])
        else:
            emit("response.output_item.added", output_index=index, item=item | {"summary": []})
            for summary_index, summary in enumerate(item["summary"]):
                place = at | {"summary_index": summary_index}
                emit("response.reasoning_summary_part.added", **place, part=summary | {"text": ""})
                for piece in _halves(summary["text"]):
                    emit("response.reasoning_summary_text.delta", **place, delta=piece)
                emit("response.reasoning_summary_text.done", **place, text=summary["text"])
                emit("response.reasoning_summary_part.done", **place, part=summary)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed" if response["status"] == "completed" else "response.incomplete", response=response)
    return _sse(events)


def google_model(path: str) -> str:
    """The model named in a Gemini request path (``.../models/{model}:generateContent``)."""
    found = re.search(r"models/([^/:?]+):", path)
    return found.group(1) if found else "fake"


def google_reply(body: dict[str, Any], turn: Turn, number: int, model: str = "fake") -> dict[str, Any]:
    """A Gemini generateContent response. A thinking turn starts with its thought as a ``thought: true`` part if
    the request asked to include thoughts; then come text and functionCall parts (with ids), the first function
    call (else the text) carrying the ``thoughtSignature``, as Gemini does. Thoughts are counted apart from the
    candidates; a quarter of the prompt counts as cached. An exhausted turn is its thought alone, stopped for
    MAX_TOKENS."""
    thinking = _gemini_thinking(body) or {}
    parts: list[dict[str, Any]] = []
    if turn.thought is not None and (turn.exhausted or _either(thinking, "includeThoughts")):
        parts.append({"text": turn.thought, "thought": True})
    text: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
    calls: list[dict[str, Any]] = [
        {"functionCall": {"id": f"call_{number}_{i}", "name": name, "args": _arguments(args)}}
        for i, (name, args) in enumerate(turn.calls)
    ]
    signed = (calls or text)[:1]  # Gemini signs the first function call, else the text
    if turn.thought is not None and signed:
        signed[0]["thoughtSignature"] = signature_for(turn.thought)
    parts += text + calls
    prompt = prompt_tokens(body, "google")
    candidates = 0 if turn.exhausted else _received_tokens(turn.text, turn.calls)
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "MAX_TOKENS" if turn.exhausted else "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": candidates,
            "thoughtsTokenCount": turn.reasoning_tokens,
            "cachedContentTokenCount": prompt // 4,
            "totalTokenCount": prompt + candidates + turn.reasoning_tokens,
        },
        "modelVersion": model,
        "responseId": f"resp-{number}",
    }


def google_stream(response: dict[str, Any]) -> bytes:
    """A Gemini response as streamGenerateContent's server-sent events: a chunk per part, the last with the
    finish reason and usage."""
    candidate = response["candidates"][0]
    head = {"modelVersion": response["modelVersion"], "responseId": response["responseId"]}
    parts = candidate["content"]["parts"] or [{"text": ""}]
    chunks = []
    for i, part in enumerate(parts):
        chunk_candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        chunk = {"candidates": [chunk_candidate], **head}
        if i == len(parts) - 1:
            chunk_candidate["finishReason"] = candidate["finishReason"]
            chunk["usageMetadata"] = response["usageMetadata"]
        chunks.append(chunk)
    return _sse([(None, chunk) for chunk in chunks])


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_body(wire: Wire, code: int, message: str, error_code: str | None = None) -> bytes:
    """The JSON body of an error answer (Gemini's shape for Gemini requests)."""
    if wire in ("google", "google_count"):
        error: dict[str, Any] = {"code": code, "message": message, "status": _GOOGLE_STATUS.get(code, "UNKNOWN")}
    elif wire == "anthropic":
        error = {"type": "invalid_request_error" if code == 400 else "scripted", "message": message}
    else:
        error = {"type": "scripted", "message": message, "code": error_code}
    return json.dumps({"error": error}).encode()


def conversation_length(body: dict[str, Any]) -> int:
    """The number of messages (or input items, or contents) a request carries: the replies' ids are made of it,
    so a conversation always gets the same reply."""
    if "contents" in body:
        return len(body["contents"] or [])
    if "input" in body:
        items = body["input"]
        return len(items) if isinstance(items, list) else 1
    return len(body.get("messages", []))


# ---------------------------------------------------------------------------------------------------------------
# The server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many clients connect at once (the default backlog, 5, would turn some away)


class FakeEndpoint:
    """The server. ``url`` is the OpenAI-style base URL (``.../v1``); ``root`` suits Anthropic's and Google's
    SDKs. Every answer waits ``answer_delay_s`` first (concurrent requests wait side by side)."""

    def __init__(
        self,
        port: int = 0,
        answer_delay_s: float = 0.0,
        context_window: int | None = None,
        summary: str | None = None,
        prefix_cache: bool = False,
    ) -> None:
        self.script: deque[Scripted] = deque()
        self.context_window = context_window  # a longer chat prompt is refused, as a model refuses one
        self.summary = summary  # if set, the answer to every request for a summary (the script is kept for others)
        self.prefix_cache = ChatPrefixCache() if prefix_cache else None  # else a quarter of each prompt is cached
        self.requests: list[Request] = []
        # what GET answers, by path (``/v1/models`` as vLLM lists its models, ``/props`` as llama.cpp's server
        # says its settings); any other GET is 404
        self.pages: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.replies = 0
        self.answer_delay_s = answer_delay_s
        self.cache = PromptCache()
        self._connections: set[socket.socket] = set()
        self._stopped = False
        self._server = _Server(("127.0.0.1", port), self._handler_class())
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
        """Shut the server down and close its socket and every open connection: later connections are refused,
        and kept-alive ones are not answered any more (nor any accepted while the server winds down)."""
        with self.lock:
            self._stopped = True
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
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

            def setup(self) -> None:
                super().setup()
                with endpoint.lock:
                    endpoint._connections.add(self.connection)
                    stopped = endpoint._stopped
                if stopped:  # accepted while the server winds down: the endpoint is gone
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)

            def finish(self) -> None:
                with endpoint.lock:
                    endpoint._connections.discard(self.connection)
                with contextlib.suppress(OSError):
                    super().finish()

            def do_GET(self) -> None:
                page = endpoint.pages.get(self.path)
                with contextlib.suppress(OSError):
                    if page is None:
                        send(self, 404, b'{"error": "not found"}', "application/json", None)
                    else:
                        send(self, 200, json.dumps(page).encode(), "application/json", None)

            def do_POST(self) -> None:
                body = json.loads(self._read_body() or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                wire = wire_format(self.path)
                counting = wire in ("anthropic_count", "google_count")
                window = endpoint.context_window
                too_long = window is not None and wire == "chat" and prompt_tokens(body, wire) > window
                summarising = endpoint.summary is not None and asks_for_summary(body)
                with endpoint.lock:  # recorded and given its script in arrival order
                    endpoint.requests.append(Request(self.path, headers, body))
                    skip = counting or too_long or summarising
                    scripted = endpoint.script.popleft() if endpoint.script and not skip else None
                if summarising and not too_long:
                    scripted = Say(str(endpoint.summary))
                if too_long:
                    scripted = Status(400, message="the prompt is too long", error_code="context_length_exceeded")
                with contextlib.suppress(OSError):  # the client gave up waiting, or the endpoint was stopped
                    self._answer(wire, body, scripted)

            def _read_body(self) -> bytes:
                if "chunked" not in self.headers.get("transfer-encoding", "").lower():
                    return self.rfile.read(int(self.headers.get("content-length", 0)))
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline().strip():  # trailers
                    pass
                return b"".join(chunks)

            def _answer(self, wire: Wire, body: dict[str, Any], scripted: Scripted | None) -> None:
                if endpoint.answer_delay_s > 0:
                    threading.Event().wait(endpoint.answer_delay_s)
                if isinstance(scripted, Delay):
                    threading.Event().wait(scripted.seconds)
                    scripted = None
                if isinstance(scripted, Drop | Kill):
                    self.close_connection = True
                    self.connection.shutdown(2)
                    if isinstance(scripted, Kill):
                        endpoint.stop()
                    return
                streamed = streams(self.path, body)
                if isinstance(scripted, Status):
                    self._send(
                        scripted.code,
                        error_body(wire, scripted.code, scripted.message, scripted.error_code),
                        JSON,
                        scripted.headers,
                    )
                    return
                if isinstance(scripted, Raw):
                    self._send(200, scripted.body, scripted.content_type or (SSE if streamed else JSON))
                    return
                if wire == "anthropic_count":
                    self._send(200, json.dumps({"input_tokens": prompt_tokens(body, wire)}).encode(), JSON)
                    return
                if wire == "google_count":
                    self._send(200, json.dumps({"totalTokens": prompt_tokens(body, wire)}).encode(), JSON)
                    return
                turn = decide(body, wire, scripted)
                number = conversation_length(body)
                with endpoint.lock:
                    endpoint.replies += 1
                payload: bytes
                if wire == "anthropic":
                    message = anthropic_message(body, turn, number, endpoint.cache.account(body))
                    payload = anthropic_stream(message) if streamed else json.dumps(message).encode()
                elif wire == "responses":
                    response = responses_reply(body, turn, number)
                    payload = responses_stream(response) if streamed else json.dumps(response).encode()
                elif wire == "google":
                    reply = google_reply(body, turn, number, google_model(self.path))
                    payload = google_stream(reply) if streamed else json.dumps(reply).encode()
                else:
                    cached = endpoint.prefix_cache.account(body) if endpoint.prefix_cache else None
                    completion = chat_completion(body, turn, number, cached)
                    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                    payload = (
                        chat_completion_stream(completion, include_usage)
                        if streamed
                        else json.dumps(completion).encode()
                    )
                self._send(200, payload, SSE if streamed else JSON)

            def _send(
                self, code: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None
            ) -> None:
                send(self, code, payload, content_type, headers)

        return Handler


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
