"""Agents: given the brief, the tools and the history, choose the next tool call."""

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from discogym.core.model.errors import UserError
from discogym.core.model.plugins import PluginError, import_reference, load_entry_point, one_line, plugin_points, warn
from discogym.core.model.termination import Termination
from discogym.core.model.tools import ToolCall, ToolImage, ToolResult, ToolSpec


class Usage(BaseModel):
    """Tokens and cost of one model call (zero for agents that use no model).

    ``input_tokens`` counts every prompt token, cached ones included; of them, ``cached_tokens`` were read from
    the provider's prompt cache and ``cache_write_tokens`` written to it (each priced at its own rate).
    ``output_tokens`` counts every reply token, reasoning included; ``reasoning_tokens`` is the reasoning part.
    ``failed_attempts`` counts the requests that failed (timed out, dropped, answered with an error) and were
    retried or given up; what the server billed for them is not known (none reports it), so they are in none of
    the counts above: ``failed_input_tokens`` is what they sent, as discogym counts a prompt (an estimate of their
    input; their output is not known at all). These four are left out of the file when zero, as episodes written
    before them have none.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    cache_write_tokens: int = Field(default=0, exclude_if=lambda tokens: tokens == 0)
    reasoning_tokens: int = Field(default=0, exclude_if=lambda tokens: tokens == 0)
    failed_attempts: int = Field(default=0, exclude_if=lambda attempts: attempts == 0)
    failed_input_tokens: int = Field(default=0, exclude_if=lambda tokens: tokens == 0)

    def __add__(self, other: "Usage") -> "Usage":
        return Usage.total([self, other])

    def failures_said(self) -> str:
        """The failed attempts in words ("" when none)."""
        if not self.failed_attempts:
            return ""
        attempts = "1 failed attempt" if self.failed_attempts == 1 else f"{self.failed_attempts:,} failed attempts"
        sent = f"about {self.failed_input_tokens:,} input tokens sent"
        return f"{attempts} of a request ({sent}, what was billed unknown)"

    @classmethod
    def total(cls, parts: Iterable["Usage | None"]) -> "Usage":
        """The sum of ``parts`` in their order (None adds nothing), made as one object: an episode's total
        over its events costs one object, not one per event."""
        present = [part for part in parts if part is not None]
        return cls(
            input_tokens=sum(part.input_tokens for part in present),
            output_tokens=sum(part.output_tokens for part in present),
            cached_tokens=sum(part.cached_tokens for part in present),
            cost_usd=sum(part.cost_usd for part in present),
            cache_write_tokens=sum(part.cache_write_tokens for part in present),
            reasoning_tokens=sum(part.reasoning_tokens for part in present),
            failed_attempts=sum(part.failed_attempts for part in present),
            failed_input_tokens=sum(part.failed_input_tokens for part in present),
        )


class MemoryEvent(BaseModel):
    """What an agent did with its own memory on the way to a decision, outside the environment.

    ``kind`` is ``compaction`` (older turns of a model's conversation replaced by a summary the model wrote:
    ``text`` is the summary, ``replaced_turns`` how many turns it replaced, ``usage`` the summary request's cost,
    which is part of the decision's) or ``notes`` (the model's notes tool: ``action`` is write, delete or read and
    ``text`` what it wrote or was answered).
    """

    kind: Literal["compaction", "notes"]
    action: str
    text: str
    usage: Usage | None = Field(default=None, exclude_if=lambda usage: usage is None)
    replaced_turns: int | None = Field(default=None, exclude_if=lambda turns: turns is None)


class Turn(BaseModel):
    """One step of the history an agent sees: its call and what came back."""

    call: ToolCall
    result: ToolResult


class AgentDecision(BaseModel):
    """What an agent does next: a tool call, or (``call`` is None) end the episode.

    ``message`` is free text from the agent (a final answer, or why it gave up), ``reasoning`` the thinking a
    model showed on the way; ``usage`` is the cost
    of reaching this decision; ``termination`` names why an agent that ends the episode does so
    (default ``Termination.AGENT_STOPPED``; a model that gave no usable answer says ``Termination.NO_ANSWER``).
    """

    call: ToolCall | None = None
    message: str | None = None
    usage: Usage | None = None
    termination: Termination | None = None
    reasoning: str | None = None  # the model's reasoning text, kept in the episode beside its message
    memory: list[MemoryEvent] = Field(default_factory=list)  # compactions and notes on the way to this decision


@dataclass(frozen=True)
class ExampleDialogue:
    """A suite's worked examples as a dialogue, for agents that show them as past turns rather than as text.

    ``turns`` are (what the agent sees, what it answers) pairs in order; ``text_prompt`` is the suite's text prompt
    to send with them instead of :meth:`Env.text_prompt`, which may write the same examples out as text.
    """

    turns: list[tuple[str, str]]
    text_prompt: str


@dataclass
class AgentContext:
    """Everything an agent may know at the start of an episode. Holds no ground truth."""

    brief: str
    tools: list[ToolSpec]
    seed: int
    valid_calls: Callable[[], list[ToolCall]] = field(default=list)
    parse_text_action: Callable[[str], ToolCall] | None = None
    text_prompt: str | None = None
    system_prompt: str | None = None
    brief_images: list[ToolImage] = field(default_factory=list)
    hints: dict[str, Any] = field(default_factory=dict)  # privileged knowledge, for a suite's own solvers only
    example_action: Callable[[], str | None] = field(default=lambda: None)  # one valid action, as a person types it
    role: str | None = None  # None for the episode's agent; a sub-agent's role (e.g. "scientist") otherwise
    suite: str | None = None  # the name of the suite being played
    example_dialogue: ExampleDialogue | None = None  # the suite's worked examples as past turns, if it has them


class Agent(ABC):
    """Base class of agents. One instance plays one episode."""

    def start(self, context: AgentContext) -> None:  # noqa: B027 - optional hook
        """Called once before the first :meth:`act`."""

    def preflight(self, context: AgentContext) -> None:  # noqa: B027 - optional hook
        """Raise a :class:`UserError` when this agent, as configured, cannot play an episode that starts with
        ``context`` (a preset made for another suite, a mode the suite has no syntax for). A run calls it on its
        first episode's context before any episode, so the mistake stops the run instead of ending every episode;
        it must not call a model, start a process or hold anything :meth:`close` would have to release."""

    @abstractmethod
    def act(self, history: Sequence[Turn]) -> AgentDecision:
        """Return the next decision given every turn so far."""

    def settings(self) -> dict[str, Any]:
        """Settings recorded in the episode's provenance (model id, endpoint options, ...)."""
        return {}

    def settle(self, history: Sequence[Turn]) -> Usage | None:
        """Called when the environment ended the episode (``history`` holds every turn, the last one's result
        included): return what the agent spent after its last decision, if anything (an agent that learns its
        cost only when it ends, like an agent CLI's process); None by default."""
        return None

    def output(self) -> str | None:
        """Text the agent printed that is worth keeping beside the episode (an agent CLI's raw event stream):
        written to the runtime sidecar's ``agent_output``, never into the episode file; None by default."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called once when the episode is over, however it ended: release what the agent holds (a process,
        a server, temporary files)."""


