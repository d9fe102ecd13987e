"""Environments: one per episode, a brief plus tools, with every limit enforced inside."""

import signal
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discogym.core.model.agent import ExampleDialogue
from discogym.core.model.episode import SubSession
from discogym.core.model.errors import ToolError
from discogym.core.model.termination import Termination, ending
from discogym.core.model.tools import (
    TOOL_MARKER,
    UNREADABLE_TOOL,
    Tool,
    ToolCall,
    ToolImage,
    ToolResult,
    ToolSpec,
    describe_validation_error,
    enumerate_calls,
    parse_args_object,
)


class Limits(BaseModel):
    """Limits every agent, interface and transport meets alike.

    ``max_steps`` counts every call, rejected ones included, so an agent cannot loop forever on
    malformed calls. ``call_timeout_s`` caps the wall-clock time of one tool call: a call that runs
    over is stopped and ends the episode (``call_time_limit``). It is a safety net against requests
    that would run for ever; suites limit work deterministically (ticks, budgets) wherever they can,
    since wall-clock time depends on the machine.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int | None = Field(default=1000, ge=1)
    call_timeout_s: float | None = Field(default=None, gt=0)


class _CallTimeout(BaseException):
    """Raised into a running tool method; a BaseException, so a handler's ``except Exception`` cannot
    swallow it."""


@contextmanager
def _wall_clock_cap(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` where the platform allows it, else check afterwards."""
    message = f"a tool call exceeded its wall-clock cap of {seconds:g} s"
    use_alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    started = time.perf_counter()
    if use_alarm:

        def on_alarm(signum: int, frame: Any) -> None:
            raise _CallTimeout(message)

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if time.perf_counter() - started > seconds:
        raise _CallTimeout(message)


class _Meter:
    def __init__(self) -> None:
        self.steps = 0
        self.termination: Termination | None = None


class SubAgents(Protocol):
    """What the harness lends an environment whose tool hands work to a sub-agent (see
    :meth:`Env.run_sub_agent`)."""

    def run(self, env: "Env", role: str) -> SubSession:
        """Let a sub-agent in ``role`` play ``env`` to its end; its session."""
        ...


NO_SUB_AGENTS = (
    "this session has no sub-agent to hand the question to: sub-agents are made by `discogym run` (or `play`) "
    "from the episode's own agent"
)


