"""Counting the tokens of a prompt for a cost estimate: the model's own tokenizer where one works offline, else a
quarter of the characters.

OpenAI's models are counted with tiktoken and the encoding tiktoken names for the model (``o200k_base`` for GPT-4o,
GPT-4.1, GPT-5 and the o-series). tiktoken downloads an encoding's file on first use and keeps it in its cache; where
that cannot be reached, ``o200k_base`` is taken from the ``quicktok-v1`` package (in the ``llm`` extra), which ships
the same ranks: they are written into tiktoken's cache only when they hash to the SHA-256 tiktoken itself expects
(:data:`O200K_SHA256`), and tiktoken checks that hash again when it loads them. Anthropic's and Google's token
counters are calls to their APIs (none works offline), so their models, and every model without an installable
tokenizer, are counted as a quarter of the characters (:data:`~discogym.llm.context.CHARS_PER_TOKEN`). A model
served by llama.cpp's server is counted by the server itself (:class:`LlamaCppCounter`): its own chat template and
tokenizer, exactly as it will count the request. Whichever is
used is named by :attr:`TokenCounter.name`.
"""

import base64
import hashlib
import json
import os
import struct
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ContentImage, ContentText, messages_to_openai
from inspect_ai.tool import ToolInfo

from discogym.core.running.process import run_on_event_loop
from discogym.llm.context import CHARS_PER_TOKEN, IMAGE_TOKENS, estimate_tokens
from discogym.llm.models import ModelSpec
from discogym.llm.servers import ASK_SECONDS, llama_cpp_root

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"  # tiktoken's cache key
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # what tiktoken expects of it
QUICKTOK = ("quicktok-v1", "quicktok/data/o200k.vocab")  # the package, and its file of o200k_base's ranks
MESSAGE_TOKENS = 3  # the framing of each message in a chat prompt (role and separators), as OpenAI counts it
OPENAI_PROVIDERS = ("openai", "azureai")
QUARTER = "characters/4"


