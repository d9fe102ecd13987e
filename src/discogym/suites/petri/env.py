"""The blind experiment harness: a mystery world as an environment with four tools.

`experiment` and `probe` return statistics only (group means, relative change, Mann-Whitney U p-value
Holm-adjusted across the metric vector, significance, Cliff's delta) and never echo a resolved configuration;
together they may be called 8 times. `claim` is free book-keeping; `submit` ends the episode. Invalid
arguments (an unknown parameter or metric, a value outside its legal range) get a clear error and spend no
budget. Every experiment runs on the task's 12 replicate seeds, shared by both arms.
"""

import json
from typing import Any, Literal

import numpy as np
from pydantic import Field

from discogym.core import (
    Env,
    Limits,
    Termination,
    Tool,
    ToolArgs,
    ToolCall,
    ToolError,
    ToolResult,
    UserError,
    computed,
    tool,
)
from discogym.core.terminal.human import tool_line
from discogym.suites.petri.boundary import BoundaryTruth
from discogym.suites.petri.sims.base import Simulation
from discogym.suites.petri.stats import MetricComparison, compare
from discogym.suites.petri.tasks import PetriTaskSpec

BUDGET = 8
EXPERIMENT_HELP = "Run a replicated A/B between two configs; returns statistics only (no configs echoed)."
PROBE_HELP = "Compare a guessed config against the hidden world; a non-significant result means your guess matches."
METRIC_HELP = "the metric to report (default: the target metric; in a world with no target named, every metric)"
CONFIG_HELP = 'parameter overrides on the control, e.g. {"noise": 2.5} (omit a parameter to leave it at control)'
TIER_GOALS = {
    "L1": "ONE parameter was changed. Identify which, and whether it pushes the target metric UP or DOWN.",
    "L2": (
        "ONE parameter was changed. Identify which, whether it pushes the target metric UP or DOWN, and the "
        "magnitude of the effect by the relative change of the target metric's mean: small 10-35%, medium "
        "35-75%, large 75% or more."
    ),
    "L3": (
        "TWO parameters were changed together. Identify BOTH, and the SIGN of their interaction: positive if "
        "the combined effect exceeds the sum of the individual effects, otherwise negative."
    ),
    "blind": (
        "ONE parameter was changed, and no target metric is named: identify which parameter, ONE metric that "
        "its change moves, and whether it pushes that metric UP or DOWN. An experiment or probe without a "
        "metric reports every metric."
    ),
}


class ExperimentArgs(ToolArgs):
    """Arguments of ``experiment``."""

    config_a: dict[str, float] = Field(default_factory=dict, description=f"arm A: {CONFIG_HELP}")
    config_b: dict[str, float] = Field(default_factory=dict, description=f"arm B: {CONFIG_HELP}")
    metric: str | None = Field(default=None, description=METRIC_HELP)


class ProbeArgs(ToolArgs):
    """Arguments of ``probe``."""

    guess: dict[str, float] = Field(default_factory=dict, description=f"your guessed world: {CONFIG_HELP}")
    metric: str | None = Field(default=None, description=METRIC_HELP)


class ClaimArgs(ToolArgs):
    """Arguments of ``claim``."""

    parameter: str = Field(description="a candidate parameter")
    effect: Literal["up", "down", "none"] = Field(description="its effect on the target metric")


class SubmitL1(ToolArgs):
    """The L1 answer."""

    parameter: str = Field(description="the changed parameter")
    direction: Literal["up", "down"] = Field(description="its effect on the target metric")


class SubmitL2(SubmitL1):
    """The L2 answer."""

    magnitude: Literal["small", "medium", "large"] = Field(description="|relative change| class of the target")


class SubmitL3(ToolArgs):
    """The L3 answer."""

    parameters: list[str] = Field(min_length=2, max_length=2, description="the two changed parameters")
    interaction: Literal["positive", "negative"] = Field(description="the sign of their interaction")


class SubmitL4(ToolArgs):
    """The L4 answer."""

    boundary: float = Field(description="the value of the scan parameter at which the regime changes")


class SubmitBlind(SubmitL1):
    """The blind-metric answer."""

    metric: str = Field(description="a metric the change moves")
    direction: Literal["up", "down"] = Field(description="its effect on that metric")


SUBMIT_MODELS: dict[str, type[ToolArgs]] = {
    "L1": SubmitL1,
    "L2": SubmitL2,
    "L3": SubmitL3,
    "L4": SubmitL4,
    "blind": SubmitBlind,
}


