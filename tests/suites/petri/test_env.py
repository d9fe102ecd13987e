"""The blind experiment harness: statistics only, the budget, clear errors, and no ground truth in sight."""

import json
import re

import pytest

from discogym.suites.petri import frozen
from discogym.suites.petri.env import BUDGET, PetriEnv
from discogym.suites.petri.sims.registry import get_simulation
from discogym.suites.petri.tasks import PetriTaskSpec


def task(set_name: str = "pilot-v0", simulation: str = "market") -> PetriTaskSpec:
    return next(t for t in frozen.load_set(set_name).tasks if t.simulation == simulation)


def make_env(spec: PetriTaskSpec) -> PetriEnv:
    return PetriEnv(spec, get_simulation(spec.simulation))


def hidden_strings(spec: PetriTaskSpec) -> list[str]:
    """Texts that would give the answer away if an agent saw them: the hidden world's values (the answers'
    words, up/down and the like, are in every tool's schema as the options to choose from)."""
    values = [json.dumps(spec.changed), *(json.dumps(v) for v in spec.changed.values())]
    return [v for v in values if v not in json.dumps(spec.control)]


@pytest.mark.parametrize("set_name", ["pilot-v0", "l2-v0", "l3-v0", "core-v1", "l2-v1", "l3-v1", "blind-v1"])
def test_no_ground_truth_in_the_brief_tools_or_results(set_name):
    spec = task(set_name)
    env = make_env(spec)
    seen = [env.brief(), json.dumps([t.model_dump() for t in env.tool_specs()])]
    for name in spec.candidates:
        seen.append(env.call("experiment", {"config_b": {name: spec.reference_values[name]}}).text)
    seen.append(env.call("probe", {"guess": {}}).text)
    seen.append(env.call("claim", {"parameter": spec.candidates[0], "effect": "up"}).text)
    for text in seen:
        for secret in hidden_strings(spec):  # as a whole number, not a digit run inside another one
            assert re.search(rf"(?<![0-9.]){re.escape(secret)}(?![0-9])", text) is None, (secret, text)
    assert all(name in seen[0] for name in spec.candidates)
    assert f"target metric: {spec.target}" in seen[0] if spec.tier != "blind" else "target metric: not named" in seen[0]


def test_a_blind_metric_world_reports_every_metric_unless_one_is_named_and_checks_the_answers_metric():
    spec = task("blind-v1", "social")
    env = make_env(spec)
    every = env.call("experiment", {"config_b": {}})
    assert [row["metric"] for row in every.data["comparisons"]] == list(env.sim.metrics)
    assert all(f"metric {metric}:" in every.text for metric in env.sim.metrics)
    one = env.call("probe", {"guess": {}, "metric": "spread"})
    assert one.data["comparison"]["metric"] == "spread" and env.spent == 2
    refused = env.call("submit", {"parameter": spec.candidates[0], "metric": "mood", "direction": "up"})
    assert not refused.ok and "unknown metric 'mood'" in refused.text and not env.done


def test_isolating_experiments_reproduce_the_verified_ground_truth():
    spec = task("pilot-v0", "social")
    env = make_env(spec)
    for name in spec.candidates:
        result = env.call("experiment", {"config_a": {}, "config_b": {name: spec.reference_values[name]}})
        comparison = result.data["comparison"]
        assert comparison["significant"] == (name in spec.changed)
        assert comparison["p_holm"] == pytest.approx(spec.isolating_p_holm[name])
        assert "configs" not in result.text and str(spec.reference_values[name]) not in result.text


def test_a_v1_world_runs_at_its_operating_point_inside_its_lab_ranges():
    spec = task("l2-v1", "market")
    sim = get_simulation("market")
    env = make_env(spec)
    assert spec.base(sim) == {"periods": 1000.0} and '"periods": 1000.0' in env.brief()
    probe = env.call("probe", {"guess": {}}).data["comparison"]  # the control against the hidden world
    assert probe["relative_change"] == pytest.approx(spec.relative_change, rel=1e-5)
    (driver,) = spec.changed
    low, high = spec.legal_range(sim, driver)
    assert (low, high) != (sim.param(driver).low, sim.param(driver).high)  # narrower than the simulation's
    outside = sim.param(driver).high if high < sim.param(driver).high else sim.param(driver).low
    refused = env.call("experiment", {"config_b": {driver: outside}})
    assert not refused.ok and f"must lie in [{low:g}, {high:g}] in this world" in refused.text
    assert env.spent == 1  # the probe; the refused experiment ran nothing
    result = env.call("experiment", {"config_b": {driver: spec.reference_values[driver]}})
    assert result.data["comparison"]["significant"] and env.spent == 2


