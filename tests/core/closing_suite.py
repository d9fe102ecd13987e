"""The toy suite with environments that keep count of being opened and closed, to test that the harness
closes every environment however its episode ends.

In-process tests read :data:`EVENTS`; runs in other processes (worker pools, the CLI) log to the folder
named by ``DISCOGYM_CLOSE_LOG``: one empty file ``PID-N.opened`` per environment made, and
``PID-N.closed`` when it is closed. Importable as ``tests.core.closing_suite:suite`` through
``DISCOGYM_SUITES``.
"""

import itertools
import os
from collections.abc import Sequence
from pathlib import Path

from discogym.core import (
    Agent,
    AgentDecision,
    AgentFactory,
    Condition,
    Env,
    InfrastructureError,
    NoArgs,
    Task,
    ToolCall,
    ToolResult,
    Turn,
    tool,
)
from tests.core.toy_suite import DigitEnv, DigitSuite

LOG_VARIABLE = "DISCOGYM_CLOSE_LOG"
EVENTS: list[tuple[str, str]] = []  # (event, environment name) in this process
_serial = itertools.count()


class ClosingEnv(DigitEnv):
    def __init__(self, task: Task, condition: Condition, seed: int) -> None:
        super().__init__(task, condition, seed)
        self._bad_brief = bool(condition.params.get("bad_brief", False))
        self._bad_close = bool(condition.params.get("bad_close", False))
        self.name = f"{os.getpid()}-{next(_serial)}"
        self._log("opened")

    def _log(self, event: str) -> None:
        EVENTS.append((event, self.name))
        folder = os.environ.get(LOG_VARIABLE)
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            (Path(folder) / f"{self.name}.{event}").touch()

    def brief(self) -> str:
        if self._bad_brief:
            raise RuntimeError("the brief is broken")
        return super().brief()

    @tool(NoArgs)
    def outage(self, args: NoArgs) -> ToolResult:
        """A tool whose backing service is down."""
        raise InfrastructureError("the simulator service is down (simulated)")

    def close(self) -> None:
        self._log("closed")
        if self._bad_close:
            raise RuntimeError("close is broken")


class Interrupter(Agent):
    """Plays one probe, then the user presses Ctrl-C."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if history:
            raise KeyboardInterrupt
        return AgentDecision(call=ToolCall(tool="probe", args={"n": 4}))


class Outage(Agent):
    """Calls the tool whose service is down."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        return AgentDecision(call=ToolCall(tool="outage"))


class ClosingSuite(DigitSuite):
    name = "closing"
    aliases = ("closing-digits",)
    description = "the toy suite, counting closed environments (harness tests only)"

    def conditions(self) -> list[Condition]:
        return [
            *super().conditions(),
            Condition(name="bad-brief", params={"bad_brief": True}),
            Condition(name="bad-close", params={"bad_close": True}),
        ]

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        return ClosingEnv(task, condition, seed)

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {
            **super().reference_agents(),
            "interrupter": lambda options: Interrupter(),
            "outage": lambda options: Outage(),
        }


def opened_and_closed(names: list[str] | None = None) -> tuple[list[str], list[str]]:
    """The environments opened and closed in this process (all, or those named)."""
    opened = [name for event, name in EVENTS if event == "opened" and (names is None or name in names)]
    closed = [name for event, name in EVENTS if event == "closed" and (names is None or name in names)]
    return opened, closed


suite = ClosingSuite()
