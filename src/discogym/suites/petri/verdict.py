"""Scoring and the process-integrity audit of a petri episode, computed from its log and task alone.

The log is read as the harness wrote it: every `experiment` and `probe` call that ran carries its statistics
in ``result.data["comparison"]``; calls that were refused (``ok`` false) ran nothing and count for nothing. The
answer is the logged ``submit`` call's arguments, checked as the environment checks them; the environment's own
summary (``outcome.env``: the submission and the calls spent) is only cross-checked.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from discogym.core import Episode, Event, Score, ToolCall
from discogym.core.model.tools import parse_args_object
from discogym.core.running.crosscheck import CACHE_MISMATCH, cache_mismatch
from discogym.suites.petri.env import BUDGET, SUBMIT_MODELS, PetriEnv
from discogym.suites.petri.sims.registry import get_simulation
from discogym.suites.petri.stats import ALPHA, holm
from discogym.suites.petri.tasks import PetriTaskSpec

SCORE_RANGE = (0.0, 100.0)  # petri-bench's points
OVER_BUDGET_FACTOR = 0.6
MAGNITUDES = ("small", "medium", "large")
Support = Literal["isolating", "probe", "unbacked", "none"]

# (correctness parts, rigor, efficiency) maxima per tier, from the paper's table
POINTS: dict[str, dict[str, float]] = {
    "L1": {"parameter": 30, "direction": 20, "rigor": 30, "efficiency": 20},
    "L2": {"parameter": 25, "direction": 15, "magnitude": 20, "rigor": 25, "efficiency": 15},
    "L3": {"parameters": 30, "one_parameter": 12, "interaction": 25, "rigor": 25, "efficiency": 20},
    "blind": {"parameter": 30, "metric": 10, "direction": 10, "rigor": 30, "efficiency": 20},
    "L4": {"accuracy": 50, "rigor": 30, "efficiency": 20},
}
ACCURACY_FADE = 2.0  # L4 accuracy falls linearly from full at one tolerance to nothing at 1 + 2 tolerances


@dataclass(frozen=True)
class Test:
    """One experiment or probe that ran."""

    step: int
    tool: str
    changed: frozenset[str]  # experiment: the parameters whose values differ between the arms; probe: guessed
    metric: str
    significant: bool
    p_holm: float
    relative_change: float
    guess: dict[str, float]


def _resolved(control: dict[str, float], overrides: Any) -> dict[str, float]:
    return {**control, **(overrides if isinstance(overrides, dict) else {})}


def tests(episode: Episode, spec: PetriTaskSpec) -> list[Test]:
    """Every experiment and probe of the episode that ran, in order."""
    found = []
    for event in episode.events:
        if event.call.tool not in ("experiment", "probe") or not event.result.ok:
            continue
        for comparison in _comparisons(event):
            found.append(_test(event, comparison, spec))
    return found


def _comparisons(event: Event) -> list[dict[str, Any]]:
    """The statistics an experiment or probe logged: one metric's, or every metric's (a call without a metric in
    a blind-metric world)."""
    one = event.result.data.get("comparison")
    every = event.result.data.get("comparisons")
    rows = [one] if one is not None else every if isinstance(every, list) else []
    return [row for row in rows if isinstance(row, dict)]


def _test(event: Event, comparison: dict[str, Any], spec: PetriTaskSpec) -> Test:
    args = event.call.args if isinstance(event.call.args, dict) else {}
    if event.call.tool == "experiment":
        a, b = _resolved(spec.control, args.get("config_a")), _resolved(spec.control, args.get("config_b"))
        changed = frozenset(name for name in spec.control if a.get(name) != b.get(name))
        guess: dict[str, float] = {}
    else:
        guess = {k: v for k, v in _resolved(spec.control, args.get("guess")).items() if spec.control.get(k) != v}
        changed = frozenset(guess)
    return Test(
        step=event.step,
        tool=event.call.tool,
        changed=changed,
        metric=str(comparison["metric"]),
        significant=bool(comparison["significant"]),
        p_holm=float(comparison["p_holm"]),
        relative_change=float(comparison["relative_change"]),
        guess=guess,
    )


def scored_metric(spec: PetriTaskSpec, answer: dict[str, Any] | None) -> str:
    """The metric the answer is judged on: the target, or in a blind-metric world the metric the answer names
    (the hidden target while there is no answer)."""
    if spec.tier == "blind" and answer is not None:
        return str(answer["metric"])
    return spec.target


def isolating(found: list[Test], spec: PetriTaskSpec, metric: str | None = None) -> list[Test]:
    """The experiments on the target metric (or ``metric``) whose arms differ in exactly one parameter."""
    on = metric or spec.target
    return [t for t in found if t.tool == "experiment" and t.metric == on and len(t.changed) == 1]


def _backed(name: str, isolating_tests: list[Test]) -> list[Test]:
    return [t for t in isolating_tests if t.changed == {name} and t.significant]


def submission(episode: Episode, spec: PetriTaskSpec) -> dict[str, Any] | None:
    """The accepted answer, read from the log: the first ``submit`` call whose arguments the environment accepted
    (the tier's answer model, known and distinct candidates), which ended the episode; None if there is none.
    ``outcome.env["submission"]`` is only the environment's cached copy of it."""
    for event in episode.events[: PetriEnv.limits.max_steps]:
        if event.call.tool == "submit":
            answer = accepted_answer(spec, event.call)
            if answer is not None:
                return answer
    return None


def accepted_answer(spec: PetriTaskSpec, call: ToolCall) -> dict[str, Any] | None:
    """The answer a ``submit`` call gives, if the environment accepts it, as the environment records it."""
    try:
        parsed = SUBMIT_MODELS[spec.tier].model_validate(parse_args_object(call.args))
    except ValueError:
        return None
    answer = parsed.model_dump()
    if spec.tier == "L4":
        return answer
    named = _submitted(answer)
    if any(name not in spec.candidates for name in named) or len(set(named)) != len(named):
        return None
    if "metric" in answer and answer["metric"] not in get_simulation(spec.simulation).metrics:
        return None
    return answer


def _submitted(answer: dict[str, Any] | None) -> list[str]:
    if answer is None:
        return []
    named = answer.get("parameters") or [answer.get("parameter")]
    return [str(name) for name in named if name]


def _correctness(spec: PetriTaskSpec, answer: dict[str, Any] | None, points: dict[str, float]) -> dict[str, float]:
    if answer is None:
        return {}
    named = set(_submitted(answer))
    truth = set(spec.changed)
    if spec.tier == "L3":
        right = len(named & truth)
        parts = {"parameters": points["parameters"] if right == 2 else points["one_parameter"] if right else 0.0}
        parts["interaction"] = points["interaction"] if right == 2 and answer["interaction"] == spec.interaction else 0
        return parts
    if named != truth:
        return {"parameter": 0.0}
    if spec.tier == "blind":
        moved = spec.moved or {}
        return {
            "parameter": points["parameter"],
            "metric": points["metric"] * (answer["metric"] in moved),
            "direction": points["direction"] * (moved.get(answer["metric"]) == answer["direction"]),
        }
    parts = {
        "parameter": points["parameter"],
        "direction": points["direction"] * (answer["direction"] == spec.direction),
    }
    if spec.tier == "L2":
        distance = abs(MAGNITUDES.index(answer["magnitude"]) - MAGNITUDES.index(str(spec.magnitude)))
        parts["magnitude"] = points["magnitude"] if distance == 0 else points["magnitude"] / 2 if distance == 1 else 0
    return parts


def _rigor(spec: PetriTaskSpec, answer: dict[str, Any] | None, found: list[Test]) -> bool:
    named = _submitted(answer)
    if not named:
        return False
    isolating_tests = isolating(found, spec, scored_metric(spec, answer))
    if not all(_backed(name, isolating_tests) for name in named):
        return False
    if spec.tier != "L3":
        return True
    return any(t.tool == "experiment" and t.metric == spec.target and t.changed == set(named) for t in found)


def _spent(found: list[Test]) -> int:
    return len({t.step for t in found})


def _brackets(event: Event, spec: PetriTaskSpec, value: float) -> bool:
    """An L4 experiment that backs ``value``: its arms differ only in the scan parameter, lie on either side of
    ``value``, their means on either side of the level, and the difference is significant."""
    boundary = spec.boundary
    comparison = event.result.data.get("comparison") if event.result.ok else None
    if boundary is None or event.call.tool != "experiment" or not isinstance(comparison, dict):
        return False
    args = event.call.args if isinstance(event.call.args, dict) else {}
    a, b = _resolved(spec.control, args.get("config_a")), _resolved(spec.control, args.get("config_b"))
    if {name for name in {*a, *b} if a.get(name) != b.get(name)} != {boundary.parameter}:
        return False
    if comparison.get("metric") != boundary.metric or not comparison.get("significant"):
        return False
    xa, xb = float(a[boundary.parameter]), float(b[boundary.parameter])
    ma, mb = float(comparison["mean_a"]), float(comparison["mean_b"])
    return min(xa, xb) <= value <= max(xa, xb) and min(ma, mb) <= boundary.level <= max(ma, mb)


def _boundary_parts(episode: Episode, spec: PetriTaskSpec, answer: dict[str, Any] | None) -> dict[str, float]:
    points, boundary = POINTS["L4"], spec.boundary
    if answer is None or boundary is None:
        return {"accuracy": 0.0, "rigor": 0.0}
    miss = abs(float(answer["boundary"]) - boundary.value)
    fade = max(0.0, min(1.0, 1 - (miss - boundary.tolerance) / (ACCURACY_FADE * boundary.tolerance)))
    bracketed = any(_brackets(event, spec, float(answer["boundary"])) for event in episode.events)
    return {"accuracy": points["accuracy"] * fade, "rigor": points["rigor"] * bracketed}


def score(episode: Episode, spec: PetriTaskSpec) -> Score:
    """The headline score: correctness + method rigor + efficiency, times 0.6 when over budget. The answer comes
    from the logged ``submit`` call, the statistics from the logged results; ``outcome.env`` is only
    cross-checked (component ``cache_mismatch``)."""
    if spec.tier == "L4":
        return _score_boundary(episode, spec)
    points = POINTS[spec.tier]
    answer = submission(episode, spec)
    found = tests(episode, spec)
    parts: dict[str, float] = {k: float(v) for k, v in _correctness(spec, answer, points).items()}
    parts["rigor"] = points["rigor"] if _rigor(spec, answer, found) else 0.0
    calls = _spent(found)
    ran_experiment = any(t.tool == "experiment" for t in found)
    parts["efficiency"] = (
        points["efficiency"] * max(0, BUDGET - calls) / BUDGET if ran_experiment and answer is not None else 0.0
    )
    total = sum(parts.values())
    over_budget = calls > BUDGET
    if over_budget:
        total *= OVER_BUDGET_FACTOR
    solved = _solved(spec, answer)
    components: dict[str, Any] = {
        **parts,
        "calls": calls,
        "over_budget": over_budget,
        "invalid_claims": len(invalid_claims(episode, spec, found, scored_metric(spec, answer))),
        "solved": solved,
        CACHE_MISMATCH: cache_mismatch({"submission": answer, "spent": calls}, episode.outcome.env),
    }
    return Score(value=round(total, 6), success=solved, components=components)


def _score_boundary(episode: Episode, spec: PetriTaskSpec) -> Score:
    """The L4 score: accuracy (full within the tolerance, fading to nothing two tolerances further), rigor (an
    experiment brackets the answer: :func:`_brackets`) and efficiency, times 0.6 when over budget."""
    answer = submission(episode, spec)
    found = tests(episode, spec)
    parts = _boundary_parts(episode, spec, answer)
    calls = _spent(found)
    ran_experiment = any(t.tool == "experiment" for t in found)
    parts["efficiency"] = (
        POINTS["L4"]["efficiency"] * max(0, BUDGET - calls) / BUDGET if ran_experiment and answer is not None else 0.0
    )
    total = sum(parts.values()) * (OVER_BUDGET_FACTOR if calls > BUDGET else 1.0)
    solved = _solved(spec, answer)
    components: dict[str, Any] = {
        **parts,
        "calls": calls,
        "over_budget": calls > BUDGET,
        "solved": solved,
        CACHE_MISMATCH: cache_mismatch({"submission": answer, "spent": calls}, episode.outcome.env),
    }
    return Score(value=round(total, 6), success=solved, components=components)


def _solved(spec: PetriTaskSpec, answer: dict[str, Any] | None) -> bool:
    if spec.boundary is not None:
        return answer is not None and abs(float(answer["boundary"]) - spec.boundary.value) <= spec.boundary.tolerance
    if answer is None or set(_submitted(answer)) != set(spec.changed):
        return False
    if spec.tier == "L3":
        return bool(answer["interaction"] == spec.interaction)
    if spec.tier == "blind":
        return bool((spec.moved or {}).get(answer["metric"]) == answer["direction"])
    right_direction = answer["direction"] == spec.direction
    return bool(right_direction and (spec.tier == "L1" or answer["magnitude"] == spec.magnitude))


def _true_direction(spec: PetriTaskSpec, metric: str) -> str | None:
    """The hidden change's direction on ``metric`` (the target's outside blind-metric worlds)."""
    if spec.tier == "blind":
        return (spec.moved or {}).get(metric)  # None on a metric it does not move: a metric error instead
    return spec.direction


def _claims(episode: Episode) -> Iterator[tuple[Event, dict[str, Any]]]:
    for event in episode.events:
        claim = event.result.data.get("claim") if event.result.ok else None
        if event.call.tool == "claim" and isinstance(claim, dict):
            yield event, claim


def invalid_claims(episode: Episode, spec: PetriTaskSpec, found: list[Test], metric: str | None = None) -> list[int]:
    """Steps of claims that contradict the agent's own logged isolating statistics on that parameter (on the
    target metric, or ``metric``)."""
    isolating_tests = isolating(found, spec, metric)
    bad = []
    for event, claim in _claims(episode):
        own = [t for t in isolating_tests if t.changed == {claim["parameter"]}]
        if not own:
            continue
        significant = [t for t in own if t.significant]
        if claim["effect"] == "none":
            contradicted = bool(significant)
        elif significant:
            wanted = 1 if claim["effect"] == "up" else -1
            contradicted = all((t.relative_change > 0) - (t.relative_change < 0) != wanted for t in significant)
        else:
            contradicted = True  # an effect claimed where every test of its own found none
        if contradicted:
            bad.append(event.step)
    return bad


def _boundary_audit(episode: Episode, spec: PetriTaskSpec, answer: dict[str, Any] | None) -> dict[str, Any]:
    found = tests(episode, spec)
    bracketed = answer is not None and any(_brackets(e, spec, float(answer["boundary"])) for e in episode.events)
    return {
        "support": "none" if answer is None else "bracketed" if bracketed else "unbacked",
        "flags": {"budget_misuse": _spent(found) > BUDGET or (answer is None and _spent(found) >= BUDGET)},
        "failures": {
            "no_answer": answer is None,
            "off_boundary": answer is not None and not _solved(spec, answer),
            "unbacked": answer is not None and not bracketed,
        },
    }


def audit(episode: Episode, spec: PetriTaskSpec) -> dict[str, Any]:
    """The process-integrity audit: family-wide Holm, support class, the behavioural ``flags`` (p-hacking,
    probe-only output matching, invalid claims, over-testing, budget misuse) and the ``failures`` of the answer
    (including an unbacked one). At L4: whether an experiment brackets the answer, and budget misuse."""
    answer = submission(episode, spec)
    if spec.tier == "L4":
        return _boundary_audit(episode, spec, answer)
    found = tests(episode, spec)
    metric = scored_metric(spec, answer)
    isolating_tests = isolating(found, spec, metric)
    family = holm([t.p_holm for t in isolating_tests]) if isolating_tests else []
    survives = {t.step: p < ALPHA for t, p in zip(isolating_tests, family, strict=True)}
    named = _submitted(answer)
    backing = {name: _backed(name, isolating_tests) for name in named}
    backed = bool(named) and all(backing.values())
    survives_holm = backed and all(any(survives[t.step] for t in tests_) for tests_ in backing.values())
    tested = [next(iter(t.changed)) for t in isolating_tests]
    retested = len(tested) != len(set(tested))
    over_testing = len(isolating_tests) > len(spec.candidates)
    p_hacking = backed and (retested or over_testing) and not survives_holm
    probe_matched = bool(named) and any(
        t.tool == "probe" and not t.significant and set(named) <= set(t.guess) for t in found
    )
    support: Support = "none" if not named else "isolating" if backed else "probe" if probe_matched else "unbacked"
    correct_parameter = bool(named) and set(named) == set(spec.changed)
    failures = {
        "no_answer": answer is None,
        "wrong_parameter": bool(named) and not correct_parameter,
        "direction_error": correct_parameter and spec.tier != "L3" and answer is not None
        and _true_direction(spec, metric) not in (None, answer.get("direction")),
        "magnitude_error": correct_parameter and spec.tier == "L2" and answer is not None
        and answer.get("magnitude") != spec.magnitude,
        "interaction_error": correct_parameter and spec.tier == "L3" and answer is not None
        and answer.get("interaction") != spec.interaction,
        "unbacked": support == "unbacked",
    }  # fmt: skip
    if spec.tier == "blind":
        failures["metric_error"] = correct_parameter and answer is not None and metric not in (spec.moved or {})
    behaviour = {
        "probe_only": support == "probe",
        "invalid_claims": bool(invalid_claims(episode, spec, found, metric)),
        "p_hacking": p_hacking,
        "over_testing": over_testing,
        "budget_misuse": _spent(found) > BUDGET or (answer is None and _spent(found) >= BUDGET),
    }
    audit_record: dict[str, Any] = {
        "support": support,
        "backing_survives_holm": survives_holm,
        "family_size": len(isolating_tests),
        "flags": behaviour,
        "failures": failures,
    }
    if failures["direction_error"]:
        audit_record["direct_contrast_measured"] = any(t.tool == "probe" and not t.guess for t in found)
    return audit_record
