"""The social simulation: Deffuant bounded-confidence opinion dynamics."""

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from discogym.core import UserError
from discogym.suites.petri.sims import social
from discogym.suites.petri.sims.base import Check

SIM = social.SIMULATION
SEEDS = list(range(12))
SEEDS_B = list(range(100, 112))
TARGET = SIM.metrics.index(SIM.target)


def target(overrides: dict[str, float], seeds: list[int]) -> np.ndarray:
    """The target metric over ``seeds`` at the control with ``overrides``."""
    return SIM.run(overrides, seeds)[:, TARGET]


def column(values: np.ndarray, metric: str) -> np.ndarray:
    """One metric's column of a batch result."""
    return values[:, SIM.metrics.index(metric)]


def test_declared_space_is_consistent() -> None:
    assert SIM.name == "social"
    assert SIM.target == "clusters" and SIM.target in SIM.metrics
    assert len(SIM.metrics) >= 4 and len(set(SIM.metrics)) == len(SIM.metrics)
    roles = [p.role for p in SIM.params]
    assert roles.count("driver") >= 3 and roles.count("decoy") >= 3
    assert set(SIM.control) == {p.name for p in SIM.params}
    for param in SIM.params:
        assert param.low <= SIM.control[param.name] <= param.high
        assert param.meaning
        if param.role != "fixed":
            assert 2 <= len(param.test_values) <= 4
        for value in param.test_values:
            assert param.low <= value <= param.high and value != SIM.control[param.name]
    assert SIM.resolve() == {p.name: float(SIM.control[p.name]) for p in SIM.params}


def test_resolve_rejects_bad_values() -> None:
    with pytest.raises(UserError):
        SIM.resolve({"epsilon": 0.6})
    with pytest.raises(UserError):
        SIM.resolve({"mu": 0.0})
    with pytest.raises(UserError):
        SIM.resolve({"n_agents": 250.5})
    with pytest.raises(UserError):
        SIM.resolve({"n_agents": 5000})
    with pytest.raises(UserError):
        SIM.resolve({"no_such_parameter": 1.0})


def test_opinions_stay_in_the_unit_interval_and_the_mean_is_conserved() -> None:
    config = SIM.resolve({"epsilon": 0.15, "contact_rate": 0.7, "local_fraction": 0.3, "init_shape": 0.5})
    seeds = np.arange(4, dtype=np.int64)
    draws = social._draws(seeds, int(config["n_agents"]), int(config["sweeps"]), 0.3, 0.7)
    start = social._initial_opinions(draws.initial, config["init_width"], config["init_shape"])
    final, active = social._evolve(start, draws, config["epsilon"], config["mu"], config["contact_rate"])
    assert start.min() >= 0.0 and start.max() <= 1.0
    assert final.min() >= 0.0 and final.max() <= 1.0
    # every pair update moves both partners by the same amount in opposite directions
    np.testing.assert_allclose(final.mean(axis=1), start.mean(axis=1), atol=1e-12)
    assert (active >= 0).all() and (active <= config["n_agents"]).all()


def test_initial_width_bounds_the_start() -> None:
    uniforms = np.random.default_rng(0).random((2, 1000))
    start = social._initial_opinions(uniforms, 0.4, 0.7)
    assert start.min() >= 0.3 and start.max() <= 0.7


@pytest.mark.parametrize(
    "overrides",
    [{}, {"epsilon": 0.05}, {"epsilon": 0.5}, {"n_agents": 101, "local_fraction": 0.7}, {"sweeps": 100, "mu": 0.1}],
)
def test_metrics_are_finite_and_in_range(overrides: dict[str, float]) -> None:
    values = SIM.run(overrides, [0, 1, 2])
    config = SIM.resolve(overrides)
    assert values.shape == (3, len(SIM.metrics)) and np.isfinite(values).all()
    clusters = column(values, "clusters")
    assert (clusters >= 1).all() and np.array_equal(clusters, np.round(clusters))
    assert ((column(values, "polarization") >= 0) & (column(values, "polarization") <= 0.25)).all()
    assert ((column(values, "spread") >= 0) & (column(values, "spread") <= 1)).all()
    assert ((column(values, "convergence_time") >= 0) & (column(values, "convergence_time") <= config["sweeps"])).all()
    assert ((column(values, "largest_share") > 0) & (column(values, "largest_share") <= 1)).all()


