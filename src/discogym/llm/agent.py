"""The language-model agent: one loop over three ways of acting (``mode``: native tool calls, a JSON text
protocol, the suite's own syntax; :mod:`discogym.llm.modes`).

In the text modes a reply that cannot be read gets one in-protocol retry (the model is told what was
wrong); a second unreadable reply ends the episode as a logged no-answer, as does a request the endpoint
refuses for good. A reply that spent its whole output budget on reasoning is asked again once with twice the
room. The model is reached through :mod:`discogym.llm.engine` (Inspect's model API).
"""

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
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from rich.text import Text

from discogym.core import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentOptions,
    InfrastructureError,
    MemoryEvent,
    Termination,
    ToolCall,
    ToolError,
    Turn,
    Usage,
    UserError,
)
from discogym.core.model.errors import MissingCredentials
from discogym.llm.context import compact_threshold, context_policy
from discogym.llm.engine import (
    Completion,
    ContextOverflow,
    Engine,
    EngineOptions,
    ModelEngine,
    RejectedRequest,
    contents,
)
from discogym.llm.models import ModelFacts, ModelSpec, Price, model_facts, parse_model, price_table
from discogym.llm.modes import MODES, NOTES_ONLY, decision_call
from discogym.llm.notes import MAX_NOTE_ROUNDS, NOTES_CHARS, NOTES_TOOL, Notes, notes_spec
from discogym.llm.scaffolds import Scratchpad, scaffold
from discogym.llm.servers import served_window

EMPTY_REPLY = "(empty reply)"
NO_ANSWER = Termination.NO_ANSWER
ACTION_ROOM = 4096  # output tokens kept for the reply itself beyond a reasoning budget


