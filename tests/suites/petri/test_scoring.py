"""Scoring and audit: the reference procedure's pinned scores on the frozen sets (played through the live
harness), and edge cases on hand-made logs (p-hacking against the minimal design, probe-only support, over
budget, claims that contradict the agent's own statistics)."""

from typing import Any

import pytest

from discogym.core import Condition, Episode, EpisodeKey, Event, Outcome, Provenance, Task, ToolCall, ToolResult
from discogym.suites.petri import frozen
from discogym.suites.petri.env import PetriEnv
from discogym.suites.petri.sims.registry import get_simulation
from discogym.suites.petri.tasks import PetriTaskSpec
from discogym.suites.petri.verdict import audit, score


def episode_of(spec: PetriTaskSpec, events: list[Event], submission: dict[str, Any] | None) -> Episode:
    """An episode of ``events``, ended by a ``submit`` call of ``submission`` (if any): the scorer reads the answer
    from the log, not from the cached outcome."""
    if submission is not None and not any(event.call.tool == "submit" for event in events):
        submit = Event(
            step=len(events) + 1,
            call=ToolCall(tool="submit", args=submission),
            result=ToolResult(text="answer recorded; the episode is over", data={"submission": submission}, done=True),
        )
        events = [*events, submit]
    return Episode(
        key=EpisodeKey(suite="petri", task=spec.id, condition="default", agent="test"),
        task=Task(id=spec.id, suite="petri", split=spec.set, brief="", ground_truth=spec.model_dump(mode="json")),
        condition=Condition(name="default"),
        brief="",
        tools=[],
        events=events,
        outcome=Outcome(status="completed", termination="submitted", env={"submission": submission}),
        provenance=Provenance(
            discogym_version="0", git_commit=None, python="", platform="", run_seed=0, env_seed=0, agent_seed=0
        ),
    )


def play(spec: PetriTaskSpec, calls: list[tuple[str, dict[str, Any]]]) -> Episode:
    """Make the calls in the live harness and return the episode."""
    env = PetriEnv(spec, get_simulation(spec.simulation))
    events = []
    for step, (tool, args) in enumerate(calls, start=1):
        events.append(Event(step=step, call=ToolCall(tool=tool, args=args), result=env.call(tool, args)))
    return episode_of(spec, events, env.outcome()["submission"])


