"""The model engine: Inspect's model API (``get_model``, ``generate``) behind one synchronous call.

Inspect speaks to each provider through its own SDK: prompt caching (Anthropic's cache markers), reasoning
settings in each provider's form, thinking blocks carried across tool turns, usage with cache writes, cache
reads and reasoning tokens apart, and retries with backoff. discogym keeps its own loop, budgets, key
redaction, episode log and the rule that a fault of the endpoint is never counted against the model.

Inspect is asynchronous and discogym's episode driver is not: every model of a process lives on the process's one
event loop in a background thread, and an agent's thread waits for its reply there. Episodes played in several
threads at once (``--concurrency``) share the loop, the SDK clients and their connections (the loop and the models
kept for the process: :mod:`discogym.core.running.process`).
"""

import dataclasses
import math
import os
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import jsonref
import tenacity
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    Content,
    ContentImage,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolChoice, ToolInfo, ToolParams
from pydantic import BaseModel

from discogym.core import InfrastructureError, ToolImage, ToolSpec, Usage
from discogym.core.running.process import run_on_event_loop, shared
from discogym.llm.models import ModelSpec
from discogym.llm.redaction import Redactor
from discogym.llm.tokens import TokenCounter, token_counter

# Requests in flight per model and process: high, since --concurrency and --workers already bound how many
# episodes wait on a model at once (Inspect's own default would queue them behind ten connections).
MAX_CONNECTIONS = 1024
FIRST_BACKOFF_S = 3.0  # Inspect's first wait before a retry (doubling, with as much jitter, up to 30 minutes)
REFUSED_STATUSES = (400, 422)  # the endpoint would refuse the same request again
# How servers that Inspect does not read for it say that a request exceeds the model's window (llama.cpp's server:
# "request (1613 tokens) exceeds the available context size (1536 tokens), try increasing it").
OVERFLOW_PHRASES = ("exceeds the available context size",)
# Inspect turns some refusals into a reply with an error: these stop reasons say why.
REFUSALS = {
    "model_length": "the conversation no longer fits the model's context window",
    "content_filter": "the provider's content filter refused the request",
}
# Providers whose SDK client retries on its own unless told not to (the OpenAI and Anthropic SDKs and those
# built on them, as far as checked); Inspect's retries are the only ones wanted.
SDK_RETRYING_PROVIDERS = frozenset({"openai", "anthropic", "openai-compatible", "openrouter"})


@dataclass
class Attempts:
    """The failed attempts of one request (:meth:`ModelEngine.complete`), counted as Inspect retries them:
    ``failed`` of them, the last of which was the last one allowed if ``given_up``."""

    failed: int = 0
    given_up: bool = False

    def after_failure(self) -> int:
        """The failed attempts of a request that failed for good (tenacity asks for the wait before it stops,
        so the last one was counted; if a version of it did not, it is counted here)."""
        return self.failed if self.given_up else self.failed + 1


# The request being made in this task of the event loop: Inspect's retries run in the task that awaits generate.
REQUEST_ATTEMPTS: ContextVar[Attempts | None] = ContextVar("discogym_request_attempts", default=None)


class SaidRetries(tenacity.wait.wait_base):
    """Inspect's wait before a retry (``wait``), each retry said on standard error as it is scheduled (Inspect
    logs them below the level a run shows). After a timeout it says more: a server that answers one request at a
    time (llama.cpp's) is still working on the one that timed out, and the retry waits behind it."""

    def __init__(self, wait: tenacity.wait.wait_base, model: str) -> None:
        self.wait = wait
        self.model = model

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        seconds = float(self.wait(retry_state))
        stopping = retry_state.retry_object.stop(retry_state)
        attempts = REQUEST_ATTEMPTS.get()
        if attempts is not None:
            attempts.failed, attempts.given_up = retry_state.attempt_number, stopping
        failure = retry_state.outcome.exception() if retry_state.outcome is not None else None
        why = type(failure).__name__ if failure is not None else "an error"
        number = retry_state.attempt_number
        if stopping:
            print(
                f"discogym: {self.model}: attempt {number} failed ({why}); no retry left", file=sys.stderr, flush=True
            )
            return seconds
        said = f"discogym: {self.model}: attempt {number} failed ({why}); the next in {seconds:.1f} s"
        if "timeout" in why.lower():
            said += (
                "; a local server may still be answering the request that timed out, and the next waits behind it: "
                "a longer timeout_s (--agent-opt timeout_s=600) avoids that"
            )
        print(said, file=sys.stderr, flush=True)
        return seconds


