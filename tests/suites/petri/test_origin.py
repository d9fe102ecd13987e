"""The origin simulation: model invariants, determinism, the driver/decoy contract and the literature checks."""

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from discogym.core import UserError
from discogym.suites.petri.sims import origin
from discogym.suites.petri.sims.base import Param
from discogym.suites.petri.sims.origin import SIMULATION as SIM
from tests.suites.petri.checks import assert_params_inside_ranges

SEEDS = list(range(12))
TARGET = SIM.metrics.index(SIM.target)


def _params(role: str) -> list[Param]:
    return [param for param in SIM.params if param.role == role]


def _final_population(seeds: list[int]) -> np.ndarray:
    history = origin.simulate(SIM.resolve(), np.asarray(seeds, dtype=np.int64))
    return np.asarray(history[:, -1].sum(axis=1))


def _cases(role: str) -> list[tuple[str, float]]:
    return [(param.name, value) for param in _params(role) for value in param.test_values]


def test_parameter_space_has_drivers_decoys_and_a_control_inside_the_ranges():
    assert SIM.name == "origin" and SIM.target == "final_population" and len(SIM.metrics) >= 4
    assert {"mean_trait", "trait_variance", "time_to_equilibrium", "extinct"} <= set(SIM.metrics)
    assert len(_params("driver")) >= 3 and len(_params("decoy")) >= 3
    assert {param.name for param in SIM.params} == set(SIM.control)
    assert_params_inside_ranges(SIM)


def test_mutation_matrix_conserves_offspring_and_keeps_them_mostly_near_the_parent():
    matrix = origin.mutation_matrix(0.3, 0.05)
    assert np.allclose(matrix.sum(axis=0), 1.0) and (matrix >= 0).all()
    assert np.array_equal(origin.mutation_matrix(0.0, 0.05), np.eye(origin.TRAIT_BINS))
    assert (np.diag(matrix) > 0.7).all()


def test_poisson_sampler_has_poisson_moments_and_zero_for_zero_mean():
    uniforms = np.random.default_rng(0).random(20000)
    for mean in (0.3, 4.0, 250.0):
        draws = origin.poisson_from_uniform(uniforms, np.full(uniforms.shape, mean))
        assert (draws == np.round(draws)).all() and (draws >= 0).all()
        assert abs(draws.mean() / mean - 1) < 0.05 and abs(draws.var() / mean - 1) < 0.1
    assert (origin.poisson_from_uniform(uniforms[:10], np.zeros(10)) == 0).all()


def test_counts_are_whole_non_negative_and_metrics_are_in_range(control_values):
    history = origin.simulate(SIM.resolve(), np.arange(3, dtype=np.int64))
    assert history.shape == (3, origin.STEPS + 1, origin.TRAIT_BINS)
    assert (history >= 0).all() and np.array_equal(history, np.round(history))
    assert (history[:, 0].sum(axis=1) == SIM.control["initial_population"]).all()
    values = dict(zip(SIM.metrics, control_values.T, strict=True))
    assert np.array_equal(values["final_population"], _final_population(SEEDS))
    assert ((values["mean_trait"] >= 0) & (values["mean_trait"] <= 1)).all()
    assert ((values["trait_variance"] >= 0) & (values["trait_variance"] <= 0.25)).all()
    assert ((values["time_to_equilibrium"] >= 0) & (values["time_to_equilibrium"] <= origin.STEPS)).all()
    assert (values["extinct"] == 0).all()


def test_control_population_sits_near_its_carrying_capacity_and_trait_near_the_optimum(control_values):
    config = SIM.resolve()
    predicted = origin.predicted_equilibrium(config, origin.optimal_size(config["size_cost"]))
    assert abs(control_values[:, TARGET].mean() / predicted - 1) < 0.05
    assert abs(control_values[:, SIM.metrics.index("mean_trait")].mean() - 0.414) < 0.05


def test_extinction_is_reached_flagged_and_finite():
    values = SIM.run({"birth_rate": 0.05, "death_rate": 0.6}, [0, 1, 2])
    row = dict(zip(SIM.metrics, values[0], strict=True))
    assert row["final_population"] == 0 and row["extinct"] == 1
    assert row["mean_trait"] == 0 and row["trait_variance"] == 0 and 0 < row["time_to_equilibrium"] < origin.STEPS
    lone_founders = SIM.run({"initial_population": 1}, SEEDS)[:, SIM.metrics.index("extinct")]
    assert 0 < lone_founders.sum() < len(SEEDS)


