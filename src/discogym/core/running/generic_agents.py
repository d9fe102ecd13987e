"""The agents every suite has: ``random`` (the chance floor), ``replay`` (recorded transcripts) and ``human``
(a person at the terminal)."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter, ValidationError

from discogym.core.model.agent import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentOptions,
    Turn,
    register_agent,
    require_option,
)
from discogym.core.model.errors import UserError
from discogym.core.model.tools import ToolCall
from discogym.core.terminal.human import HumanAgent


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


def _make_random(options: AgentOptions) -> Agent:
    return RandomAgent()


def _make_replay(options: AgentOptions) -> Agent:
    path = require_option(options, "transcript", "an episode file or a JSON list of calls")
    return ReplayAgent(load_transcript(Path(path)), source=Path(path).name)


register_agent("random", _make_random, "uniform over the environment's valid calls (seeded): the chance floor")
register_agent("human", lambda options: HumanAgent(), "a person at the terminal (see `discogym play`)")
register_agent(
    "replay",
    _make_replay,
    "replays a recorded transcript (--agent-opt transcript=FILE: an episode or a call list)",
    options=["transcript"],
)