class RejectedRequest(Exception):
    """The endpoint refused this request for good (it would refuse it again); ``spent`` counts the attempts
    that failed before (a refusal itself is not billed)."""

    def __init__(self, message: str, spent: Usage | None = None) -> None:
        super().__init__(message)
        self.spent = spent


class ContextOverflow(RejectedRequest):
    """The conversation no longer fits the model's context window."""


class EngineOptions(BaseModel):
    """How the engine asks its model: the ``llm`` agent's request settings."""

    timeout_s: float = 120.0
    retries: int = 4
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    reasoning_tokens: int | None = None
    cache: bool = True
    backoff_s: float | None = None
    tool_choice: Literal["auto", "required"] = "auto"

    def generate_config(self, max_tokens: int | None = None) -> GenerateConfig:
        """Inspect's settings for one request; ``max_tokens`` overrides the cap (a retry with more room)."""
        return GenerateConfig(
            max_retries=self.retries,
            attempt_timeout=math.ceil(self.timeout_s),
            max_connections=MAX_CONNECTIONS,
            max_tokens=max_tokens or self.max_tokens,
            temperature=self.temperature,
            reasoning_effort=self.reasoning_effort,  # validated by LLMSettings
            reasoning_tokens=self.reasoning_tokens,
            cache_prompt=self.cache,
        )


@dataclass
class Completion:
    """The model's reply: its text, calls and reasoning (the key taken out), the assistant message that joins
    the conversation, what it cost, and why it stopped (Inspect's ``stop_reason``)."""

    text: str
    tool_calls: list[InspectToolCall]
    reasoning: str | None
    message: ChatMessageAssistant
    usage: Usage
    stop_reason: str

    @property
    def out_of_room(self) -> bool:
        """It stopped at its output cap with nothing usable: the whole budget went to reasoning."""
        return self.stop_reason == "max_tokens" and not self.tool_calls and not self.text.strip()


class Engine(Protocol):
    """What the llm agent asks of a model: :class:`ModelEngine` asks a real one, the estimator's
    :class:`~discogym.llm.estimate.OfflineEngine` stands in for one offline."""

    @property
    def base_url(self) -> str | None:
        """The endpoint in use, as the episode's settings record it."""
        ...

    def default_max_tokens(self) -> int | None:
        """The output cap a request gets when none is set."""
        ...

    def complete(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        *,
        max_tokens: int | None = None,
        text_only: bool = False,
    ) -> Completion:
        """The model's next reply (see :meth:`ModelEngine.complete`)."""
        ...


def inspect_model(spec: ModelSpec, api_key: str, backoff_s: float | None = None) -> Model:
    """The Inspect model for ``spec``, one per model, endpoint, key and backoff in a process (so its SDK client
    and connections are shared by the episodes).

    Inspect retries; the SDK under it is told not to (where it would), so ``retries`` means what it says.
    ``backoff_s`` replaces Inspect's first wait between retries (3 s, doubling, with as much jitter); each retry
    is said (:class:`SaidRetries`).
    """
    model_args: dict[str, Any] = {"max_retries": 0} if spec.provider in SDK_RETRYING_PROVIDERS else {}

    async def made_on_loop() -> Model:  # its SDK client belongs to the loop it is made on
        return get_model(spec.inspect_name, base_url=spec.base_url, api_key=api_key, memoize=False, **model_args)

    def make() -> Model:
        model = run_on_event_loop(made_on_loop())
        first = FIRST_BACKOFF_S if backoff_s is None else backoff_s
        wait = SaidRetries(tenacity.wait_exponential_jitter(initial=first, max=30 * 60, jitter=first), spec.id)
        model.api.retry_wait = lambda: wait  # type: ignore[method-assign]  # ModelAPI's hook for its wait
        return model

    return shared(("inspect-model", spec.inspect_name, spec.base_url, api_key, backoff_s), make)