@pytest.mark.parametrize(
    "overrides",
    [
        {param.name: value for param, value in zip(SIM.params, corner, strict=True)}
        for corner in (
            [p.low for p in SIM.params],
            [p.high for p in SIM.params],
            [p.low if i % 2 else p.high for i, p in enumerate(SIM.params)],
            [p.high if i % 2 else p.low for i, p in enumerate(SIM.params)],
        )
    ],
)
def test_corners_of_the_parameter_space_give_finite_metrics(overrides):
    values = SIM.run(overrides, [0, 1])
    assert np.isfinite(values).all() and (values[:, TARGET] >= 0).all()


def test_time_to_equilibrium_is_the_first_settled_step():
    population = np.full((3, 101), 100.0)
    population[1, :30] = 10.0
    population[2] = 0.0
    population[2, :10] = 5.0
    settled = origin.time_to_equilibrium(population)
    assert settled[0] == 0 and 30 < settled[1] < 30 + origin.EQUILIBRIUM_WINDOW
    assert settled[2] == 10 + origin.EQUILIBRIUM_WINDOW - 1


def test_same_seeds_give_identical_arrays_and_rows_do_not_depend_on_the_batch():
    seeds = [5, 0, 2**40, 17]
    together = SIM.run({"mutation_rate": 0.5}, seeds)
    assert np.array_equal(together, SIM.run({"mutation_rate": 0.5}, seeds))
    for i, seed in enumerate(seeds):
        assert np.array_equal(SIM.run({"mutation_rate": 0.5}, [seed])[0], together[i])
    assert np.array_equal(SIM.run({"mutation_rate": 0.5}, seeds[::-1]), together[::-1])


@pytest.mark.parametrize(("name", "value"), _cases("driver"))
def test_each_driver_test_value_moves_the_target_significantly(control_values, name, value):
    treated = SIM.run({name: value}, SEEDS)[:, TARGET]
    assert mannwhitneyu(control_values[:, TARGET], treated).pvalue < 0.01


@pytest.mark.parametrize(("name", "value"), _cases("decoy"))
def test_each_decoy_test_value_leaves_the_target_alone(control_values, name, value):
    treated = SIM.run({name: value}, SEEDS)
    control = control_values[:, TARGET]
    assert mannwhitneyu(control, treated[:, TARGET]).pvalue > 0.2
    assert abs(treated[:, TARGET].mean() / control.mean() - 1) < 0.05
    assert not np.array_equal(treated, control_values)


def test_drivers_span_the_magnitude_classes(control_values):
    base = control_values[:, TARGET].mean()
    changes = [abs(SIM.run({n: v}, SEEDS)[:, TARGET].mean() / base - 1) for n, v in _cases("driver")]
    assert max(changes) >= 0.75
    assert any(0.1 <= c < 0.35 for c in changes) and any(0.35 <= c < 0.75 for c in changes)


def test_decoys_change_a_non_target_metric(control_values):
    variance = SIM.metrics.index("trait_variance")
    assert SIM.run({"mutation_step": 0.1}, SEEDS)[:, variance].mean() > 1.5 * control_values[:, variance].mean()
    mean_trait = SIM.metrics.index("mean_trait")
    assert SIM.run({"initial_trait": 0.55}, SEEDS)[:, mean_trait].mean() > control_values[:, mean_trait].mean()
    settle = SIM.metrics.index("time_to_equilibrium")
    assert SIM.run({"initial_population": 100}, SEEDS)[:, settle].mean() < control_values[:, settle].mean()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("birth_rate", 0.9),
        ("death_rate", -0.1),
        ("carrying_capacity", 20),
        ("carrying_capacity", 1500.5),
        ("steps", 100),
        ("mutation_step", 0.0),
        ("initial_trait", 1.2),
        ("initial_population", 0),
    ],
)
def test_resolve_rejects_out_of_range_values(name, value):
    with pytest.raises(UserError):
        SIM.resolve({name: value})


def test_validate_returns_passing_checks(validation):
    checks, _ = validation
    assert len(checks) >= 2
    for check in checks:
        assert check.simulation == "origin" and check.reference and check.threshold
        assert check.passed, (check.name, check.measured, check.threshold)
    assert {"verhulst_equilibrium", "logistic_growth_fit", "mutation_selection_balance"} <= {c.name for c in checks}


def test_validate_writes_the_growth_plot(validation):
    _, plot_dir = validation
    plot = plot_dir / "origin.png"
    assert plot.exists() and plot.stat().st_size > 10_000
