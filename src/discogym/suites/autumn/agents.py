"""The autumn suite's reference agent: the oracle, which solves every task from the true program (proving each
task solvable). It skips exploration and goes to the test."""

from collections.abc import Sequence
from typing import Any

from discogym.core import Agent, AgentContext, AgentDecision, AgentOptions, ToolCall, Turn, UserError
from discogym.suites.autumn.challenges import ChangeTask, MfpTask, PlanningTask, oracle_probe, play, region
from discogym.suites.autumn.interpreter import Interpreter, action_text, parse_action
from discogym.suites.autumn.official import mfp_answer, plan_search, trigger_probe
from discogym.suites.autumn.tasks import AutumnTask


class OracleAgent(Agent):
    """MFP: runs the true program on the fixed actions and picks the option that matches. Planning: plays the
    stored solution. Change detection: acts while running the original program beside the changed one, signals
    at the first frame where what it sees differs from what the original would show, and picks that frame."""

    def __init__(self) -> None:
        self.plan: list[ToolCall] = []
        self.task: AutumnTask | None = None
        self.source = ""
        self.original: Interpreter | None = None
        self.probe: list[Any] = []

    def start(self, context: AgentContext) -> None:
        if "task" not in context.hints or "program" not in context.hints:
            raise UserError("the oracle agent plays only the autumn suite's own tasks")
        self.task = AutumnTask.model_validate(context.hints["task"])
        self.source = str(context.hints["program"])
        challenge = self.task.challenge
        self.plan = [ToolCall(tool="go_to_test", args={})]
        if self.task.semantics == "official":
            self.plan += official_plan(self.task)
        elif isinstance(challenge, MfpTask):
            final = play(self.source, [parse_action(a) for a in challenge.actions], challenge.seed)[-1]
            truth = region(final, challenge.mask)
            self.plan.append(ToolCall(tool="answer", args={"index": challenge.options.index(truth)}))
        elif isinstance(challenge, PlanningTask):
            self.plan += [ToolCall(tool="act", args={"action": a}) for a in challenge.solution]
        else:
            self.original = Interpreter(self.source, seed=challenge.seed)
            self.probe = oracle_probe(challenge.modified, challenge.seed, challenge.step_limit)

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if self.plan:
            return AgentDecision(call=self.plan.pop(0))
        if self.original is None or self.task is None:
            return AgentDecision(message="done")
        return AgentDecision(call=self._detect(history))

    def _detect(self, history: Sequence[Turn]) -> ToolCall:
        assert self.original is not None and isinstance(self.task.challenge if self.task else None, ChangeTask)
        last = history[-1]
        step = sum(turn.call.tool == "act" for turn in history)  # actions so far = the last frame's number
        frame = last.result.data.get("frame") if last.call.tool == "act" else None
        if frame is not None and frame != self.original.frame:
            self.plan = [ToolCall(tool="choose_frame", args={"index": step})]
            self.original = None
            return ToolCall(tool="found_change", args={})
        if step >= len(self.probe):
            return ToolCall(tool="found_change", args={})
        action = self.probe[step]
        self.original.step(action)
        return ToolCall(tool="act", args={"action": action_text(action)})


def official_plan(task: AutumnTask) -> list[ToolCall]:
    """The oracle's test calls on a published task: the MFP option our interpreter predicts; the planning goal
    found by search; for change detection, actions until the condition holds, the signal, and that frame. When
    the search finds nothing, it signals at once and chooses frame 0 (change detection) or just stops."""
    challenge = task.challenge
    if isinstance(challenge, MfpTask):
        return [ToolCall(tool="answer", args={"index": mfp_answer(task)})]
    if isinstance(challenge, PlanningTask):
        return [ToolCall(tool="act", args={"action": a}) for a in plan_search(task) or []]
    found = trigger_probe(task) or []
    acts = [ToolCall(tool="act", args={"action": action_text(a)}) for a in found]
    return [*acts, ToolCall(tool="found_change", args={}), ToolCall(tool="choose_frame", args={"index": len(found)})]


def make_oracle(options: AgentOptions) -> Agent:
    """The ``oracle`` reference agent."""
    return OracleAgent()
