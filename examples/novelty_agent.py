"""A complete, minimal discogym agent that plays every suite: each step it makes a valid call it has not made
before (chosen with its own seeded generator), and stops after ``max_calls`` calls if given.

Run it without installing anything (from the repository's root):

    DISCOGYM_AGENTS=examples.novelty_agent:register discogym run redstone --agent novelty --agent-opt max_calls=20
"""

import json
from collections.abc import Sequence

import numpy as np

from discogym.core import Agent, AgentContext, AgentDecision, AgentOptions, ToolCall, Turn, UserError, register_agent


def call_key(call: ToolCall) -> str:
    """A call as text that is the same for equal calls, whatever the order of their arguments."""
    return json.dumps(call.model_dump(mode="json"), sort_keys=True)


class NoveltyAgent(Agent):
    """Prefers calls it has not made yet; ends the episode when none is left or its call budget is spent."""

    def __init__(self, max_calls: int | None) -> None:
        self.max_calls = max_calls
        self.context: AgentContext | None = None
        self.rng = np.random.default_rng(0)

    def start(self, context: AgentContext) -> None:
        self.context = context
        self.rng = np.random.default_rng(context.seed)  # the episode's agent seed: reruns are identical

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        assert self.context is not None
        if self.max_calls is not None and len(history) >= self.max_calls:
            return AgentDecision(message=f"stopped after {self.max_calls} calls")
        made = {call_key(turn.call) for turn in history}
        valid = self.context.valid_calls()
        new = [call for call in valid if call_key(call) not in made]
        choices = new or valid
        if not choices:
            return AgentDecision(message="no valid call is left")
        return AgentDecision(call=choices[int(self.rng.integers(len(choices)))])


def make_novelty(options: AgentOptions) -> Agent:
    """The agent, with ``--agent-opt max_calls=N`` if given."""
    raw = options.options.get("max_calls")
    if raw is None:
        return NoveltyAgent(max_calls=None)
    if not raw.isdigit() or int(raw) < 1:
        raise UserError(f"agent 'novelty': --agent-opt max_calls must be a whole number of at least 1, got {raw!r}")
    return NoveltyAgent(max_calls=int(raw))


def register() -> None:
    """What the ``discogym.agents`` entry point (or ``DISCOGYM_AGENTS``) calls."""
    register_agent(
        "novelty",
        make_novelty,
        "makes a valid call it has not made before, chosen at random",
        options=("max_calls",),
    )