class LLMSettings(BaseModel):
    """Options of the ``llm`` agent, given as ``--agent-opt KEY=VALUE``."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["native", "text", "suite"] = "native"
    tool_choice: Literal["auto", "required"] = "auto"
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
    context: Literal["full", "window", "messages", "compact"] = "compact"
    window_turns: int = Field(default=20, ge=1)
    window_messages: int = Field(default=40, ge=1)
    compact_at: int | None = Field(default=None, ge=100)
    context_window: int | None = Field(default=None, ge=1_000)
    notes: bool = True
    notes_chars: int = Field(default=NOTES_CHARS, ge=100, le=100_000)
    scaffold: Literal["none", "plancraft", "autumnbench"] = "none"

    @model_validator(mode="after")
    def _tools_to_require(self) -> "LLMSettings":
        if self.tool_choice == "required" and self.mode != "native":
            raise ValueError("tool_choice=required asks for a tool call in every reply: only mode=native offers tools")
        return self

    def engine_options(self) -> EngineOptions:
        """The request settings; a reasoning budget gets an output cap with room for the action after it."""
        max_tokens = self.max_tokens
        if self.reasoning_tokens is not None and (max_tokens is None or max_tokens <= self.reasoning_tokens):
            max_tokens = self.reasoning_tokens + ACTION_ROOM
        shared = self.model_dump(include=set(EngineOptions.model_fields) - {"max_tokens"})
        return EngineOptions(**shared, max_tokens=max_tokens)


class LLMAgent(Agent):
    """A model behind an endpoint, playing one episode."""

    def __init__(self, spec: ModelSpec, engine: Engine, config: LLMSettings, facts: ModelFacts) -> None:
        self.spec = spec
        self.engine = engine
        self.config = config
        self.facts = facts
        self.messages: list[ChatMessage] = []
        self.tools: list[ToolInfo] = []
        self.queued: list[InspectToolCall] = []  # calls of the last native reply still to make
        self.answering: InspectToolCall | None = None
        self.requests = 0
        self.window = config.context_window or facts.context_window
        self.threshold = compact_threshold(self.window, config.compact_at)
        self.context = context_policy(
            config.context, config.window_turns, self.threshold, config.window_messages, self.window
        )
        self.scaffold = scaffold(config.scaffold)
        self.mode = MODES[config.mode](self.scaffold)
        self.scratchpad = Scratchpad() if self.scaffold is not None and self.scaffold.scratchpad else None
        self.notes: Notes | None = None
        self.spent = Usage()  # what the decision being made has cost so far
        self.memory: list[MemoryEvent] = []  # compactions and notes on the way to it

    @property
    def price(self) -> Price | None:
        """The price the episode's costs are charged at."""
        return self.facts.price

    def preflight(self, context: AgentContext) -> None:
        if self.scaffold is not None:
            self.scaffold.check(context)
        self.mode.check(context)

    def start(self, context: AgentContext) -> None:
        self.preflight(context)
        offered = list(context.tools)
        if self.config.notes and self.mode.offers_notes and all(t.name != NOTES_TOOL for t in offered):
            self.notes = Notes(self.config.notes_chars)
            offered.append(notes_spec(self.config.notes_chars))
        self.tools = self.mode.tools(offered)
        system, examples = self.mode.system_prompt(context, offered)
        images = context.brief_images if self.config.images else []
        brief = ChatMessageUser(content=contents(context.brief, images))
        self.messages = [ChatMessageSystem(content=system), *examples, brief]
        self.context.pin(len(self.messages))

    def settings(self) -> dict[str, Any]:
        return {
            "model": self.spec.id,
            "base_url": self.engine.base_url,
            "key_variable": self.spec.key_variable,
            "price_per_million_tokens": None if self.price is None else self.price.model_dump(exclude_none=True),
            "output_limit": self.facts.output_limit,
            **self.config.model_dump(exclude={"key_env"}),
            "context_window": self.window,  # the model's, unless the option set another
            "compact_at": self.threshold if self.config.context == "compact" else None,
            # where a window asked of the model's own server came from (only then)
            **({"context_window_source": source} if (source := self._window_source()) else {}),
        }

    def _window_source(self) -> str | None:
        return self.facts.context_window_source if self.config.context_window is None else None

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if history:
            self._answer(history[-1])
        if self.queued:
            self.answering = self.queued.pop(0)
            return AgentDecision(call=decision_call(self.answering))
        return self._ask()

    def _ask(self) -> AgentDecision:
        self.spent = Usage()
        self.memory = []
        replies: list[str] = []
        reasonings: list[str] = []
        problem = ""
        cap: int | None = None
        room_asked = False
        attempt = note_rounds = 0
        while attempt < 2:  # the reply, and one in-protocol retry after an unreadable one
            first_request = self.requests == 0
            self.requests += 1
            try:
                completion = self._complete(cap)
            except ContextOverflow as err:  # a limit of the conversation the agent sends, not the model's answer
                message = f"{err} (context={self.context.name}: nothing more could be dropped)"
                return self._decision(message=message, termination=Termination.CONTEXT_OVERFLOW)
            except RejectedRequest as err:
                if first_request:  # nothing the model did: the model name or an option is wrong for this endpoint
                    raise InfrastructureError(f"the endpoint refused the episode's first request: {err}") from err
                return self._decision(message=f"the endpoint refused the request: {err}", termination=NO_ANSWER)
            self.spent = self.spent + self._priced(completion.usage)
            replies.append(completion.text)
            reasonings.extend(filter(None, [completion.reasoning]))
            reasoning = "\n\n".join(reasonings) or None
            if completion.out_of_room:
                spent = completion.usage.output_tokens
                problem = f"the reply spent its whole output budget ({spent} tokens) on reasoning and gave no answer"
                if room_asked:
                    return self._decision(message=problem, reasoning=reasoning, termination=NO_ANSWER)
                room_asked = True
                cap = 2 * max(self.engine.default_max_tokens() or 0, spent)
                continue  # asked again with more room, not counted as an unreadable reply
            call, problem = self._read(completion)
            if call is not None:
                said = "\n\n".join(filter(None, replies)) or None
                return self._decision(call=call, message=said, reasoning=reasoning)
            if problem == NOTES_ONLY:
                note_rounds += 1
                if note_rounds < MAX_NOTE_ROUNDS:
                    continue  # the notes cost no step: the model is asked again
                problem = f"{MAX_NOTE_ROUNDS} replies in a row used only the notes tool and took no action"
                break
            if attempt == 0:
                self.messages.append(
                    ChatMessageUser(content=f"Your reply could not be used: {problem}. {self.mode.rules()}")
                )
            attempt += 1
        last = replies[-1][:2000] if replies else ""
        reasoning = "\n\n".join(reasonings) or None
        return self._decision(message=f"{problem}; last reply: {last!r}", reasoning=reasoning, termination=NO_ANSWER)

    def _decision(self, **fields: Any) -> AgentDecision:
        """The decision with what reaching it cost and the memory work on the way."""
        return AgentDecision(usage=self.spent, memory=list(self.memory), **fields)

    def _complete(self, cap: int | None) -> Completion:
        """The model's reply to what the context policy sends; a request too long for the model's window is
        sent again shorter while the policy can drop more."""
        while True:
            self._compact_if_due()
            try:
                return self._request(self._prompt(), self.tools, max_tokens=cap)
            except ContextOverflow:
                if not self.context.shrink(self.messages):
                    raise

    def _request(self, messages: list[ChatMessage], tools: list[ToolInfo], **options: Any) -> Completion:
        """The engine's reply; the attempts that failed on the way count in the decision's cost, and a fault
        that ends the episode takes what the decision had cost with it (the run books it: no episode will)."""
        try:
            completion = self.engine.complete(messages, tools, **options)
        except RejectedRequest as err:
            self.spent = self.spent + (err.spent or Usage())
            raise
        except InfrastructureError as err:
            err.add_spent(self.spent)
            raise
        self.context.counted(messages, tools, completion.usage.input_tokens)
        return completion

    def _prompt(self) -> list[ChatMessage]:
        """The messages of the next request: what the context policy sends, the notes at the end of its last."""
        prompt = self.context.prompt(self.messages)
        pad = self.scratchpad.message() if self.scratchpad is not None and self.context.name != "full" else None
        if pad is not None:  # after the head, before the turns the policy keeps
            prompt.insert(min(self.context.head, len(prompt)), pad)
        shown = self.notes.shown() if self.notes is not None else None
        if shown is None:
            return prompt
        last = prompt[-1]
        if isinstance(last.content, str):
            content: Any = f"{last.content}\n\n{shown}"
        else:
            content = [*last.content, ContentText(text=shown)]
        return [*prompt[:-1], last.model_copy(update={"content": content})]

    def _compact_if_due(self) -> None:
        """Under ``context=compact``, have the model summarise the older turns when the prompt has grown past the
        threshold (or the last request was too long); the summary's cost joins the decision's."""
        compaction = self.context.compaction(self.messages, self.tools)
        if compaction is None:
            return
        while True:
            try:
                completion = self._request(compaction.request(), self.tools, text_only=True)
                break
            except ContextOverflow:
                if not compaction.drop_oldest():
                    raise
        usage = self._priced(completion.usage)
        self.spent = self.spent + usage
        summary = completion.text.strip() or "(no summary was written)"
        replaced = compaction.done(summary)
        self.memory.append(
            MemoryEvent(kind="compaction", action="summary", text=summary, usage=usage, replaced_turns=replaced)
        )

    def _read(self, completion: Completion) -> tuple[ToolCall | None, str]:
        """The call a reply makes, or None and what was wrong with it; the reply joins the conversation."""
        reply = completion.message
        if not completion.text and not completion.tool_calls:
            reply = reply.model_copy(update={"content": [*_reasoning_parts(reply), EMPTY_REPLY_TEXT]})
        self.messages.append(reply)
        if self.scratchpad is not None:
            self.memory.extend(self.scratchpad.apply(completion.text))
        try:
            return self.mode.read(self, completion)
        except (ValueError, ValidationError, ToolError) as err:
            return None, str(err)

    def take_note(self, call: InspectToolCall) -> bool:
        """Answer a native call of the notes tool at once (True), or leave a call for the environment (False)."""
        answer = self.use_notes(call.arguments) if call.function == NOTES_TOOL else None
        if answer is None:
            return False
        self.messages.append(ChatMessageTool(content=answer, tool_call_id=call.id, function=call.function))
        return True

    def use_notes(self, args: Any) -> str | None:
        """The notes tool's answer to ``args`` (its use noted in the decision's memory), or None without notes."""
        if self.notes is None:
            return None
        answer, event = self.notes.call(args)
        self.memory.append(event)
        return answer

    def _answer(self, turn: Turn) -> None:
        """Put the result of the agent's last call into the conversation."""
        images = turn.result.images if self.config.images else []
        self.messages.append(self.mode.result_message(self, turn.call.tool, turn.result.text, images))

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
        settings = LLMSettings.model_validate(options.options)
        preset = scaffold(settings.scaffold)
        if preset is None:
            return settings
        return LLMSettings.model_validate({**preset.defaults, **options.options})  # what the user gave wins
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
    if facts.context_window is None and settings.context_window is None:
        facts = window_of_server(options.model, spec, facts)
    return LLMAgent(spec, engine, settings, facts)


def window_of_server(model: str, spec: ModelSpec, facts: ModelFacts) -> ModelFacts:
    """``facts`` with the context window the model's own server says (vLLM, llama.cpp); a UserError when it
    says none, since a context policy that guessed a window could overflow a small local server without a word."""
    why = "no server to ask"
    if spec.base_url is not None:
        window, why = served_window(spec.base_url, spec.name)
        if window is not None:
            return facts.model_copy(update={"context_window": window, "context_window_source": why})
    raise UserError(
        f"--model {model}: its context window is not known here ({why}); give it in tokens with --agent-opt "
        "context_window=N (the server's setting, e.g. llama.cpp's --ctx-size or vLLM's --max-model-len)"
    )