def describe(row: MetricComparison, label_a: str, label_b: str) -> str:
    """An experiment's result as the agent reads it: statistics only."""
    verdict = "significant" if row.significant else "not significant"
    return (
        f"metric {row.metric}: mean {label_a} {row.mean_a:.6g}, mean {label_b} {row.mean_b:.6g}, "
        f"relative change {row.relative_change:+.2%}; Mann-Whitney U p = {row.p_value:.4g}, "
        f"Holm-adjusted across the metric vector p = {row.p_holm:.4g} ({verdict} at alpha 0.05); "
        f"Cliff's delta {row.cliffs_delta:+.3f}"
    )


# petri-bench's scaffold (the paper's Appendix A), in our own words.
SYSTEM_PROMPT = (
    "You are an experimental scientist solving a hidden-parameter mystery. One of the candidate parameters (two, "
    "at tier L3) was changed from the revealed control configuration to make a hidden world. Find out which by "
    "controlled experiments: change ONE parameter at a time against the control, and read the Holm-adjusted "
    "p-value and the effect size that come back. Conclude that a parameter has an effect only when its result is "
    "significant. Experiments are limited, so do not waste them. Call submit once you are confident."
)

BOUNDARY_PROMPT = (
    "You are an experimental scientist locating a phase boundary in a simulated world whose settings are partly "
    "undisclosed. Each experiment runs the world at two values of the scan parameter and reports the metric's "
    "mean at each, with a significance test. Narrow down where the mean crosses the stated level, and submit "
    "that value. Experiments are limited, so choose them to bracket the boundary efficiently."
)


