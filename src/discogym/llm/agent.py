"""The language-model agent: one loop over three ways of acting.

- ``mode=native``: the endpoint's own tool calling. Several calls in one reply are made in order before
  the model is asked again.
- ``mode=text``: for endpoints without tool calling; every reply must be exactly one JSON object
  ``{"tool": NAME, "args": {...}}``.
- ``mode=suite``: the suite's own text syntax and system prompt (e.g. Plancraft's ``move: from [I1] to
  [A1] with quantity 1``), parsed by the environment.

In the text modes a reply that cannot be read gets one in-protocol retry (the model is told what was
wrong); a second unreadable reply ends the episode as a logged no-answer, as does a request the endpoint
refuses for good.
"""

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discogym.core import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentOptions,
    InfrastructureError,
    Termination,
    ToolCall,
    ToolError,
    ToolSpec,
    Turn,
    Usage,
    UserError,
)
from discogym.core.model.errors import MissingCredentials
from discogym.core.model.tools import parse_json
from discogym.llm.clients import (
    ChatClient,
    ChatMessage,
    ClientOptions,
    Completion,
    ModelToolCall,
    RejectedRequest,
    make_client,
)
from discogym.llm.models import ModelSpec, Price, find_price, parse_model, price_table
from discogym.llm.prompts import SYSTEM_PROMPT

TEXT_PROTOCOL = (
    "Act by replying with exactly one JSON object and nothing else, of the form "
    '{"tool": "<tool name>", "args": {<arguments>}}. One call per reply; its result comes back as the '
    "next message. The tools:\n"
)
EMPTY_REPLY = "(empty reply)"


