"""The reference solvers: `guess` (a seeded guess, no experiments), `ofat` (one isolating test per candidate at
its curated informative value, a probe of control against the hidden world at L2, the combined cell at L3),
`adaptive` (ofat that stops testing once the answer is found) and `ofat-rand` (ofat with test values drawn
uniformly from each legal range: the privileged-value ablation; ``--agent-opt salt=N`` for other draws).

They read the task's candidates, tier and, for ofat and adaptive, the curated values from the suite's solver
hints, and the statistics from the harness's results.
"""

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from discogym.core import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentOptions,
    ToolCall,
    Turn,
    UserError,
    derive_seed,
    with_options,
)
from discogym.suites.petri.generate import magnitude_class


class _Sweep(Agent):
    """One isolating experiment per candidate, then the tier's follow-up, then the answer."""

    stop_early = False

    def __init__(self, values: str = "curated", salt: int = 0) -> None:
        self.values = values
        self.salt = salt
        self.hints: dict[str, Any] = {}
        self.rng = np.random.default_rng(0)
        self.fallback_rng = np.random.default_rng(0)

    def start(self, context: AgentContext) -> None:
        self.hints = context.hints
        self.rng = np.random.default_rng(derive_seed(context.seed, "ofat-rand", self.salt))
        self.fallback_rng = np.random.default_rng(derive_seed(context.seed, "ofat-fallback", self.salt))

    def settings(self) -> dict[str, Any]:
        return {"values": self.values, "salt": self.salt, "stop_early": self.stop_early}

    def _value(self, name: str) -> float:
        if self.values == "curated":
            return float(self.hints["reference_values"][name])
        low, high, kind = self.hints["ranges"][name]
        value = float(self.rng.uniform(low, high))
        return float(round(value)) if kind == "int" else value

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if self.hints["tier"] == "L4":
            return self._locate(history)
        candidates: list[str] = list(self.hints["candidates"])
        tier: str = self.hints["tier"]
        if tier == "blind":  # first the hidden world against the control, to learn which metrics it moves
            probe = next((t for t in history if t.call.tool == "probe" and t.result.ok), None)
            if probe is None:
                return AgentDecision(call=ToolCall(tool="probe", args={"guess": {}}))
            moved = {row["metric"] for row in probe.result.data.get("comparisons", []) if row.get("significant")}
            history = [_within(turn, moved) if _is_isolating(turn) else turn for turn in history]
        isolating = {next(iter(_config_b(t))): t for t in history if _is_isolating(t)}
        significant = sorted(
            (name for name in candidates if name in isolating and _significant(isolating[name])),
            key=lambda name: (_p(isolating[name]), name),
        )
        wanted = 2 if tier == "L3" else 1
        done_testing = len(isolating) == len(candidates) or (self.stop_early and len(significant) >= wanted)
        if not done_testing:
            name = next(name for name in candidates if name not in isolating)
            return AgentDecision(call=ToolCall(tool="experiment", args={"config_b": {name: self._value(name)}}))
        chosen = self._choose(candidates, significant, wanted)
        follow_up = _follow_up(tier, chosen, isolating, history)
        if follow_up is not None:
            return AgentDecision(call=follow_up)
        return AgentDecision(call=ToolCall(tool="submit", args=_answer(tier, chosen, isolating, history)))

    def _locate(self, history: Sequence[Turn]) -> AgentDecision:
        """L4: the range's ends first, then each call splits the bracket around the crossing in three (random
        pairs of values for ofat-rand); then the crossing interpolated in the last bracket."""
        boundary = self.hints["boundary"]
        name, level = boundary["parameter"], float(boundary["level"])
        points = _scan_points(history, name)
        calls = sum(t.call.tool == "experiment" for t in history)
        if calls < (BOUNDARY_CALLS - 1 if self.stop_early else BOUNDARY_CALLS):
            low, high = float(boundary["low"]), float(boundary["high"])
            if self.values == "random":
                a, b = float(self.rng.uniform(low, high)), float(self.rng.uniform(low, high))
            elif not points:
                a, b = low, high
            else:
                pair = _bracket(points, level)
                left, right = (pair[0][0], pair[1][0]) if pair else (low, high)
                a, b = left + (right - left) / 3, left + 2 * (right - left) / 3
            args = {"config_a": {name: a}, "config_b": {name: b}, "metric": boundary["metric"]}
            return AgentDecision(call=ToolCall(tool="experiment", args=args))
        return AgentDecision(call=ToolCall(tool="submit", args={"boundary": _crossing(points, level, boundary)}))

    def _choose(self, candidates: list[str], significant: list[str], wanted: int) -> list[str]:
        """The significant candidates (the strongest first when there are more than wanted); when fewer tested
        significant than the tier asks for, a seeded guess among the rest, which no evidence separates."""
        chosen = significant[:wanted]
        if len(chosen) < wanted:
            rest = [name for name in candidates if name not in chosen]
            picks = self.fallback_rng.choice(len(rest), size=wanted - len(chosen), replace=False)
            chosen += [rest[int(i)] for i in sorted(picks)]
        return chosen