class PetriEnv(Env):
    """One mystery world."""

    limits = Limits(max_steps=40)

    def __init__(self, task: PetriTaskSpec, sim: Simulation) -> None:
        self.task = task
        self.sim = sim
        # the world as overrides on the simulation's own control: the task's control, and at L4 its hidden setting
        self.base = {**task.base(sim), **(task.changed if task.tier == "L4" else {})}
        self.spent = 0
        self.submission: dict[str, Any] | None = None
        self._control_cache: np.ndarray | None = None
        self._hidden_cache: np.ndarray | None = None
        declared = self._declared_tools
        submit = Tool("submit", declared["submit"].description, SUBMIT_MODELS[task.tier], declared["submit"].method)
        self._tools = [declared["experiment"], declared["probe"], declared["claim"], submit]
        if task.tier == "L4":  # nothing to probe or claim: the question is where, not which
            self._tools = [declared["experiment"], submit]

    def brief(self) -> str:
        if self.task.boundary is not None:
            return self._boundary_brief(self.task.boundary)
        control = json.dumps(self.task.control, sort_keys=True)
        target = "not named (find a metric the change moves)" if self.blind else self.task.target
        return (
            f"model: {self.task.simulation}\n"
            f"target metric: {target}\n"
            f"metrics: {', '.join(self.sim.metrics)}\n"
            f"control config: {control}\n"
            f"the changed parameter is one of: {', '.join(self.task.candidates)}\n"
            f"experiment budget: {BUDGET} calls (experiment and probe together)\n\n"
            f"{TIER_GOALS[self.task.tier]}\n"
            "Run experiments (change ONE parameter vs the control), then submit."
        )

    def _boundary_brief(self, boundary: BoundaryTruth) -> str:
        shown = {name: value for name, value in self.task.control.items() if name not in self.task.changed}
        return (
            f"model: {self.task.simulation}\n"
            f"metrics: {', '.join(self.sim.metrics)}\n"
            f"known settings of this world: {json.dumps(shown, sort_keys=True)}; other settings are undisclosed, "
            "and every experiment runs in this world\n"
            f"scan parameter: {boundary.parameter}, from {boundary.low:g} to {boundary.high:g}\n"
            f"experiment budget: {BUDGET} calls\n\n"
            f"L4: locate a phase boundary ({boundary.meaning}). Find the value of {boundary.parameter} at which "
            f"the mean of {boundary.metric} over the world's replicates crosses {boundary.level:g}, and submit it. "
            "An experiment compares two settings of the scan parameter and reports both means."
        )

    def system_prompt(self) -> str | None:
        return BOUNDARY_PROMPT if self.task.boundary is not None else SYSTEM_PROMPT

    def example_action(self) -> str | None:
        if self.task.boundary is not None:
            scan = self.task.boundary
            ends = {"config_a": {scan.parameter: scan.low}, "config_b": {scan.parameter: scan.high}}
            return tool_line(ToolCall(tool="experiment", args=ends))
        parameter = self.task.candidates[0]
        low, high = self.task.legal_range(self.sim, parameter)
        other = high if self.task.control[parameter] != high else low  # a legal value that differs from control
        return tool_line(ToolCall(tool="experiment", args={"config_a": {}, "config_b": {parameter: other}}))

    def tools(self) -> list[Tool]:
        return list(self._tools)

    @property
    def blind(self) -> bool:
        """A blind-metric world: the target is not named, and a call without a metric reports them all."""
        return self.task.tier == "blind"

    def _metric(self, metric: str | None) -> str | None:
        chosen = metric or (None if self.blind else self.task.target)
        if chosen is not None and chosen not in self.sim.metrics:
            raise ToolError(f"unknown metric {chosen!r}; metrics: {', '.join(self.sim.metrics)}")
        return chosen

    def _checked(self, overrides: dict[str, float]) -> dict[str, float]:
        try:
            self.sim.resolve(overrides)
        except UserError as err:
            raise ToolError(str(err)) from None
        for name, value in overrides.items():
            low, high = self.task.legal_range(self.sim, name)
            if not low <= value <= high:
                raise ToolError(f"parameter '{name}' must lie in [{low:g}, {high:g}] in this world, got {value:g}")
        return overrides

    def _spend(self) -> None:
        if self.spent >= BUDGET:
            raise ToolError(f"the budget of {BUDGET} experiment and probe calls is spent; submit your answer")
        self.spent += 1

    def _run(self, overrides: dict[str, float]) -> np.ndarray:
        if not overrides:
            if self._control_cache is None:
                self._control_cache = self._simulated(self.base)
            return self._control_cache
        return self._simulated({**self.base, **overrides})

    def _hidden(self) -> np.ndarray:
        if self._hidden_cache is None:
            self._hidden_cache = self._simulated({**self.base, **self.task.changed})
        return self._hidden_cache

    def _simulated(self, config: dict[str, float]) -> np.ndarray:
        """The metric vectors of ``config`` on the task's replicates (in a worker process where the server has
        them: a simulation is pure, and would hold the GIL from the server's other games)."""
        return computed(self.sim.run, config, tuple(self.task.replicate_seeds))

    def _result(
        self, values_a: np.ndarray, values_b: np.ndarray, metric: str | None, labels: tuple[str, str]
    ) -> ToolResult:
        rows = compare(values_a, values_b, self.sim.metrics)
        left = f"({BUDGET - self.spent} of {BUDGET} experiment/probe calls left)"
        if metric is None:
            text = "\n".join([*(describe(row, *labels) for row in rows), left])
            return ToolResult(text=text, data={"comparisons": [row.model_dump() for row in rows], "spent": self.spent})
        row = rows[self.sim.metrics.index(metric)]
        return ToolResult(
            text=f"{describe(row, *labels)}\n{left}", data={"comparison": row.model_dump(), "spent": self.spent}
        )

    @tool(ExperimentArgs, description=EXPERIMENT_HELP)
    def experiment(self, args: ExperimentArgs) -> ToolResult:
        metric = self._metric(args.metric)
        config_a, config_b = self._checked(args.config_a), self._checked(args.config_b)
        self._spend()
        return self._result(self._run(config_a), self._run(config_b), metric, ("A", "B"))

    @tool(ProbeArgs, description=PROBE_HELP)
    def probe(self, args: ProbeArgs) -> ToolResult:
        metric = self._metric(args.metric)
        guess = self._checked(args.guess)
        self._spend()
        return self._result(self._run(guess), self._hidden(), metric, ("guess", "hidden world"))

    @tool(ClaimArgs, description="Record a belief about one parameter's effect (optional book-keeping).")
    def claim(self, args: ClaimArgs) -> ToolResult:
        if args.parameter not in self.task.candidates:
            raise ToolError(f"unknown candidate {args.parameter!r}; candidates: {', '.join(self.task.candidates)}")
        return ToolResult(text=f"recorded: {args.parameter} {args.effect}", data={"claim": args.model_dump()})

    @tool(SubmitL1, description="Submit your final answer; ends the episode.")
    def submit(self, args: ToolArgs) -> ToolResult:
        answer = args.model_dump()
        if self.task.boundary is not None:
            self.submission = answer
            self.finish(Termination.SUBMITTED)
            return ToolResult(text="answer recorded; the episode is over", data={"submission": answer})
        if "metric" in answer and answer["metric"] not in self.sim.metrics:
            raise ToolError(f"unknown metric {answer['metric']!r}; metrics: {', '.join(self.sim.metrics)}")
        named = answer.get("parameters") or [answer["parameter"]]
        unknown = [name for name in named if name not in self.task.candidates]
        if unknown:
            raise ToolError(f"unknown candidate {unknown[0]!r}; candidates: {', '.join(self.task.candidates)}")
        if len(set(named)) != len(named):
            raise ToolError("name two different parameters")
        self.submission = answer
        self.finish(Termination.SUBMITTED)
        return ToolResult(text="answer recorded; the episode is over", data={"submission": answer})

    def outcome(self) -> dict[str, Any]:
        return {"submission": self.submission, "spent": self.spent}
