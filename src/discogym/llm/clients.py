"""Two chat clients over the official SDKs, behind one small interface.

The agent loop speaks in :class:`ChatMessage`; each client turns that into its wire format, calls the
SDK (which retries 429s, 5xx, timeouts and dropped connections with backoff, honouring ``retry-after``),
and turns the reply into a :class:`Completion`. A fault the SDK's retries could not overcome becomes an
:class:`~discogym.core.model.errors.InfrastructureError`; a request the endpoint refuses for good (HTTP 400,
422: a conversation too long for the model, say) becomes :class:`RejectedRequest`.
"""

import json
import os
from abc import ABC, abstractmethod
from functools import cache
from typing import Any, Literal

import anthropic
import openai
from pydantic import BaseModel, Field

from discogym.core import InfrastructureError, ToolImage, ToolSpec, Usage
from discogym.llm.models import ModelSpec
from discogym.llm.redaction import Redactor


class ModelToolCall(BaseModel):
    """A tool call as the model wrote it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


class ChatMessage(BaseModel):
    """One message of the conversation, independent of the provider."""

    role: Literal["system", "user", "assistant", "tool"]
    text: str = ""
    images: list[ToolImage] = Field(default_factory=list)
    tool_calls: list[ModelToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None


class Completion(BaseModel):
    """The model's reply."""

    text: str
    tool_calls: list[ModelToolCall]
    usage: Usage


class RejectedRequest(Exception):
    """The endpoint refused this request for good (it would refuse it again)."""


class ClientOptions(BaseModel):
    """How a client talks to its endpoint."""

    timeout_s: float = 120.0
    max_retries: int = 4
    max_tokens: int | None = None
    temperature: float | None = None


class ChatClient(ABC):
    """A model behind an endpoint."""

    def __init__(self, spec: ModelSpec, api_key: str, options: ClientOptions) -> None:
        self.spec = spec
        self._api_key = api_key
        self.redact = Redactor(api_key)
        self.options = options
        self.base_url: str | None = spec.base_url  # the endpoint in use (None: the provider's own)

    @abstractmethod
    def complete(self, messages: list[ChatMessage], tools: list[ToolSpec] | None) -> Completion:
        """The model's next reply; ``tools`` None means plain text (the text protocols)."""

    def _redact(self, err: BaseException) -> str:
        """The error's message, without the API key should an endpoint echo it."""
        return self.redact(f"{type(err).__name__}: {err}")

    def _fault(self, err: BaseException) -> InfrastructureError:
        return InfrastructureError(f"model endpoint {self.spec.id} failed after retries: {self._redact(err)}")

    def _without_key(self, completion: Completion) -> Completion:
        """The reply with the API key taken out of its text and calls, should the model repeat it: the reply
        is stored in the episode and sent back to the model."""
        calls = [
            ModelToolCall(id=self.redact(c.id), name=self.redact(c.name), arguments=self.redact(c.arguments))
            for c in completion.tool_calls
        ]
        return completion.model_copy(update={"text": self.redact(completion.text), "tool_calls": calls})


def _data_url(image: ToolImage) -> str:
    return f"data:{image.media_type};base64,{image.data_base64}"


def _openai_user_content(text: str, images: list[ToolImage]) -> str | list[dict[str, Any]]:
    if not images:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    parts.extend({"type": "image_url", "image_url": {"url": _data_url(image)}} for image in images)
    return parts