class Env(ABC):
    """Base class of every suite's environment.

    Subclasses write a :meth:`brief`, mark their tool methods with :func:`discogym.core.model.tools.tool`,
    and call :meth:`finish` when the episode ends. :meth:`call` validates names and arguments,
    counts steps, applies :attr:`limits`, and turns :class:`ToolError` into error results, so a
    handler only ever sees well-formed arguments.
    """

    limits: ClassVar[Limits] = Limits()
    _declared_tools: ClassVar[dict[str, Tool]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared: dict[str, Tool] = {}
        for klass in reversed(cls.__mro__):
            for attr in vars(klass).values():
                marked = getattr(attr, TOOL_MARKER, None)
                if isinstance(marked, Tool):
                    declared[marked.name] = marked
        cls._declared_tools = declared

    @property
    def _meter(self) -> _Meter:
        meter = self.__dict__.get("_discogym_meter")
        if meter is None:
            meter = self.__dict__["_discogym_meter"] = _Meter()
        return meter

    @abstractmethod
    def brief(self) -> str:
        """The text the agent starts from. Must not contain hidden ground truth."""

    def brief_images(self) -> list[ToolImage]:
        """Pictures that go with the brief (e.g. the first rendered frame); none by default."""
        return []

    @classmethod
    def declared_tools(cls) -> list[Tool]:
        """Every tool the class declares with :func:`~discogym.core.model.tools.tool` (what :meth:`tools` offers
        unless a subclass narrows it)."""
        return list(cls._declared_tools.values())

    def tools(self) -> list[Tool]:
        """The tools open to the agent; override to offer a subset (e.g. per condition)."""
        return list(self._declared_tools.values())

    def tool_specs(self) -> list[ToolSpec]:
        """The agent-facing descriptions of :meth:`tools`."""
        return [t.spec() for t in self.tools()]

    @property
    def steps(self) -> int:
        """How many calls have been made, rejected ones included."""
        return self._meter.steps

    @property
    def done(self) -> bool:
        """True once the episode is over."""
        return self._meter.termination is not None

    @property
    def termination(self) -> Termination | None:
        """Why the episode ended (``Termination.SUBMITTED``, ``Termination.STEP_LIMIT``, ...), or None while it
        runs."""
        return self._meter.termination

    def finish(self, reason: Termination) -> None:
        """End the episode; later calls are refused. The first reason given is kept. A name outside the
        :class:`~discogym.core.model.termination.Termination` vocabulary is a ValueError (a bug of the environment)."""
        checked = ending(reason)
        if self._meter.termination is None:
            self._meter.termination = checked

    def outcome(self) -> dict[str, Any]:
        """A suite-specific summary of how the episode ended, stored in the episode file."""
        return {}

    def view(self) -> dict[str, Any] | None:
        """What a person's screen shows of the environment now, for the web app's play page: a JSON-safe dict
        whose ``kind`` names the screen that draws it (the script :meth:`Suite.web_screens` gives for that kind),
        or None (the page offers the tools as forms only). Only what the agent may see: it reaches the page before
        the episode ends."""
        return None

    def continue_from(self, carried: dict[str, Any]) -> None:  # noqa: B027 - an optional hook
        """Called before the brief is read when the episode continues a curriculum chain: ``carried`` is what
        :meth:`Suite.carry_forward` took from the episode before. Environments of suites with a curriculum
        override it; the default ignores it."""

    def lend_sub_agents(self, sub_agents: SubAgents) -> None:
        """Called by the harness before the first call when it can make sub-agents for the episode."""
        self.__dict__["_discogym_sub_agents"] = sub_agents

    def run_sub_agent(self, env: "Env", role: str) -> SubSession:
        """From a tool handler: let a sub-agent of the episode's own kind and model, in ``role``, play ``env``
        (an environment the handler made, e.g. SciCrafter's scientist lab) to its end, and return its session.
        The harness logs the session with the call that ran it and counts its cost. A ToolError when the
        harness lent no sub-agents (an outside client over MCP)."""
        sub_agents: SubAgents | None = self.__dict__.get("_discogym_sub_agents")
        if sub_agents is None:
            raise ToolError(NO_SUB_AGENTS)
        return sub_agents.run(env, role)

    def close(self) -> None:  # noqa: B027 (an optional hook: most environments hold nothing)
        """Release what the environment holds (processes, servers, files, sockets); nothing by default.

        The harness calls it exactly once when the episode ends, however it ends: normally (after
        :meth:`outcome`), by an error of the agent or the environment, an infrastructure fault, an
        interrupt, or an outside client going away. An exception here is an environment error when the
        episode is being written, and ignored when the episode is abandoned anyway.
        """

    def parse_text_action(self, text: str) -> ToolCall:
        """Parse the suite's text action syntax into a tool call; suites with one override this.

        Raise :class:`ToolError` with a message the agent can act on when ``text`` is not an action (a
        language model then gets one retry), or return :func:`~discogym.core.model.tools.unreadable` to answer it
        with the suite's own message and count it as a step.
        """
        raise ToolError("this environment has no text action syntax; call its tools instead")

    def format_text_action(self, call: ToolCall) -> str | None:
        """``call`` written in the suite's text action syntax (what :meth:`parse_text_action` reads back as it),
        or None when the suite has no syntax or none for this call. A cost estimate of ``mode=suite`` uses it."""
        return None

    def system_prompt(self) -> str | None:
        """The suite's own system prompt for language models that act through the tools (e.g. petri-bench's
        scaffold), or None for discogym's generic one."""
        return None

    def text_prompt(self) -> str | None:
        """The system prompt that teaches a model the suite's own text syntax (e.g. Plancraft's), or None.

        Suites that override :meth:`parse_text_action` override this too; a language model in
        ``mode=suite`` then gets this prompt and answers in the syntax instead of calling tools.
        """
        return None

    def example_dialogue(self) -> ExampleDialogue | None:
        """The worked examples of the suite's text prompt as a dialogue of (what the agent sees, what it answers)
        pairs, with the text prompt to send in their place (without the examples written out), or None (the
        default) when the suite has none. A language model's scaffold may show them as past turns (Plancraft's)."""
        return None

    def example_action(self) -> str | None:
        """One action valid now, written as a person types it in ``discogym play`` (in the suite's text syntax
        when it has one), shown when the game starts; None lets the harness pick one from :meth:`valid_calls`."""
        return None

    def progress(self) -> float | None:
        """How far the current state is along the way to the task's end, from 0 to 1, where the suite has a sound
        measure of it (None, the default, where it has none). Only a training reward shaped from it reads it
        (``discogym.gym``'s ``shaped_reward``); no score does. It may use what the agent is not shown."""
        return None

    def valid_calls(self) -> list[ToolCall]:
        """The valid calls in the current state, for the random agent.

        By default, every combination of argument values for tools whose arguments have small finite
        domains (literals, booleans, enums, bounded integers). Suites whose tools take open-ended
        arguments override this.
        """
        calls: list[ToolCall] = []
        for t in self.tools():
            calls.extend(enumerate_calls(t.name, t.args_model) or [])
        return calls

    def call(self, name: str, args: Any = None) -> ToolResult:
        """Run one tool call. Never raises for bad input: the problem comes back as an error result.

        A handler may raise :class:`InfrastructureError` for faults outside the agent's control; that
        and any other exception (a bug in the environment) propagate.
        """
        if self.done:
            return ToolResult.failure("the episode is over; no more tool calls are accepted", done=True)
        self._meter.steps += 1
        result = self._dispatch(name, args)
        max_steps = self.limits.max_steps
        if max_steps is not None and self._meter.steps >= max_steps and not self.done:
            self.finish(Termination.STEP_LIMIT)
            result = result.model_copy(
                update={"text": f"{result.text}\n(step limit of {max_steps} calls reached: the episode is over)"}
            )
        if self.done:
            result = result.model_copy(update={"done": True})
        return result

    def _dispatch(self, name: Any, args: Any) -> ToolResult:
        if name == UNREADABLE_TOOL and isinstance(args, dict) and isinstance(args.get("reply"), str):
            return ToolResult(ok=False, text=args["reply"], error=args["reply"])
        available = {t.name: t for t in self.tools()}
        if not isinstance(name, str) or name not in available:
            return ToolResult.failure(f"unknown tool {name!r}; available tools: {', '.join(available) or '(none)'}")
        chosen = available[name]
        try:
            parsed = chosen.args_model.model_validate(parse_args_object(args))
        except ValueError as err:
            if isinstance(err, ValidationError):
                return ToolResult.failure(describe_validation_error(name, err))
            return ToolResult.failure(f"tool '{name}': {err}")
        handler: Callable[[Any], ToolResult] = getattr(self, chosen.method)
        try:
            if self.limits.call_timeout_s is None:
                result = handler(parsed)
            else:
                with _wall_clock_cap(self.limits.call_timeout_s):
                    result = handler(parsed)
        except ToolError as err:
            return ToolResult.failure(str(err))
        except _CallTimeout as err:
            self.finish(Termination.CALL_TIME_LIMIT)
            return ToolResult.failure(f"{err}; it was stopped and the episode is over")
        if not isinstance(result, ToolResult):
            raise TypeError(f"tool '{name}' returned {type(result).__name__}, not ToolResult")
        return result