class LLMSettings(BaseModel):
    """Options of the ``llm`` agent, given as ``--agent-opt KEY=VALUE``."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["native", "text", "suite"] = "native"
    images: bool = True
    timeout_s: float = Field(default=120.0, gt=0)
    retries: int = Field(default=4, ge=0, le=20)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0)
    key_env: str | None = None


def describe_tools(tools: list[ToolSpec]) -> str:
    """The tools as the text protocol lists them: name, description, argument schema."""
    return "\n".join(
        f"- {t.name}: {t.description} Arguments (JSON schema): {json.dumps(t.parameters, sort_keys=True)}"
        for t in tools
    )


_FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def parse_json_call(text: str) -> ToolCall:
    """The single ``{"tool": ..., "args": {...}}`` object a text-protocol reply must be, or ValueError.

    The whole reply must be that object; a surrounding markdown code fence is tolerated.
    """
    body = text.strip()
    fenced = _FENCED.fullmatch(body)
    if fenced:
        body = fenced.group(1)
    value = parse_json(body, "the reply is")
    if not isinstance(value, dict):
        raise ValueError(f"the reply is a JSON {type(value).__name__}, not an object")
    unknown = sorted(set(value) - {"tool", "args"})
    if unknown:
        raise ValueError(f'the object may hold only "tool" and "args", not {", ".join(map(repr, unknown))}')
    if not isinstance(value.get("tool"), str):
        raise ValueError('the object needs "tool": the name of a tool, as a string')
    args = value.get("args", {})
    if not isinstance(args, dict):
        raise ValueError('"args" must be a JSON object')
    return ToolCall(tool=value["tool"], args=args)


def _arguments(raw: str) -> Any:
    """A native call's arguments as an object when they parse; otherwise the raw text, which the
    environment then rejects with a message the model reads."""
    try:
        value = json.loads(raw or "{}")
    except (json.JSONDecodeError, RecursionError):
        return raw
    return value if isinstance(value, dict) else raw


class LLMAgent(Agent):
    """A model behind an endpoint, playing one episode."""

    def __init__(self, spec: ModelSpec, client: ChatClient, config: LLMSettings, price: Price | None) -> None:
        self.spec = spec
        self.client = client
        self.config = config
        self.price = price
        self.messages: list[ChatMessage] = []
        self.tools: list[ToolSpec] = []
        self.parse_text_action: Any = None
        self.queued: list[ModelToolCall] = []  # calls of the last native reply still to make
        self.answering: ModelToolCall | None = None
        self.requests = 0

    def start(self, context: AgentContext) -> None:
        self.tools = context.tools
        system = context.system_prompt or SYSTEM_PROMPT
        if self.config.mode == "text":
            system += "\n\n" + TEXT_PROTOCOL + describe_tools(self.tools)
        elif self.config.mode == "suite":
            if context.text_prompt is None or context.parse_text_action is None:
                raise UserError("mode=suite: this suite has no text syntax of its own; use mode=native or text")
            system = context.text_prompt
            self.parse_text_action = context.parse_text_action
        images = context.brief_images if self.config.images else []
        self.messages = [
            ChatMessage(role="system", text=system),
            ChatMessage(role="user", text=context.brief, images=images),
        ]

    def settings(self) -> dict[str, Any]:
        return {
            "model": self.spec.id,
            "base_url": self.client.base_url,
            "key_variable": self.spec.key_variable,
            "price_per_million_tokens": None if self.price is None else self.price.model_dump(),
            **self.config.model_dump(exclude={"key_env"}),
        }

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if history:
            self._answer(history[-1])
        if self.queued:
            self.answering = self.queued.pop(0)
            return AgentDecision(call=ToolCall(tool=self.answering.name, args=_arguments(self.answering.arguments)))
        return self._ask()

    def _ask(self) -> AgentDecision:
        usage = Usage()
        replies: list[str] = []
        problem = ""
        for attempt in range(2):  # the reply, and one in-protocol retry after an unreadable one
            first_request = self.requests == 0
            self.requests += 1
            try:
                completion = self.client.complete(self.messages, self.tools if self.config.mode == "native" else None)
            except RejectedRequest as err:
                if first_request:  # nothing the model did: the model name or an option is wrong for this endpoint
                    raise InfrastructureError(f"the endpoint refused the episode's first request: {err}") from err
                message = f"the endpoint refused the request: {err}"
                return AgentDecision(message=message, usage=usage, termination=Termination.NO_ANSWER)
            usage = usage + self._priced(completion.usage)
            replies.append(completion.text)
            call, problem = self._read(completion)
            if call is not None:
                return AgentDecision(call=call, message="\n\n".join(filter(None, replies)) or None, usage=usage)
            if attempt == 0:
                self.messages.append(
                    ChatMessage(role="user", text=f"Your reply could not be used: {problem}. {self._rules()}")
                )
        last = replies[-1][:2000] if replies else ""
        return AgentDecision(message=f"{problem}; last reply: {last!r}", usage=usage, termination=Termination.NO_ANSWER)

    def _rules(self) -> str:
        if self.config.mode == "native":
            return "Call one of the tools."
        if self.config.mode == "text":
            return TEXT_PROTOCOL.split(" The tools:")[0]
        return "Answer in the action syntax the instructions describe."

    def _read(self, completion: Completion) -> tuple[ToolCall | None, str]:
        """The call a reply makes, or None and what was wrong with it; the reply joins the conversation."""
        if self.config.mode == "native":
            text = completion.text or ("" if completion.tool_calls else EMPTY_REPLY)
            self.messages.append(ChatMessage(role="assistant", text=text, tool_calls=completion.tool_calls))
            if not completion.tool_calls:
                return None, "it called no tool"
            self.answering, *self.queued = completion.tool_calls
            return ToolCall(tool=self.answering.name, args=_arguments(self.answering.arguments)), ""
        self.messages.append(ChatMessage(role="assistant", text=completion.text or EMPTY_REPLY))
        try:
            if self.config.mode == "text":
                return parse_json_call(completion.text), ""
            return self.parse_text_action(completion.text), ""
        except (ValueError, ValidationError, ToolError) as err:
            return None, str(err)

    def _answer(self, turn: Turn) -> None:
        """Put the result of the agent's last call into the conversation."""
        result = turn.result
        images = result.images if self.config.images else []
        if self.config.mode == "native" and self.answering is not None:
            self.messages.append(
                ChatMessage(role="tool", tool_call_id=self.answering.id, text=result.text, images=images)
            )
            self.answering = None
            return
        text = result.text if self.config.mode == "suite" else f"Result of {turn.call.tool}: {result.text}"
        self.messages.append(ChatMessage(role="user", text=text, images=images))

    def _priced(self, usage: Usage) -> Usage:
        if self.price is None:
            return usage
        return usage.model_copy(update={"cost_usd": self.price.cost(usage)})


def llm_settings(options: AgentOptions) -> LLMSettings:
    """The ``llm`` agent's settings from ``--agent-opt``, or a UserError naming the bad one."""
    try:
        return LLMSettings.model_validate(options.options)
    except ValidationError as err:
        problem = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        message = "unknown option" if problem["type"] == "extra_forbidden" else problem["msg"]
        accepted = ", ".join(LLMSettings.model_fields)
        raise UserError(f"agent 'llm': --agent-opt {where}: {message} (options: {accepted})") from None


def make_llm_agent(options: AgentOptions) -> Agent:
    """The ``llm`` agent for ``--model``; raises MissingCredentials when its key is not set."""
    if not options.model:
        raise UserError("agent 'llm' needs --model, e.g. openai/gpt-5 or openai-compatible/NAME@http://HOST:PORT/v1")
    settings = llm_settings(options)
    spec = parse_model(options.model, settings.key_env)
    price = find_price(spec, price_table())
    if options.cost_limit is not None and price is None:
        raise UserError(
            f"--cost-limit needs a price for {spec.id}: add one with a DISCOGYM_PRICES file (see docs/llm.md)"
        )
    key = spec.api_key()
    if key is None:
        raise MissingCredentials(f"{options.model}: no API key; set {spec.key_variable} to run it")
    client_options = ClientOptions(
        timeout_s=settings.timeout_s,
        max_retries=settings.retries,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
    )
    return LLMAgent(spec, make_client(spec, key, client_options), settings, price)
