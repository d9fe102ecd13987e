"""The agents every suite has: ``random`` (the chance floor), ``replay`` (recorded transcripts) and ``human``
(a person at the terminal)."""

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter, ValidationError

from discogym.core.agent import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentOptions,
    Turn,
    register_agent,
    require_option,
)
from discogym.core.errors import ToolError, UserError
from discogym.core.tools import ToolCall, parse_json


class RandomAgent(Agent):
    """Chooses uniformly among the environment's valid calls, with its own seeded generator."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)
        self._valid_calls: Any = list

    def start(self, context: AgentContext) -> None:
        self._rng = np.random.default_rng(context.seed)
        self._valid_calls = context.valid_calls

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        calls: list[ToolCall] = self._valid_calls()
        if not calls:
            return AgentDecision(message="no valid call is available")
        return AgentDecision(call=calls[int(self._rng.integers(len(calls)))])


_CALLS = TypeAdapter(list[ToolCall])


def load_transcript(path: Path) -> list[ToolCall]:
    """Read the calls of a transcript: an episode file, ``{"calls": [...]}``, or a bare list of calls.

    Each call is ``{"tool": NAME, "args": {...}}``.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise UserError(f"cannot read transcript {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"transcript {path} is not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise UserError(f"transcript {path} is not valid JSON: {err.msg} at line {err.lineno}") from None
    except RecursionError:
        raise UserError(f"transcript {path} is nested too deeply") from None
    if isinstance(document, dict) and isinstance(document.get("events"), list):
        document = [event.get("call") if isinstance(event, dict) else event for event in document["events"]]
    elif isinstance(document, dict) and "calls" in document:
        document = document["calls"]
    try:
        return _CALLS.validate_python(document)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UserError(
            f'transcript {path} is not a list of calls like {{"tool": ..., "args": {{...}}}} '
            f"(at {where or 'top level'}: {first['msg']})"
        ) from None


class ReplayAgent(Agent):
    """Makes the calls of a recorded transcript in order, then ends the episode."""

    def __init__(self, calls: list[ToolCall], source: str) -> None:
        self._calls = calls
        self._source = source

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if len(history) < len(self._calls):
            return AgentDecision(call=self._calls[len(history)])
        return AgentDecision(message="transcript exhausted")

    def settings(self) -> dict[str, Any]:
        return {"transcript": self._source, "calls": len(self._calls)}


class HumanAgent(Agent):
    """A person at the terminal: sees each result and types the next action, in the suite's own syntax when
    it has one (e.g. ``move: from [I1] to [A1] with quantity 1``), else ``TOOL {JSON arguments}``.
    An empty line repeats the tool list; ``quit`` or end of input ends the episode."""

    def __init__(self, read: Callable[[str], str] = input, write: Callable[[str], None] = print) -> None:
        self.read = read
        self.write = write
        self.context: AgentContext | None = None

    def start(self, context: AgentContext) -> None:
        self.context = context
        self.write(context.brief)
        if context.brief_images:
            count = len(context.brief_images)
            self.write(f"({count} picture(s) go with this observation; a terminal cannot show them)")
        self._help()

    def _help(self) -> None:
        assert self.context is not None
        if self.context.text_prompt is not None:
            self.write("\n" + self.context.text_prompt + "\n")
            return
        self.write("Tools (type NAME {JSON arguments}, or quit):")
        for spec in self.context.tools:
            self.write(f"  {spec.name}: {spec.description} {json.dumps(spec.parameters.get('properties', {}))}")

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        assert self.context is not None
        if history:
            self.write(history[-1].result.text)
        while True:
            try:
                line = self.read("> ").strip()
            except EOFError:
                return AgentDecision(message="the player left")
            if line == "quit":
                return AgentDecision(message="the player quit")
            if not line:
                self._help()
                continue
            try:
                return AgentDecision(call=self._parse(line))
            except (ValueError, ToolError) as err:
                self.write(f"not understood: {err}")

    def _parse(self, line: str) -> ToolCall:
        assert self.context is not None
        if self.context.text_prompt is not None and self.context.parse_text_action is not None:
            return self.context.parse_text_action(line)
        name, _, rest = line.partition(" ")
        return ToolCall(tool=name, args=parse_json(rest, "arguments are") if rest.strip() else {})


def _make_random(options: AgentOptions) -> Agent:
    return RandomAgent()


def _make_replay(options: AgentOptions) -> Agent:
    path = require_option(options, "transcript", "an episode file or a JSON list of calls")
    return ReplayAgent(load_transcript(Path(path)), source=Path(path).name)


register_agent("random", _make_random, "uniform over the environment's valid calls (seeded): the chance floor")
register_agent("human", lambda options: HumanAgent(), "a person at the terminal (see `discogym play`)")
register_agent(
    "replay", _make_replay, "replays a recorded transcript (--agent-opt transcript=FILE: an episode or a call list)"
)