Point = tuple[float, float]  # (scan value, metric mean)
BOUNDARY_CALLS = 5  # the ends, then four splits in three: the bracket ends 81 times narrower than the range


def _scan_points(history: Sequence[Turn], name: str) -> list[Point]:
    """(scan value, metric mean) of every experiment's arms, by value."""
    points = []
    for turn in history:
        comparison = _comparison(turn)
        args = turn.call.args if isinstance(turn.call.args, dict) else {}
        if turn.call.tool != "experiment" or not comparison:
            continue
        for arm, mean in (("config_a", "mean_a"), ("config_b", "mean_b")):
            config = args.get(arm)
            if isinstance(config, dict) and name in config:
                points.append((float(config[name]), float(comparison[mean])))
    return sorted(points)


def _bracket(points: list[Point], level: float) -> tuple[Point, Point] | None:
    """The first two neighbouring points whose means lie on either side of ``level``."""
    return next(((p, q) for p, q in pairwise(points) if (p[1] > level) != (q[1] > level)), None)


def _crossing(points: list[Point], level: float, boundary: dict[str, Any]) -> float:
    """The level's crossing interpolated between the bracketing means; without a bracket, the measured value
    whose mean is nearest the level (the range's middle when nothing was measured)."""
    pair = _bracket(points, level)
    if pair is not None:
        (x1, m1), (x2, m2) = pair
        return x1 + (level - m1) * (x2 - x1) / (m2 - m1)
    if not points:
        return (float(boundary["low"]) + float(boundary["high"])) / 2
    return min(points, key=lambda point: abs(point[1] - level))[0]


def _is_isolating(turn: Turn) -> bool:
    return turn.call.tool == "experiment" and turn.result.ok and len(_config_b(turn)) == 1


def _comparison(turn: Turn | None) -> dict[str, Any]:
    """A result's statistics: its metric's, or, where it reports every metric (a blind-metric world), those of
    the metric it moves most surely (significant first, then the smallest p)."""
    if turn is None:
        return {}
    data = turn.result.data.get("comparison")
    every = turn.result.data.get("comparisons")
    if isinstance(every, list) and every:
        rows = [row for row in every if isinstance(row, dict)]
        return min(rows, key=lambda row: (not row.get("significant"), float(row.get("p_holm", 1.0))), default={})
    return data if isinstance(data, dict) else {}


def _within(turn: Turn, metrics: set[str]) -> Turn:
    """An every-metric result cut down to ``metrics``: in a blind world the sweep judges candidates only on the
    metrics the hidden change moves (a decoy may move others)."""
    rows = [row for row in turn.result.data.get("comparisons", []) if row.get("metric") in metrics]
    result = turn.result.model_copy(update={"data": {**turn.result.data, "comparisons": rows}})
    return turn.model_copy(update={"result": result})


def _significant(turn: Turn) -> bool:
    return bool(_comparison(turn).get("significant"))


def _p(turn: Turn | None) -> float:
    return float(_comparison(turn).get("p_holm", 1.0))


def _follow_up(tier: str, chosen: list[str], isolating: dict[str, Turn], history: Sequence[Turn]) -> ToolCall | None:
    if tier == "L2" and not any(t.call.tool == "probe" for t in history):
        return ToolCall(tool="probe", args={"guess": {}})
    if tier == "L3" and not any(t.call.tool == "experiment" and len(_config_b(t)) == 2 for t in history):
        combined = {name: _config_b(isolating[name])[name] for name in chosen if name in isolating}
        return ToolCall(tool="experiment", args={"config_b": combined}) if len(combined) == 2 else None
    return None


