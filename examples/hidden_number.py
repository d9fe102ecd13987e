"""A complete, minimal discogym suite: find a hidden number from 1 to 100 by asking whether it is higher.

Run it without installing anything (from the repository's root):

    DISCOGYM_SUITES=examples.hidden_number:suite discogym run hidden-number --agent reference
    DISCOGYM_SUITES=examples.hidden_number:suite discogym check-suite hidden-number
    DISCOGYM_SUITES=examples.hidden_number:suite discogym serve   # play it in the browser, on its own screen
    DISCOGYM_SUITES=examples.hidden_number:suite inspect eval discogym/hidden-number --model discogym/reference
"""

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from discogym.core import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentFactory,
    AgentOptions,
    Condition,
    Env,
    Episode,
    Limits,
    Score,
    Suite,
    Task,
    Termination,
    ToolArgs,
    ToolCall,
    ToolResult,
    Turn,
    UserError,
    make_rng,
    tool,
)

LOW, HIGH = 1, 100


class NumberArgs(ToolArgs):
    n: int = Field(ge=LOW, le=HIGH, description="a whole number from 1 to 100")


class HiddenNumberEnv(Env):
    """One episode: the hidden number comes from the task's ground truth, which no tool result reveals."""

    limits = Limits(max_steps=30)

    def __init__(self, task: Task) -> None:
        self._hidden = int(task.ground_truth["number"])
        self.answers: list[dict[str, object]] = []  # what the agent asked and was told, for the web app's screen

    def brief(self) -> str:
        return "A whole number from 1 to 100 is hidden. Ask whether it is higher than a number, then submit it."

    @tool(NumberArgs)
    def higher_than(self, args: NumberArgs) -> ToolResult:
        """Ask whether the hidden number is higher than n."""
        answer = self._hidden > args.n
        self.answers.append({"n": args.n, "higher": answer})
        return ToolResult(text="yes" if answer else "no", data={"higher": answer})

    @tool(NumberArgs)
    def submit(self, args: NumberArgs) -> ToolResult:
        """Submit your answer; this ends the episode."""
        self.finish(Termination.SUBMITTED)
        return ToolResult(text=f"submitted {args.n}")

    def outcome(self) -> dict[str, object]:
        return {"submitted": self.termination == Termination.SUBMITTED}

    def view(self) -> dict[str, object]:
        """What the web app's screen draws (hidden_number_screen.js): the answers so far, never the number."""
        return {"kind": "hidden-number", "answers": list(self.answers)}


class Bisect(Agent):
    """The reference solver: halve the interval with each question."""

    def start(self, context: AgentContext) -> None:
        self.low, self.high = LOW, HIGH

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if history and history[-1].call.tool == "higher_than" and isinstance(history[-1].call.args, dict):
            asked = int(str(history[-1].call.args["n"]))
            if history[-1].result.data["higher"]:
                self.low = asked + 1
            else:
                self.high = asked
        if self.low == self.high:
            return AgentDecision(call=ToolCall(tool="submit", args={"n": self.low}))
        return AgentDecision(call=ToolCall(tool="higher_than", args={"n": (self.low + self.high) // 2}))


def make_bisect(options: AgentOptions) -> Agent:
    """A fresh :class:`Bisect` for one episode."""
    return Bisect()


class HiddenNumberSuite(Suite):
    """Ten hidden numbers, drawn once from a fixed seed."""

    name = "hidden-number"
    description = "find a hidden number by asking whether it is higher than another"
    version = "1"

    def splits(self) -> list[str]:
        return ["test"]

    def tasks(self, split: str) -> list[Task]:
        if split != "test":
            raise UserError(f"suite '{self.name}' has no split '{split}'; splits: test")
        numbers = make_rng("hidden-number", "tasks").integers(LOW, HIGH + 1, size=10)
        brief = "Find the hidden number."
        return [
            Task(id=f"number-{i}", suite=self.name, split=split, brief=brief, ground_truth={"number": int(n)})
            for i, n in enumerate(numbers)
        ]

    def conditions(self) -> list[Condition]:
        return [Condition(name="default", description="the questions and the submit tool")]

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        return HiddenNumberEnv(task)

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {"bisect": make_bisect}

    def web_screens(self) -> dict[str, Path]:
        return {"hidden-number": Path(__file__).with_name("hidden_number_screen.js")}

    def score(self, episode: Episode) -> Score:
        """From the log alone: the number the accepted ``submit`` call named, against the ground truth."""
        submitted = [e.call.args for e in episode.events if e.call.tool == "submit" and e.result.ok]
        if not submitted or not isinstance(submitted[-1], dict):
            return Score(value=0.0, success=False, components={"submitted": False})
        right = submitted[-1].get("n") == episode.task.ground_truth["number"]
        questions = sum(e.call.tool == "higher_than" for e in episode.events)
        return Score(value=float(right), success=right, components={"submitted": True, "questions": questions})


suite = HiddenNumberSuite()