def openai_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation in the chat-completions format.

    Tool messages carry text only there, so the images of a run of tool results follow it as one user
    message.
    """
    wire: list[dict[str, Any]] = []
    pending_images: list[ToolImage] = []
    for message in messages:
        if message.role != "tool" and pending_images:
            wire.append({"role": "user", "content": _openai_user_content("Images from the tools:", pending_images)})
            pending_images = []
        if message.role == "tool":
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text})
            pending_images.extend(message.images)
            continue
        entry: dict[str, Any] = {"role": message.role, "content": _openai_user_content(message.text, message.images)}
        if message.tool_calls:
            entry["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ]
        wire.append(entry)
    if pending_images:
        wire.append({"role": "user", "content": _openai_user_content("Images from the tools:", pending_images)})
    return wire


# One SDK client per endpoint and settings in a process: making one loads the system's CA certificates
# (about 20 ms), and a shared client keeps its connections open from one episode to the next.
@cache
def _openai_sdk(base_url: str | None, api_key: str, timeout_s: float, max_retries: int) -> openai.OpenAI:
    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries)


@cache
def _anthropic_sdk(base_url: str | None, api_key: str, timeout_s: float, max_retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries)


class OpenAIChat(ChatClient):
    """Chat completions on OpenAI or any OpenAI-compatible server (vLLM, Ollama, llama.cpp, ...)."""

    def __init__(self, spec: ModelSpec, api_key: str, options: ClientOptions) -> None:
        super().__init__(spec, api_key, options)
        self.base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or None  # read now: clients are shared
        self.client = _openai_sdk(self.base_url, api_key, options.timeout_s, options.max_retries)

    def complete(self, messages: list[ChatMessage], tools: list[ToolSpec] | None) -> Completion:
        request: dict[str, Any] = {"model": self.spec.name, "messages": openai_messages(messages)}
        if tools is not None:
            request["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
        if self.options.max_tokens is not None:
            # OpenAI's reasoning models accept only the newer name; other servers know the older one.
            cap = "max_completion_tokens" if self.spec.provider == "openai" else "max_tokens"
            request[cap] = self.options.max_tokens
        if self.options.temperature is not None:
            request["temperature"] = self.options.temperature
        try:
            response = self.client.chat.completions.create(**request)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as err:
            raise RejectedRequest(self._redact(err)) from None
        except (openai.OpenAIError, ValueError, RecursionError) as err:  # a reply body that is not JSON, or too deep
            raise self._fault(err) from None
        try:
            return self._without_key(self._read(response))
        except (AttributeError, TypeError, ValueError, IndexError, RecursionError) as err:
            raise self._fault(ValueError(f"the reply is not a chat completion ({err})")) from None

    @staticmethod
    def _read(response: Any) -> Completion:
        message = response.choices[0].message
        calls = [
            ModelToolCall(id=str(c.id), name=str(c.function.name), arguments=c.function.arguments or "")
            for c in message.tool_calls or []
            if getattr(c, "function", None) is not None
        ]
        usage = response.usage
        details = getattr(usage, "prompt_tokens_details", None)
        return Completion(
            text=message.content or "",
            tool_calls=calls,
            usage=Usage(
                input_tokens=(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=(usage.completion_tokens or 0) if usage else 0,
                cached_tokens=(details.cached_tokens or 0) if details else 0,
            ),
        )


def _anthropic_image(image: ToolImage) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data_base64}}


def _anthropic_content(text: str, images: list[ToolImage]) -> str | list[dict[str, Any]]:
    if not images:
        return text
    return [{"type": "text", "text": text}, *(_anthropic_image(image) for image in images)]


def _as_object(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def anthropic_messages(messages: list[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The system text and the conversation in Anthropic's messages format (tool results, with their
    images, go in the next user turn)."""
    system = "\n\n".join(m.text for m in messages if m.role == "system")
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": _anthropic_content(message.text, message.images),
            }
            if wire and wire[-1]["role"] == "user" and isinstance(wire[-1]["content"], list):
                wire[-1]["content"].append(block)
            else:
                wire.append({"role": "user", "content": [block]})
            continue
        if message.role == "assistant" and message.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _as_object(c.arguments)}
                for c in message.tool_calls
            )
            wire.append({"role": "assistant", "content": blocks})
            continue
        wire.append({"role": message.role, "content": _anthropic_content(message.text, message.images)})
    return system, wire


ANTHROPIC_DEFAULT_MAX_TOKENS = 4096


class AnthropicChat(ChatClient):
    """Anthropic's messages API."""

    def __init__(self, spec: ModelSpec, api_key: str, options: ClientOptions) -> None:
        super().__init__(spec, api_key, options)
        self.base_url = spec.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None  # read now: clients are shared
        self.client = _anthropic_sdk(self.base_url, api_key, options.timeout_s, options.max_retries)

    def complete(self, messages: list[ChatMessage], tools: list[ToolSpec] | None) -> Completion:
        system, wire = anthropic_messages(messages)
        request: dict[str, Any] = {
            "model": self.spec.name,
            "max_tokens": self.options.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS,
            "messages": wire,
        }
        if system:
            request["system"] = system
        if tools is not None:
            request["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
        if self.options.temperature is not None:
            request["temperature"] = self.options.temperature
        try:
            response = self.client.messages.create(**request)
        except (anthropic.BadRequestError, anthropic.UnprocessableEntityError) as err:
            raise RejectedRequest(self._redact(err)) from None
        except (anthropic.AnthropicError, ValueError, RecursionError) as err:  # a body not JSON, or too deep
            raise self._fault(err) from None
        try:
            return self._without_key(self._read(response))
        except (AttributeError, TypeError, ValueError, RecursionError) as err:
            raise self._fault(ValueError(f"the reply is not a message ({err})")) from None

    @staticmethod
    def _read(response: Any) -> Completion:
        texts, calls = [], []
        for block in response.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ModelToolCall(id=str(block.id), name=str(block.name), arguments=json.dumps(block.input)))
        usage = response.usage
        cache_read = getattr(usage, "cache_read_input_tokens", None) or 0
        cache_write = getattr(usage, "cache_creation_input_tokens", None) or 0
        return Completion(
            text="\n".join(texts),
            tool_calls=calls,
            usage=Usage(
                # Anthropic counts cache reads and writes apart from input_tokens; Usage counts all input.
                input_tokens=(usage.input_tokens or 0) + cache_read + cache_write,
                output_tokens=usage.output_tokens or 0,
                cached_tokens=cache_read,
            ),
        )


def make_client(spec: ModelSpec, api_key: str, options: ClientOptions) -> ChatClient:
    """The client for ``spec``'s provider."""
    if spec.provider == "anthropic":
        return AnthropicChat(spec, api_key, options)
    return OpenAIChat(spec, api_key, options)
