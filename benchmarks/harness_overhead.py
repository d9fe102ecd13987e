"""Harness overhead: tool calls per second through the Env and through the runner.

A trivial environment (a counter) isolates what the harness itself costs: argument validation and
dispatch in ``Env.call``, then the agent loop, the event log, scoring and the atomically written episode
file in the runner. Figures are printed as calls per second and as ratios against a baseline measured in
the same run: calling the tool's method directly with pre-validated arguments.

    python benchmarks/harness_overhead.py [--episodes 40] [--steps 250]
"""

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import Field

from discogym.core import (
    Agent,
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
    tool,
)
from discogym.core.running.runner import RunConfig, Runner


class AddArgs(ToolArgs):
    n: int = Field(ge=1, le=10)


class CounterEnv(Env):
    limits = Limits(max_steps=None)

    def __init__(self, target: int) -> None:
        self.total = 0
        self.target = target

    def brief(self) -> str:
        return f"Count to {self.target}."

    @tool(AddArgs)
    def add(self, args: AddArgs) -> ToolResult:
        """Add n to the counter."""
        self.total += args.n
        if self.total >= self.target:
            self.finish(Termination.GOAL_REACHED)
        return ToolResult(text=f"total {self.total}", data={"total": self.total})


class Counter(Agent):
    def act(self, history: Sequence[Turn]) -> AgentDecision:
        return AgentDecision(call=ToolCall(tool="add", args={"n": 1}))


class CounterSuite(Suite):
    name = "counter"

    def __init__(self, steps: int, episodes: int) -> None:
        self.steps = steps
        self.episodes = episodes

    def splits(self) -> list[str]:
        return ["bench"]

    def tasks(self, split: str) -> list[Task]:
        return [Task(id=f"t{i}", suite=self.name, split=split, brief="count") for i in range(self.episodes)]

    def conditions(self) -> list[Condition]:
        return [Condition(name="plain")]

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        return CounterEnv(self.steps)

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {"counter": make_counter}

    def score(self, episode: Episode) -> Score:
        return Score(value=float(episode.outcome.termination == "reached"))


def make_counter(options: AgentOptions) -> Agent:
    return Counter()


def calls_per_second(calls: int, action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return calls / (time.perf_counter() - started)


def direct_baseline(total_calls: int) -> None:
    env = CounterEnv(total_calls)
    args = AddArgs(n=1)
    for _ in range(total_calls):
        env.add(args)


def through_env(total_calls: int) -> None:
    env = CounterEnv(total_calls)
    for _ in range(total_calls):
        env.call("add", {"n": 1})


def through_runner(suite: CounterSuite, workers: int) -> None:
    config = RunConfig.for_suite(suite)
    with tempfile.TemporaryDirectory() as out:
        summary = Runner(suite, config, Path(out), workers=workers).run()
        assert summary.complete and summary.scores == [1.0] * suite.episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--steps", type=int, default=250, help="tool calls per episode")
    options = parser.parse_args()
    suite = CounterSuite(options.steps, options.episodes)
    total = options.steps * options.episodes
    figures = [
        ("direct method call (baseline)", calls_per_second(total, lambda: direct_baseline(total))),
        ("Env.call (validation + dispatch)", calls_per_second(total, lambda: through_env(total))),
        ("runner, 1 worker (loop + log + file)", calls_per_second(total, lambda: through_runner(suite, 1))),
        ("runner, 2 workers", calls_per_second(total, lambda: through_runner(suite, 2))),
    ]
    baseline = figures[0][1]
    print(f"{options.episodes} episodes x {options.steps} tool calls = {total} calls per measurement")
    print(f"{'path':40} {'calls/s':>12} {'vs baseline':>12}")
    for label, rate in figures:
        print(f"{label:40} {rate:12,.0f} {rate / baseline:12.3f}")


if __name__ == "__main__":
    main()