def _config_b(turn: Turn) -> dict[str, float]:
    args = turn.call.args if isinstance(turn.call.args, dict) else {}
    config = args.get("config_b")
    return dict(config) if isinstance(config, dict) else {}


def _answer(tier: str, chosen: list[str], isolating: dict[str, Turn], history: Sequence[Turn]) -> dict[str, Any]:
    if tier == "L3":
        combined = next((t for t in history if t.call.tool == "experiment" and len(_config_b(t)) == 2), None)
        cells = [_comparison(isolating.get(name)) for name in chosen]
        both = _comparison(combined)
        base = float(both.get("mean_a", 0.0))
        contrast = float(both.get("mean_b", 0.0)) - sum(float(c.get("mean_b", base)) for c in cells) + base
        return {"parameters": chosen, "interaction": "positive" if contrast > 0 else "negative"}
    measured = _comparison(isolating.get(chosen[0]))
    change = float(measured.get("relative_change", 0.0))
    answer: dict[str, Any] = {"parameter": chosen[0], "direction": "up" if change > 0 else "down"}
    if tier == "blind":
        answer["metric"] = str(measured.get("metric", ""))
    if tier == "L2":
        probe = next((t for t in history if t.call.tool == "probe" and t.result.ok), None)
        answer["magnitude"] = magnitude_class(float(_comparison(probe).get("relative_change", 0.0))) or "small"
    return answer


class Adaptive(_Sweep):
    """ofat with early stopping: testing ends once the tier's answer has tested significant."""

    stop_early = True


class RandomGuess(Agent):
    """A seeded guess with no experiments: the chance floor. It reads only the tier and the candidates, which
    the brief shows every agent."""

    def __init__(self) -> None:
        self.hints: dict[str, Any] = {}
        self.rng = np.random.default_rng(0)

    def start(self, context: AgentContext) -> None:
        self.hints = context.hints
        self.rng = np.random.default_rng(context.seed)

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        candidates = list(self.hints["candidates"])
        if self.hints["tier"] == "L4":
            boundary = self.hints["boundary"]
            value = float(self.rng.uniform(float(boundary["low"]), float(boundary["high"])))
            return AgentDecision(call=ToolCall(tool="submit", args={"boundary": value}))
        if self.hints["tier"] == "L3":
            picked = sorted(str(c) for c in self.rng.choice(candidates, size=2, replace=False))
            sign = str(self.rng.choice(["positive", "negative"]))
            return AgentDecision(call=ToolCall(tool="submit", args={"parameters": picked, "interaction": sign}))
        answer: dict[str, Any] = {
            "parameter": str(self.rng.choice(candidates)),
            "direction": str(self.rng.choice(["up", "down"])),
        }
        if self.hints["tier"] == "L2":
            answer["magnitude"] = str(self.rng.choice(["small", "medium", "large"]))
        if self.hints["tier"] == "blind":
            answer["metric"] = str(self.rng.choice(self.hints["metrics"]))
        return AgentDecision(call=ToolCall(tool="submit", args=answer))


def _make_ofat_rand(options: AgentOptions) -> Agent:
    """``ofat-rand`` with ``--agent-opt salt=N`` (default 0) choosing the value draws."""
    raw = options.options.get("salt", "0")
    try:
        salt = int(raw)
    except ValueError:
        raise UserError(f"agent 'ofat-rand': --agent-opt salt takes a whole number, got {raw!r}") from None
    return _Sweep(values="random", salt=salt)


make_ofat_rand = with_options(_make_ofat_rand, "salt")


def make_ofat(options: AgentOptions) -> Agent:
    """``ofat``: the reference sweep with curated values."""
    return _Sweep()


def make_adaptive(options: AgentOptions) -> Agent:
    """``adaptive``: the reference sweep that stops early."""
    return Adaptive()


def make_guess(options: AgentOptions) -> Agent:
    """petri's ``guess`` floor: a random answer without experiments (the generic ``random`` agent is another:
    uniform over the valid tool calls)."""
    return RandomGuess()