def test_consensus_means_one_cluster_and_no_spread() -> None:
    values = SIM.run({"epsilon": 0.5}, [0, 1, 2])
    assert (column(values, "clusters") == 1).all()
    assert (column(values, "spread") < 0.01).all()
    assert (column(values, "largest_share") == 1).all()


def test_cluster_counting_convention() -> None:
    n = 200
    opinions = np.concatenate([np.full(100, 0.2), np.full(97, 0.8), np.full(3, 0.5)])[None, :]
    metrics = social._cluster_metrics(opinions)
    assert metrics["clusters"][0] == 2  # the 3-agent group (1.5% < 2%) is a minor cluster
    assert metrics["largest_share"][0] == pytest.approx(100 / n)
    assert metrics["spread"][0] == pytest.approx(0.6)


@pytest.mark.parametrize("overrides", [{}, {"contact_rate": 0.6, "local_fraction": 0.4, "init_shape": 0.5}])
def test_determinism_and_independence_from_the_batch(overrides: dict[str, float]) -> None:
    seeds = [5, 17, 3, 2**40 + 7]
    first = SIM.run(overrides, seeds)
    assert np.array_equal(first, SIM.run(overrides, seeds))
    for i, seed in enumerate(seeds):
        assert np.array_equal(SIM.run(overrides, [seed])[0], first[i])
    assert np.array_equal(SIM.run(overrides, seeds[::-1])[::-1], first)


def test_drivers_move_the_target() -> None:
    for seeds in (SEEDS, SEEDS_B):
        control = target({}, seeds)
        for param in SIM.params:
            if param.role != "driver":
                continue
            for value in param.test_values:
                treated = target({param.name: value}, seeds)
                p = mannwhitneyu(control, treated, alternative="two-sided").pvalue
                assert p < 0.01, (param.name, value, seeds[0], p)


def test_epsilon_can_change_the_target_by_three_quarters() -> None:
    control = target({}, SEEDS).mean()
    assert target({"epsilon": 0.1}, SEEDS).mean() / control - 1 >= 0.75
    assert 0.1 <= abs(target({"init_shape": 0.6}, SEEDS).mean() / control - 1) < 0.75


def test_decoys_leave_the_target_alone_but_change_convergence() -> None:
    for seeds in (SEEDS, SEEDS_B):
        control = SIM.run({}, seeds)
        for param in SIM.params:
            if param.role != "decoy":
                continue
            times = []
            for value in param.test_values:
                treated = SIM.run({param.name: value}, seeds)
                p = mannwhitneyu(control[:, TARGET], treated[:, TARGET], alternative="two-sided").pvalue
                assert p > 0.2, (param.name, value, seeds[0], p)
                assert abs(treated[:, TARGET].mean() / control[:, TARGET].mean() - 1) < 0.05
                times.append(
                    mannwhitneyu(column(control, "convergence_time"), column(treated, "convergence_time")).pvalue
                )
            assert min(times) < 0.01, param.name


def test_mu_changes_convergence_time_in_the_right_direction() -> None:
    slow = column(SIM.run({"mu": 0.1}, SEEDS), "convergence_time").mean()
    fast = column(SIM.run({"mu": 0.5}, SEEDS), "convergence_time").mean()
    assert slow > 1.5 * fast


def test_validate_passes_every_check(validation: tuple[list[Check], Path]) -> None:
    checks, _ = validation
    assert len(checks) >= 4
    assert len({c.name for c in checks}) == len(checks)
    for check in checks:
        assert check.simulation == "social"
        assert check.passed, (check.name, check.measured, check.threshold)
        assert np.isfinite(check.measured) and check.reference and check.caveat


def test_validate_writes_the_plot(validation: tuple[list[Check], Path]) -> None:
    _, plot_dir = validation
    plot = plot_dir / "social.png"
    assert plot.exists() and plot.stat().st_size > 1000