class TokenCounter:
    """Counts prompts and replies; :attr:`name` says how (``tiktoken o200k_base``, or ``characters/4``)."""

    name = QUARTER
    exact = False  # whether it is the model's own tokenizer

    def text(self, text: str) -> int:
        """The tokens of a piece of text."""
        return len(text) // CHARS_PER_TOKEN

    def prompt(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
        """The input tokens of a request of ``messages`` offering ``tools``."""
        return estimate_tokens(messages, tools)


class TiktokenCounter(TokenCounter):
    """A tiktoken encoding; each message adds :data:`MESSAGE_TOKENS`, each image
    :data:`~discogym.llm.context.IMAGE_TOKENS`. Counts of texts are remembered: a conversation sends the same
    messages again and again."""

    exact = True

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding
        self.name = f"tiktoken {encoding.name}"
        self.counted: dict[str, int] = {}

    def text(self, text: str) -> int:
        count = self.counted.get(text)
        if count is None:
            count = len(self.encoding.encode(text, disallowed_special=()))
            self.counted[text] = count
        return count

    def prompt(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
        total = sum(self.text(json.dumps(tool.model_dump(exclude_none=True))) for tool in tools)
        for message in messages:
            total += MESSAGE_TOKENS
            if isinstance(message.content, str):
                total += self.text(message.content)
            else:
                for part in message.content:
                    if isinstance(part, ContentText):
                        total += self.text(part.text)
                    elif isinstance(part, ContentImage):
                        total += IMAGE_TOKENS
                    else:
                        total += self.text(str(getattr(part, "reasoning", "")))
            if isinstance(message, ChatMessageAssistant):
                for call in message.tool_calls or []:
                    total += self.text(call.function) + self.text(json.dumps(call.arguments))
        return total


class LlamaCppCounter(TokenCounter):
    """A llama.cpp server's own count, for a model it serves: a prompt rendered by the server's chat template
    (``POST /apply-template``, with the tools) and counted by its tokenizer (``POST /tokenize``), which is how the
    server counts the request. Where the server cannot be asked, the quarter of the characters stands in."""

    exact = True
    name = "llama.cpp's own template and tokenizer (the server's /apply-template and /tokenize)"

    def __init__(self, root: str) -> None:
        self.root = root

    def text(self, text: str) -> int:
        tokens = self._ask("/tokenize", {"content": text})
        return len(tokens["tokens"]) if tokens is not None else super().text(text)

    def prompt(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
        request: dict[str, Any] = {"messages": run_on_event_loop(messages_to_openai(messages))}
        if tools:
            request["tools"] = [{"type": "function", "function": tool.model_dump(exclude_none=True)} for tool in tools]
        rendered = self._ask("/apply-template", request)
        if rendered is None or not isinstance(rendered.get("prompt"), str):
            return super().prompt(messages, tools)
        tokens = self._ask("/tokenize", {"content": rendered["prompt"], "add_special": True, "parse_special": True})
        return len(tokens["tokens"]) if tokens is not None else super().prompt(messages, tools)

    def _ask(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        try:
            answer = httpx.post(self.root + path, json=body, timeout=ASK_SECONDS)
            answer.raise_for_status()
            document = answer.json()
        except (httpx.HTTPError, ValueError):
            return None
        return document if isinstance(document, dict) else None


def token_counter(spec: ModelSpec) -> tuple[TokenCounter, str]:
    """The counter for ``spec``'s model, and why it is that one (said beside the estimate)."""
    if spec.provider == "openai-compatible" and spec.base_url and (root := llama_cpp_root(spec.base_url)):
        return LlamaCppCounter(root), f"the model's own tokenizer, asked of its llama.cpp server at {root}"
    if spec.provider not in OPENAI_PROVIDERS:
        return TokenCounter(), f"no offline tokenizer for {spec.provider}'s models"
    try:
        import tiktoken
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return TokenCounter(), "tiktoken is not installed"
    try:
        name = encoding_name_for_model(spec.name)
    except KeyError:
        return TokenCounter(), f"tiktoken knows no encoding for {spec.name}"
    if not _offline(name):
        return TokenCounter(), f"tiktoken's {name} is neither in its cache nor shipped by an installed package"
    return TiktokenCounter(tiktoken.get_encoding(name)), f"{spec.name}'s own encoding"


@cache
def _offline(encoding: str) -> bool:
    """Whether tiktoken can load ``encoding`` without a download: its file in tiktoken's cache, put there from
    ``quicktok-v1`` if need be (``o200k_base`` and ``o200k_harmony``, whose ranks are o200k_base's)."""
    if encoding not in ("o200k_base", "o200k_harmony"):
        return False
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if cache_dir == "":  # the user turned tiktoken's cache off: it would download every time
        return False
    folder = Path(cache_dir) if cache_dir is not None else Path(tempfile.gettempdir()) / "data-gym-cache"
    cached = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if cached.is_file() and hashlib.sha256(cached.read_bytes()).hexdigest() == O200K_SHA256:
        return True
    ranks = shipped_o200k()
    if ranks is None:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    partial.write_bytes(ranks)
    partial.replace(cached)
    return True


def shipped_o200k() -> bytes | None:
    """o200k_base's ranks in tiktoken's file format, from the installed ``quicktok-v1`` (read as data, never
    imported), or None when it is not installed or its ranks are not exactly o200k_base's."""
    try:
        path = Path(str(metadata.distribution(QUICKTOK[0]).locate_file(QUICKTOK[1])))
        data = path.read_bytes()
    except (metadata.PackageNotFoundError, OSError):
        return None
    try:  # a count, then per token: its length (2 bytes), its bytes, its rank (4 bytes), little-endian
        (count,) = struct.unpack_from("<I", data, 0)
        offset, lines = 4, []
        for _ in range(count):
            (length,) = struct.unpack_from("<H", data, offset)
            token = data[offset + 2 : offset + 2 + length]
            (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
            offset += 6 + length
            lines.append(base64.b64encode(token) + b" " + str(rank).encode())
    except struct.error:
        return None
    text = b"\n".join(lines) + b"\n"
    return text if hashlib.sha256(text).hexdigest() == O200K_SHA256 else None