class AgentOptions(BaseModel):
    """How the user asked for an agent: its name, an optional model, free ``key=value`` options, and
    per-episode budgets of tokens and dollars (for agents that report their usage)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    model: str | None = None
    options: dict[str, str] = Field(default_factory=dict)
    token_limit: int | None = Field(default=None, ge=1)
    cost_limit: float | None = Field(default=None, gt=0)

    def over_budget(self, spent: Usage) -> Termination | None:
        """Why ``spent`` is over this agent's budget (``token_limit`` or ``cost_limit``), or None."""
        tokens = spent.input_tokens + spent.output_tokens
        if self.token_limit is not None and tokens >= self.token_limit:
            return Termination.TOKEN_LIMIT
        if self.cost_limit is not None and spent.cost_usd >= self.cost_limit:
            return Termination.COST_LIMIT
        return None


AgentFactory = Callable[[AgentOptions], Agent]


@dataclass(frozen=True)
class AgentEntry:
    """A registered agent kind; ``options`` are the ``--agent-opt`` keys it accepts (none by default)."""

    name: str
    factory: AgentFactory
    description: str
    takes_model: bool = False
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactoryWithOptions:
    """An agent factory that declares the ``--agent-opt`` keys it accepts (see :func:`with_options`)."""

    factory: AgentFactory
    options: tuple[str, ...]

    def __call__(self, options: AgentOptions) -> Agent:
        return self.factory(options)