def test_an_l4_world_runs_with_its_undisclosed_setting_and_offers_only_experiments_and_an_answer():
    spec = task("l4-v1", "origin")
    assert spec.boundary is not None
    env = make_env(spec)
    (shifter, hidden), brief = next(iter(spec.changed.items())), env.brief()
    assert [t.name for t in env.tool_specs()] == ["experiment", "submit"]
    assert shifter not in brief and f"scan parameter: {spec.boundary.parameter}" in brief
    assert str(spec.boundary.value) not in brief and f"{spec.boundary.level:g}" in brief
    scan = spec.boundary.parameter
    ends = env.call("experiment", {"config_a": {scan: spec.boundary.low}, "config_b": {scan: spec.boundary.high}})
    comparison = ends.data["comparison"]
    assert comparison["metric"] == spec.boundary.metric and comparison["significant"]
    assert (
        min(comparison["mean_a"], comparison["mean_b"])
        < spec.boundary.level
        < max(comparison["mean_a"], comparison["mean_b"])
    )
    # at the boundary, the simulation's own setting of the shifter makes another world
    at_boundary = {scan: spec.boundary.value}
    own = env.call("experiment", {"config_a": at_boundary, "config_b": {**at_boundary, shifter: spec.control[shifter]}})
    assert own.data["comparison"]["significant"] and hidden != spec.control[shifter]
    outside = env.call("experiment", {"config_b": {scan: spec.boundary.high * 2}})
    assert not outside.ok and env.spent == 2


def test_the_budget_is_eight_experiment_and_probe_calls_and_mistakes_are_free():
    spec = task()
    env = make_env(spec)
    mistakes = [
        ("experiment", {"config_b": {"gravity": 1.0}}, "market has no parameter 'gravity'"),
        ("experiment", {"config_b": {"price_impact": 99.0}}, "parameter 'price_impact' must lie in"),
        ("experiment", {"metric": "happiness"}, "unknown metric 'happiness'; metrics: volatility"),
        ("probe", {"guess": {"price_impact": "a lot"}}, "Input should be a valid number"),
        ("claim", {"parameter": "gravity", "effect": "up"}, "unknown candidate 'gravity'"),
        ("submit", {"parameter": "gravity", "direction": "up"}, "unknown candidate 'gravity'"),
        ("submit", {"parameter": spec.candidates[0]}, "argument 'direction': Field required"),
    ]
    for name, args, message in mistakes:
        result = env.call(name, args)
        assert not result.ok and message in str(result.error), (name, result.error)
    assert env.spent == 0
    for i in range(BUDGET):
        result = env.call("probe" if i % 2 else "experiment", {})
        assert result.ok and f"{BUDGET - i - 1} of {BUDGET} experiment/probe calls left" in result.text
    over = env.call("experiment", {})
    assert not over.ok and "budget of 8 experiment and probe calls is spent" in str(over.error)
    assert env.spent == BUDGET and not env.done
    assert env.call("claim", {"parameter": spec.candidates[0], "effect": "none"}).ok  # claims are free
    done = env.call("submit", {"parameter": spec.candidates[0], "direction": "up"})
    assert done.ok and done.done and env.outcome()["submission"]["parameter"] == spec.candidates[0]


def test_each_tier_takes_its_own_answer():
    l2 = make_env(task("l2-v0"))
    assert set(next(t for t in l2.tool_specs() if t.name == "submit").parameters["required"]) == {
        "parameter", "direction", "magnitude",
    }  # fmt: skip
    l3_spec = task("l3-v0")
    l3 = make_env(l3_spec)
    first = l3_spec.candidates[0]
    same = l3.call("submit", {"parameters": [first, first], "interaction": "positive"})
    assert not same.ok and "two different parameters" in str(same.error)
    one = l3.call("submit", {"parameters": [first], "interaction": "positive"})
    assert not one.ok and "at least 2 items" in str(one.error)
    both = l3.call("submit", {"parameters": l3_spec.candidates[:2], "interaction": "negative"})
    assert both.ok and l3.done


def test_a_served_world_simulates_in_a_worker_process_and_answers_as_in_its_own(monkeypatch):
    # a web server computes the games' simulations in worker processes (core.computed): the same answers, and the
    # hidden world of a probe simulated once per game, not once per probe
    from discogym.core.running.process import computing_in_workers

    spec = task("core-v1", "swarm")
    calls = [("experiment", {"config_b": {spec.candidates[0]: spec.control[spec.candidates[0]]}}), ("probe", {})]
    calls += [("probe", {"guess": {spec.candidates[1]: spec.control[spec.candidates[1]]}})]
    env = make_env(spec)
    here = [env.call(name, args).text for name, args in calls]
    env = make_env(spec)
    simulated = []
    real_run = type(env.sim).run

    def run(sim, config, seeds):  # named as the method: a worker looks the method up by its name
        simulated.append(config)
        return real_run(sim, config, seeds)

    monkeypatch.setattr(type(env.sim), "run", run)
    with computing_in_workers(1):
        served = [env.call(name, args).text for name, args in calls]
    assert served == here
    assert simulated == []  # none in this process: the worker ran them (with the class's own method)
    env = make_env(spec)
    for name, args in calls:
        env.call(name, args)
    hidden = {**env.base, **spec.changed}
    assert sum(config == hidden for config in simulated) == 1