def inspect_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """A tool's JSON schema as Inspect takes it: references inlined (Inspect drops ``$ref``), and a description
    on every argument (Inspect requires one)."""
    inlined: dict[str, Any] = jsonref.replace_refs(parameters, proxies=False, lazy_load=False, merge_props=True)
    inlined.pop("$defs", None)
    properties = {
        name: {"description": name.replace("_", " "), **schema}
        for name, schema in inlined.get("properties", {}).items()
    }
    return {**inlined, "properties": properties}


def tool_info(spec: ToolSpec) -> ToolInfo:
    """A suite's tool as Inspect offers it to a model."""
    return ToolInfo(
        name=spec.name,
        description=spec.description,
        parameters=ToolParams.model_validate(inspect_schema(spec.parameters)),
    )


def contents(text: str, images: list[ToolImage]) -> str | list[Content]:
    """A message's content: its text, with the pictures after it."""
    if not images:
        return text
    pictures: list[Content] = [ContentImage(image=f"data:{i.media_type};base64,{i.data_base64}") for i in images]
    return [ContentText(text=text), *pictures]


def usage_of(usage: ModelUsage | None) -> Usage:
    """Inspect's usage (input apart from cache reads and writes) as discogym counts it (all input)."""
    if usage is None:
        return Usage()
    read = usage.input_tokens_cache_read or 0
    written = usage.input_tokens_cache_write or 0
    return Usage(
        input_tokens=usage.input_tokens + read + written,
        output_tokens=usage.output_tokens,
        cached_tokens=read,
        cache_write_tokens=written,
        reasoning_tokens=usage.reasoning_tokens or 0,
    )


def _cause(err: BaseException) -> BaseException:
    """The failure behind Inspect's retries: tenacity's RetryError wraps the last attempt's."""
    if isinstance(err, tenacity.RetryError):
        last = err.last_attempt.exception()
        return last if last is not None else err
    return err


