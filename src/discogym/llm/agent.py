"""The language-model agent: one loop over three ways of acting.

- ``mode=native``: the endpoint's own tool calling. Several calls in one reply are made in order before
  the model is asked again.
- ``mode=text``: for endpoints without tool calling; every reply must be exactly one JSON object
  ``{"tool": NAME, "args": {...}}``.
- ``mode=suite``: the suite's own text syntax and system prompt (e.g. Plancraft's ``move: from [I1] to
  [A1] with quantity 1``), parsed by the environment.

In the text modes a reply that cannot be read gets one in-protocol retry (the model is told what was
wrong); a second unreadable reply ends the episode as a logged no-answer, as does a request the endpoint
refuses for good. A reply that spent its whole output budget on reasoning is asked again once with twice the
room. The model is reached through :mod:`discogym.llm.engine` (Inspect's model API).
"""

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolInfo
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.text import Text

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
from discogym.llm.context import context_policy
from discogym.llm.engine import (
    Completion,
    ContextOverflow,
    EngineOptions,
    ModelEngine,
    RejectedRequest,
    contents,
    tool_info,
)
from discogym.llm.models import ModelFacts, ModelSpec, Price, model_facts, parse_model, price_table
from discogym.llm.prompts import SYSTEM_PROMPT

TEXT_PROTOCOL = (
    "Act by replying with exactly one JSON object and nothing else, of the form "
    '{"tool": "<tool name>", "args": {<arguments>}}. One call per reply; its result comes back as the '
    "next message. The tools:\n"
)
EMPTY_REPLY = "(empty reply)"
ACTION_ROOM = 4096  # output tokens kept for the reply itself beyond a reasoning budget


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
    cache: bool = True
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None
    reasoning_tokens: int | None = Field(default=None, ge=1)
    backoff_s: float | None = Field(default=None, gt=0)
    context: Literal["full", "window"] = "full"
    window_turns: int = Field(default=20, ge=1)

    def engine_options(self) -> EngineOptions:
        """The request settings; a reasoning budget gets an output cap with room for the action after it."""
        max_tokens = self.max_tokens
        if self.reasoning_tokens is not None and (max_tokens is None or max_tokens <= self.reasoning_tokens):
            max_tokens = self.reasoning_tokens + ACTION_ROOM
        shared = self.model_dump(include=set(EngineOptions.model_fields) - {"max_tokens"})
        return EngineOptions(**shared, max_tokens=max_tokens)


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


def _decision_call(call: InspectToolCall) -> ToolCall:
    """A native call as the environment takes it; arguments that did not parse reach it as their parse error,
    which it rejects with a message the model reads."""
    return ToolCall(tool=call.function, args=call.parse_error if call.parse_error else call.arguments)