def ofat_calls(spec: PetriTaskSpec) -> list[tuple[str, dict[str, Any]]]:
    """The reference procedure: one isolating test per candidate at its informative value; at L2 a probe of the
    control against the hidden world; at L3 the combined cell; then the answer the statistics give."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("experiment", {"config_b": {name: spec.reference_values[name]}}) for name in spec.candidates
    ]
    if spec.tier == "L3":
        calls.append(("experiment", {"config_b": dict(spec.changed)}))
        answer: dict[str, Any] = {"parameters": sorted(spec.changed), "interaction": spec.interaction}
    else:
        answer = {"parameter": next(iter(spec.changed)), "direction": spec.direction}
        if spec.tier == "L2":
            calls.append(("probe", {"guess": {}}))
            answer["magnitude"] = spec.magnitude
    return [*calls, ("submit", answer)]


@pytest.mark.parametrize(("set_name", "expected"), [("pilot-v0", 92.5), ("l2-v0", 92.5), ("l3-v0", 87.5)])
def test_the_reference_procedure_earns_the_papers_pinned_scores_without_flags(set_name, expected):
    for spec in frozen.load_set(set_name).tasks:
        episode = play(spec, ofat_calls(spec))
        assert score(episode, spec).value == expected, spec.id
        checked = audit(episode, spec)
        assert checked["support"] == "isolating" and not any(checked["flags"].values()), (spec.id, checked)
        assert not any(checked["failures"].values())


SPEC = next(t for t in frozen.load_set("pilot-v0").tasks if t.simulation == "market")
DRIVER = next(iter(SPEC.changed))
DECOYS = [name for name in SPEC.candidates if name != DRIVER]


def experiment(step: int, name: str, value: float, p: float, change: float = 0.5, metric: str = "") -> Event:
    """A hand-made isolating experiment on ``name`` with the given Holm p and relative change."""
    comparison = {
        "metric": metric or SPEC.target, "mean_a": 1.0, "mean_b": 1.0 + change, "relative_change": change,
        "p_value": p / 3, "p_holm": p, "significant": p < 0.05, "cliffs_delta": 0.9,
    }  # fmt: skip
    args = {"config_a": {}, "config_b": {name: value}}
    result = ToolResult(text="", data={"comparison": comparison})
    return Event(step=step, call=ToolCall(tool="experiment", args=args), result=result)


def test_a_lone_borderline_hit_after_fishing_is_p_hacking_but_the_minimal_design_never_is():
    answer = {"parameter": DRIVER, "direction": "up"}
    sweep = [experiment(1, DRIVER, 1.0, 0.03), experiment(2, DECOYS[0], 1.0, 0.6), experiment(3, DECOYS[1], 1.0, 0.7)]
    minimal = episode_of(SPEC, sweep, answer)
    checked = audit(minimal, SPEC)
    assert checked["backing_survives_holm"] is False and checked["flags"]["p_hacking"] is False  # low power only
    fished = episode_of(
        SPEC,
        [experiment(1, DRIVER, 1.0, 0.2), experiment(2, DRIVER, 2.0, 0.3), experiment(3, DRIVER, 3.0, 0.03),
         experiment(4, DECOYS[0], 1.0, 0.6)],
        answer,
    )  # fmt: skip
    assert audit(fished, SPEC)["flags"]["p_hacking"] is True
    robust = episode_of(SPEC, [experiment(1, DRIVER, 1.0, 0.001), experiment(2, DRIVER, 2.0, 0.002)], answer)
    assert audit(robust, SPEC)["flags"]["p_hacking"] is False  # re-tested, but it survives the family


def test_probe_only_support_earns_no_rigor():
    probe = {"metric": SPEC.target, "mean_a": 1, "mean_b": 1, "relative_change": 0.0, "p_value": 0.9,
             "p_holm": 0.9, "significant": False, "cliffs_delta": 0.0}  # fmt: skip
    event = Event(
        step=1,
        call=ToolCall(tool="probe", args={"guess": {DRIVER: SPEC.changed[DRIVER]}}),
        result=ToolResult(text="", data={"comparison": probe}),
    )
    episode = episode_of(SPEC, [event], {"parameter": DRIVER, "direction": SPEC.direction})
    result = score(episode, SPEC)
    assert result.components["rigor"] == 0 and result.components["efficiency"] == 0  # no experiment ran
    assert result.value == 50.0
    checked = audit(episode, SPEC)
    assert checked["support"] == "probe" and checked["flags"]["probe_only"]


def test_over_budget_logs_are_multiplied_by_six_tenths_and_refused_calls_count_for_nothing():
    events = [experiment(i + 1, DECOYS[i % 2], 1.0 + i, 0.5) for i in range(8)]
    events.append(experiment(9, DRIVER, 1.0, 0.001, change=0.5 if SPEC.direction == "up" else -0.5))
    answer = {"parameter": DRIVER, "direction": SPEC.direction}
    over = score(episode_of(SPEC, events, answer), SPEC)
    assert over.components["over_budget"] is True and over.value == pytest.approx((30 + 20 + 30) * 0.6)
    refused = ToolResult.failure("the budget of 8 experiment and probe calls is spent")
    events[8] = Event(step=9, call=events[8].call, result=refused)
    events.insert(0, experiment(0, DRIVER, 1.0, 0.001))
    within = score(episode_of(SPEC, events, answer), SPEC)
    assert within.components["calls"] == 9 and within.components["over_budget"] is True
    assert score(episode_of(SPEC, events[:8], answer), SPEC).components["calls"] == 8


def test_claims_that_contradict_the_agents_own_statistics_are_counted():
    up, down = 0.5, -0.5

    def claim(step: int, name: str, effect: str) -> Event:
        data = {"claim": {"parameter": name, "effect": effect}}
        call = ToolCall(tool="claim", args={"parameter": name, "effect": effect})
        return Event(step=step, call=call, result=ToolResult(text="", data=data))

    events = [
        experiment(1, DRIVER, 1.0, 0.001, change=up),
        experiment(2, DECOYS[0], 1.0, 0.7, change=down),
        claim(3, DRIVER, "up"),  # consistent
        claim(4, DRIVER, "down"),  # contradicts a significant increase
        claim(5, DRIVER, "none"),  # contradicts a significant effect
        claim(6, DECOYS[0], "down"),  # an effect where its own test found none
        claim(7, DECOYS[0], "none"),  # consistent
        claim(8, DECOYS[1], "up"),  # never tested: nothing to contradict
    ]
    result = score(episode_of(SPEC, events, None), SPEC)
    assert result.components["invalid_claims"] == 3 and result.value == 0.0
    assert audit(episode_of(SPEC, events, None), SPEC)["flags"]["invalid_claims"] is True


def test_wrong_parameter_scores_nothing_for_direction_and_a_direction_error_records_the_direct_contrast():
    wrong = episode_of(SPEC, [experiment(1, DECOYS[0], 1.0, 0.001)], {"parameter": DECOYS[0], "direction": "up"})
    # no correctness, but the (wrong) answer is backed by its own significant test: rigor and efficiency
    assert score(wrong, SPEC).value == 0 + 30 + 20 * 7 / 8 and audit(wrong, SPEC)["failures"]["wrong_parameter"]
    flipped = "down" if SPEC.direction == "up" else "up"
    direction = episode_of(SPEC, [experiment(1, DRIVER, 1.0, 0.001)], {"parameter": DRIVER, "direction": flipped})
    checked = audit(direction, SPEC)
    assert checked["failures"]["direction_error"] and checked["direct_contrast_measured"] is False
    assert score(direction, SPEC).value == 30 + 0 + 30 + 20 * 7 / 8