class ModelEngine:
    """One model behind its endpoint, asked synchronously."""

    def __init__(self, spec: ModelSpec, api_key: str, options: EngineOptions) -> None:
        self.spec = spec
        self.options = options
        self.redact = Redactor(api_key)
        self.model = inspect_model(spec, api_key, options.backoff_s)
        self._counter: TokenCounter | None = None

    @property
    def base_url(self) -> str | None:
        """The endpoint in use (None: the provider's own): the model string's ``@URL``, else the provider's
        ``*_BASE_URL`` variable (which Inspect reads, as the SDKs do)."""
        variable = f"{self.spec.provider.upper().replace('-', '_')}_BASE_URL"
        return self.spec.base_url or self.model.api.base_url or os.environ.get(variable) or None

    def default_max_tokens(self) -> int | None:
        """The output cap a request gets when none is set (the provider's default, as Inspect sends it)."""
        return self.options.max_tokens or self.model.api.max_tokens()

    def complete(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        *,
        max_tokens: int | None = None,
        text_only: bool = False,
    ) -> Completion:
        """The model's next reply; ``tools`` empty means plain text (the text protocols), and ``text_only`` offers
        the tools but forbids calling them (a summary of a conversation that holds calls).

        Raises :class:`RejectedRequest` when the endpoint refuses the request for good, and
        :class:`~discogym.core.model.errors.InfrastructureError` for any other failure after retries.
        """
        config = self.options.generate_config(max_tokens)
        choice: ToolChoice | None = None
        if tools:
            choice = "none" if text_only else "any" if self.options.tool_choice == "required" else None
        attempts = Attempts()

        async def generate() -> ModelOutput:
            REQUEST_ATTEMPTS.set(attempts)  # in this task only
            return await self.model.generate(messages, tools=tools, tool_choice=choice, config=config)

        try:
            output = run_on_event_loop(generate())
        except Exception as raised:
            err = _cause(raised)
            status = getattr(err, "status_code", None) or getattr(err, "code", None)
            if status in REFUSED_STATUSES:
                said = self._redacted(err)
                refusal = ContextOverflow if any(phrase in said for phrase in OVERFLOW_PHRASES) else RejectedRequest
                raise refusal(said, self._failed(attempts.failed, messages, tools)) from None
            fault = InfrastructureError(f"model endpoint {self.spec.id} failed after retries: {self._redacted(err)}")
            fault.add_spent(self._failed(attempts.after_failure(), messages, tools))
            raise fault from None
        failed = self._failed(attempts.failed, messages, tools)
        if output.stop_reason in REFUSALS and not output.message.tool_calls:
            said = self.redact(output.error or output.message.text)
            refusal = ContextOverflow if output.stop_reason == "model_length" else RejectedRequest
            raise refusal(f"{REFUSALS[output.stop_reason]}: {said}", failed)
        if output.error:
            said = self.redact(output.error)
            fault = InfrastructureError(f"model endpoint {self.spec.id} failed after retries: {said}")
            fault.add_spent(self._failed(attempts.after_failure(), messages, tools))
            raise fault
        completion = self._completion(output)
        if failed is not None:
            completion.usage = completion.usage + failed
        return completion

    def _failed(self, attempts: int, messages: list[ChatMessage], tools: list[ToolInfo]) -> Usage | None:
        """What ``attempts`` failed attempts of a request of ``messages`` and ``tools`` are known to have cost:
        their number and the input they sent as counted here (None when none failed)."""
        if attempts == 0:
            return None
        if self._counter is None:
            self._counter, _ = token_counter(self.spec)
        return Usage(failed_attempts=attempts, failed_input_tokens=attempts * self._counter.prompt(messages, tools))

    def _redacted(self, err: BaseException) -> str:
        """The error's message, without the API key should an endpoint echo it: the provider's own words where
        Inspect keeps them apart (its ModelGenerateError also quotes the whole request)."""
        said = getattr(err, "provider_message", None) or str(err)
        return self.redact(f"{type(err).__name__}: {said}")

    def _completion(self, output: ModelOutput) -> Completion:
        """The reply, with the key taken out of everything stored or sent back (a signed reasoning block that
        holds the key is left out of the conversation: it cannot be changed without breaking its signature)."""
        message = output.message
        calls = [self._without_key(call) for call in message.tool_calls or []]
        kept: list[Any] = []
        reasonings: list[str] = []
        for part in message.content if isinstance(message.content, list) else []:
            if isinstance(part, ContentReasoning):
                shown = part.summary if part.redacted else part.reasoning
                clean = self.redact(shown or "")
                if clean:
                    reasonings.append(clean)
                if clean == (shown or ""):
                    kept.append(part)
            elif isinstance(part, ContentText):
                kept.append(part.model_copy(update={"text": self.redact(part.text)}))
            else:
                kept.append(part)
        text = self.redact(message.text)
        content: str | list[Any] = kept if isinstance(message.content, list) else text
        reply = message.model_copy(update={"content": content, "tool_calls": calls or None})
        return Completion(
            text=text,
            tool_calls=calls,
            reasoning="\n\n".join(reasonings) or None,
            message=reply,
            usage=usage_of(output.usage),
            stop_reason=output.stop_reason,
        )

    def _without_key(self, call: InspectToolCall) -> InspectToolCall:
        return dataclasses.replace(
            call,
            id=self.redact(call.id),
            function=self.redact(call.function),
            arguments=self._redact_json(call.arguments),
            parse_error=self.redact(call.parse_error) if call.parse_error else None,
        )

    def _redact_json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(str(k)): self._redact_json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._redact_json(item) for item in value]
        return value