def with_options(factory: AgentFactory, *keys: str) -> AgentFactory:
    """``factory``, declaring that its agent accepts ``--agent-opt KEY=...`` for each of ``keys``: how a suite's
    ``reference_agents()`` names a solver's options (a factory not wrapped so takes none)."""
    return FactoryWithOptions(factory, keys)


def factory_options(factory: AgentFactory) -> tuple[str, ...]:
    """The ``--agent-opt`` keys a reference solver's factory declares (none unless made by :func:`with_options`)."""
    return factory.options if isinstance(factory, FactoryWithOptions) else ()


def check_agent_options(options: AgentOptions, accepted: Sequence[str]) -> None:
    """A UserError naming the agent and what it accepts if ``options`` has a key not in ``accepted``.

    An unknown key would otherwise be ignored by the agent and still change the episode's key and seeds.
    """
    unknown = [key for key in sorted(options.options) if key not in accepted]
    if not unknown:
        return
    if not accepted:
        raise UserError(f"agent '{options.name}' takes no options (got --agent-opt {', '.join(unknown)})")
    raise UserError(
        f"agent '{options.name}': --agent-opt {unknown[0]}: unknown option (options: {', '.join(accepted)})"
    )


_GENERIC_AGENTS: dict[str, AgentEntry] = {}
AGENT_ENTRY_POINT_GROUP = "discogym.agents"
_discovered = False


EXTRA_AGENTS_VARIABLE = "DISCOGYM_AGENTS"


def _discover_agents() -> None:
    """Run every ``discogym.agents`` entry point, then every ``module:function`` reference in the
    ``DISCOGYM_AGENTS`` environment variable (comma-separated), once: each is a function that calls
    :func:`register_agent`. One that cannot be loaded or fails while registering is a one-line warning, and
    the others still register."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for point in plugin_points(AGENT_ENTRY_POINT_GROUP):
        try:
            _call_register(load_entry_point(point, "agent"), f"agent plugin '{point.name}' ({point.value})")
        except PluginError as err:
            warn(str(err))
    for reference in (part.strip() for part in os.environ.get(EXTRA_AGENTS_VARIABLE, "").split(",")):
        if not reference:
            continue
        try:
            register = import_reference(reference, "agent", EXTRA_AGENTS_VARIABLE)
            _call_register(register, f"agent '{reference}' from {EXTRA_AGENTS_VARIABLE}")
        except PluginError as err:
            warn(str(err))


def _call_register(register: object, origin: str) -> None:
    """Call an agent plugin's registering function; a PluginError naming ``origin`` if it is not one or fails."""
    if not callable(register):
        raise PluginError(f"{origin} is not a function that registers agents (got {type(register).__name__})")
    try:
        register()
    except Exception as err:  # the plugin's own registration code
        raise PluginError(f"{origin} failed while registering: {one_line(err)}") from err


def register_agent(
    name: str, factory: AgentFactory, description: str, *, takes_model: bool = False, options: Sequence[str] = ()
) -> None:
    """Make an agent usable with every suite (``--agent NAME``). Only agents that ``takes_model`` are
    given ``--model`` and the token and cost budgets; ``options`` are the ``--agent-opt`` keys the agent
    accepts (any other key is refused before a run starts)."""
    _GENERIC_AGENTS[name] = AgentEntry(name, factory, description, takes_model, tuple(options))


def generic_agents() -> list[AgentEntry]:
    """The agents registered for every suite, by name."""
    _discover_agents()
    return [_GENERIC_AGENTS[name] for name in sorted(_GENERIC_AGENTS)]


def find_generic_agent(name: str) -> AgentEntry | None:
    """The generic agent called ``name``, if there is one."""
    _discover_agents()
    return _GENERIC_AGENTS.get(name)


def require_option(options: AgentOptions, key: str, hint: str) -> str:
    """The value of a required ``--agent-opt key=value``, or a UserError that says how to give it."""
    value = options.options.get(key)
    if not value:
        raise UserError(f"agent '{options.name}' needs --agent-opt {key}=... ({hint})")
    return value