class LLMAgent(Agent):
    """A model behind an endpoint, playing one episode."""

    def __init__(self, spec: ModelSpec, engine: ModelEngine, config: LLMSettings, facts: ModelFacts) -> None:
        self.spec = spec
        self.engine = engine
        self.config = config
        self.facts = facts
        self.messages: list[ChatMessage] = []
        self.tools: list[ToolInfo] = []
        self.parse_text_action: Any = None
        self.queued: list[InspectToolCall] = []  # calls of the last native reply still to make
        self.answering: InspectToolCall | None = None
        self.requests = 0
        self.context = context_policy(config.context, config.window_turns)

    @property
    def price(self) -> Price | None:
        """The price the episode's costs are charged at."""
        return self.facts.price

    def start(self, context: AgentContext) -> None:
        self.tools = [tool_info(spec) for spec in context.tools] if self.config.mode == "native" else []
        system = context.system_prompt or SYSTEM_PROMPT
        if self.config.mode == "text":
            system += "\n\n" + TEXT_PROTOCOL + describe_tools(context.tools)
        elif self.config.mode == "suite":
            if context.text_prompt is None or context.parse_text_action is None:
                raise UserError("mode=suite: this suite has no text syntax of its own; use mode=native or text")
            system = context.text_prompt
            self.parse_text_action = context.parse_text_action
        images = context.brief_images if self.config.images else []
        self.messages = [ChatMessageSystem(content=system), ChatMessageUser(content=contents(context.brief, images))]

    def settings(self) -> dict[str, Any]:
        return {
            "model": self.spec.id,
            "base_url": self.engine.base_url,
            "key_variable": self.spec.key_variable,
            "price_per_million_tokens": None if self.price is None else self.price.model_dump(exclude_none=True),
            "context_window": self.facts.context_window,
            "output_limit": self.facts.output_limit,
            **self.config.model_dump(exclude={"key_env"}),
        }

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if history:
            self._answer(history[-1])
        if self.queued:
            self.answering = self.queued.pop(0)
            return AgentDecision(call=_decision_call(self.answering))
        return self._ask()

    def _ask(self) -> AgentDecision:
        usage = Usage()
        replies: list[str] = []
        reasonings: list[str] = []
        problem = ""
        cap: int | None = None
        room_asked = False
        attempt = 0
        while attempt < 2:  # the reply, and one in-protocol retry after an unreadable one
            first_request = self.requests == 0
            self.requests += 1
            try:
                completion = self._complete(cap)
            except ContextOverflow as err:  # a limit of the conversation the agent sends, not the model's answer
                message = f"{err} (context={self.context.name}: nothing more could be dropped)"
                return AgentDecision(message=message, usage=usage, termination=Termination.CONTEXT_OVERFLOW)
            except RejectedRequest as err:
                if first_request:  # nothing the model did: the model name or an option is wrong for this endpoint
                    raise InfrastructureError(f"the endpoint refused the episode's first request: {err}") from err
                message = f"the endpoint refused the request: {err}"
                return AgentDecision(message=message, usage=usage, termination=Termination.NO_ANSWER)
            usage = usage + self._priced(completion.usage)
            replies.append(completion.text)
            reasonings.extend(filter(None, [completion.reasoning]))
            reasoning = "\n\n".join(reasonings) or None
            if completion.out_of_room:
                spent = completion.usage.output_tokens
                problem = f"the reply spent its whole output budget ({spent} tokens) on reasoning and gave no answer"
                if room_asked:
                    return AgentDecision(
                        message=problem, usage=usage, reasoning=reasoning, termination=Termination.NO_ANSWER
                    )
                room_asked = True
                cap = 2 * max(self.engine.default_max_tokens() or 0, spent)
                continue  # asked again with more room, not counted as an unreadable reply
            call, problem = self._read(completion)
            if call is not None:
                said = "\n\n".join(filter(None, replies)) or None
                return AgentDecision(call=call, message=said, usage=usage, reasoning=reasoning)
            if attempt == 0:
                self.messages.append(
                    ChatMessageUser(content=f"Your reply could not be used: {problem}. {self._rules()}")
                )
            attempt += 1
        last = replies[-1][:2000] if replies else ""
        return AgentDecision(
            message=f"{problem}; last reply: {last!r}",
            usage=usage,
            reasoning="\n\n".join(reasonings) or None,
            termination=Termination.NO_ANSWER,
        )

    def _complete(self, cap: int | None) -> Completion:
        """The model's reply to what the context policy sends; a request too long for the model's window is
        sent again shorter while the policy can drop more."""
        while True:
            try:
                return self.engine.complete(self.context.prompt(self.messages), self.tools, max_tokens=cap)
            except ContextOverflow:
                if not self.context.shrink(self.messages):
                    raise

    def _rules(self) -> str:
        if self.config.mode == "native":
            return "Call one of the tools."
        if self.config.mode == "text":
            return TEXT_PROTOCOL.split(" The tools:")[0]
        return "Answer in the action syntax the instructions describe."

    def _read(self, completion: Completion) -> tuple[ToolCall | None, str]:
        """The call a reply makes, or None and what was wrong with it; the reply joins the conversation."""
        reply = completion.message
        if not completion.text and not completion.tool_calls:
            reply = reply.model_copy(update={"content": [*_reasoning_parts(reply), EMPTY_REPLY_TEXT]})
        self.messages.append(reply)
        if self.config.mode == "native":
            if not completion.tool_calls:
                return None, "it called no tool"
            self.answering, *self.queued = completion.tool_calls
            return _decision_call(self.answering), ""
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
                ChatMessageTool(
                    content=contents(result.text, images),
                    tool_call_id=self.answering.id,
                    function=self.answering.function,
                )
            )
            self.answering = None
            return
        text = result.text if self.config.mode == "suite" else f"Result of {turn.call.tool}: {result.text}"
        self.messages.append(ChatMessageUser(content=contents(text, images)))

    def _priced(self, usage: Usage) -> Usage:
        if self.price is None:
            return usage
        return usage.model_copy(update={"cost_usd": self.price.cost(usage)})


EMPTY_REPLY_TEXT = ContentText(text=EMPTY_REPLY)


def _reasoning_parts(message: ChatMessageAssistant) -> list[Any]:
    """The reasoning blocks of a reply, kept when its empty text is replaced (providers verify them)."""
    return (
        [part for part in message.content if isinstance(part, ContentReasoning)]
        if isinstance(message.content, list)
        else []
    )


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
        raise UserError("agent 'llm' needs --model, e.g. anthropic/claude-sonnet-4-5 or openai/gpt-5 (see docs/llm.md)")
    settings = llm_settings(options)
    spec = parse_model(options.model, settings.key_env)
    facts = model_facts(spec, price_table())
    if options.cost_limit is not None and facts.price is None:
        raise UserError(
            f"--cost-limit needs a price for {spec.id}: add one with a DISCOGYM_PRICES file (see docs/llm.md)"
        )
    key = spec.api_key()
    if key is None:
        raise MissingCredentials(f"{options.model}: no API key; set {spec.key_variable} to run it")
    try:
        engine = ModelEngine(spec, key, settings.engine_options())
    except InfrastructureError:
        raise
    except Exception as err:  # Inspect's own refusal: a provider whose SDK is missing, a malformed name
        message = Text.from_markup(str(err)).plain  # Inspect words some of them in rich's markup
        raise UserError(f"--model {options.model}: {type(err).__name__}: {message}") from None
    return LLMAgent(spec, engine, settings, facts)
