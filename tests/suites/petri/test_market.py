"""The market simulation: invariants, determinism, parameter roles and the literature checks."""

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from discogym.core import UserError
from discogym.suites.petri.sims.base import Check
from discogym.suites.petri.sims.market import SIMULATION, autocorrelation, excess_kurtosis, simulate

SEEDS = list(range(12))
OTHER_SEEDS = list(range(100, 112))
TARGET = SIMULATION.metrics.index(SIMULATION.target)


def role_cases(role: str) -> list[tuple[str, float]]:
    """(parameter, test value) for every test value of every parameter with ``role``."""
    return [(p.name, value) for p in SIMULATION.params if p.role == role for value in p.test_values]


def target_values(overrides: dict[str, float], seeds: list[int]) -> np.ndarray:
    """The target metric of each seed."""
    return SIMULATION.run(overrides, seeds)[:, TARGET]


@pytest.fixture(scope="module")
def control_target() -> dict[int, np.ndarray]:
    """The target at the control, for both seed sets (keyed by the first seed)."""
    return {seeds[0]: target_values({}, seeds) for seeds in (SEEDS, OTHER_SEEDS)}


@pytest.fixture(scope="module")
def checks() -> list[Check]:
    """The literature checks, run once."""
    return SIMULATION.validate()


def test_parameter_space_is_documented_and_control_inside() -> None:
    names = [p.name for p in SIMULATION.params]
    assert sorted(names) == sorted(SIMULATION.control)
    for param in SIMULATION.params:
        assert param.low <= SIMULATION.control[param.name] <= param.high
        assert param.meaning and param.unit
        for value in param.test_values:
            assert param.low <= value <= param.high and value != SIMULATION.control[param.name]
        if param.role != "fixed":
            assert 2 <= len(param.test_values) <= 4
    assert sum(p.role == "driver" for p in SIMULATION.params) >= 3
    assert sum(p.role == "decoy" for p in SIMULATION.params) >= 3
    assert SIMULATION.target == "volatility" and len(SIMULATION.metrics) >= 4
    assert SIMULATION.resolve() == {name: float(value) for name, value in SIMULATION.control.items()}


def test_price_accumulates_returns_with_a_constant_fundamental() -> None:
    config = SIMULATION.resolve({"fundamental_volatility": 0.0, "fundamental_drift": 0.0, "periods": 1000})
    returns, mispricing, share = simulate(config, np.arange(3, dtype=np.int64))
    assert returns.shape == mispricing.shape == share.shape == (3, 1000)
    # With v = 0 the mispricing is the log price, which only ever moves by the period's return.
    np.testing.assert_allclose(np.diff(mispricing, axis=1), returns[:, 1:], rtol=0, atol=1e-12)
    assert ((share > 0.0) & (share < 1.0)).all()


def test_no_intensity_of_choice_fixes_an_even_split() -> None:
    config = SIMULATION.resolve({"intensity_of_choice": 0.0, "periods": 1000})
    _, _, share = simulate(config, np.arange(2, dtype=np.int64))
    assert (share == 0.5).all()


def test_metric_ranges_at_control() -> None:
    values = SIMULATION.run({}, SEEDS)
    by_name = dict(zip(SIMULATION.metrics, values.T, strict=True))
    assert (by_name["volatility"] > 0).all()
    assert (by_name["excess_kurtosis"] > -2).all()
    assert (np.abs(by_name["return_autocorr_lag1"]) <= 1).all()
    assert (np.abs(by_name["abs_return_autocorr"]) <= 1).all()
    assert (by_name["mean_abs_mispricing"] >= 0).all()
    assert ((by_name["chartist_share"] > 0) & (by_name["chartist_share"] < 1)).all()


def test_statistics_of_constant_and_gaussian_series() -> None:
    constant = np.ones((2, 100))
    assert (excess_kurtosis(constant) == 0).all()
    assert (autocorrelation(constant, 3) == 0).all()
    gaussian = np.random.default_rng(0).standard_normal((1, 200_000))
    assert abs(excess_kurtosis(gaussian)[0]) < 0.1
    assert np.abs(autocorrelation(gaussian, 5)).max() < 0.01


def test_extreme_corner_stays_bounded() -> None:
    explosive = {
        "price_impact": 0.03,
        "chartist_extrapolation": 25.0,
        "chartist_dispersion": 5.0,
        "noise_trader_volatility": 3.0,
        "predisposition": 1.0,
        "intensity_of_choice": 3.0,
        "herding": 3.0,
        "performance_weight": 10.0,
        "performance_memory": 0.995,
    }
    values = SIMULATION.run(explosive, [0, 1])
    assert np.isfinite(values).all()
    assert (values[:, TARGET] < 1.0).all()


def test_same_seeds_give_identical_results_and_rows_do_not_depend_on_the_batch() -> None:
    seeds = [5, 0, 17, 3]
    first, second = SIMULATION.run({}, seeds), SIMULATION.run({}, seeds)
    assert np.array_equal(first, second)
    for row, seed in enumerate(seeds):
        assert np.array_equal(SIMULATION.run({}, [seed])[0], first[row])
    assert np.array_equal(SIMULATION.run({}, [17, 5])[1], first[0])


@pytest.mark.parametrize(("name", "value"), role_cases("driver"))
def test_driver_moves_the_target(name: str, value: float, control_target: dict[int, np.ndarray]) -> None:
    for seeds in (SEEDS, OTHER_SEEDS):
        treated = target_values({name: value}, seeds)
        assert mannwhitneyu(control_target[seeds[0]], treated).pvalue < 0.01


@pytest.mark.parametrize(("name", "value"), role_cases("decoy"))
def test_decoy_leaves_the_target(name: str, value: float, control_target: dict[int, np.ndarray]) -> None:
    for seeds in (SEEDS, OTHER_SEEDS):
        control = control_target[seeds[0]]
        treated = target_values({name: value}, seeds)
        assert mannwhitneyu(control, treated).pvalue > 0.2
        assert abs(treated.mean() / control.mean() - 1) < 0.05


@pytest.mark.parametrize("name", [p.name for p in SIMULATION.params if p.role == "decoy"])
def test_decoy_enters_the_model(name: str) -> None:
    param = SIMULATION.param(name)
    farthest = max(param.test_values, key=lambda value: abs(value - SIMULATION.control[name]))
    control = SIMULATION.run({}, SEEDS)
    treated = SIMULATION.run({name: farthest}, SEEDS)
    mispricing = SIMULATION.metrics.index("mean_abs_mispricing")
    assert not np.array_equal(control, treated)
    assert mannwhitneyu(control[:, mispricing], treated[:, mispricing]).pvalue < 0.05


def test_a_driver_reaches_a_large_effect(control_target: dict[int, np.ndarray]) -> None:
    treated = target_values({"price_impact": 0.02}, SEEDS)
    assert treated.mean() / control_target[0].mean() - 1 >= 0.75


def test_resolve_rejects_illegal_values() -> None:
    with pytest.raises(UserError):
        SIMULATION.resolve({"price_impact": 0.5})
    with pytest.raises(UserError):
        SIMULATION.resolve({"fundamental_drift": -0.01})
    with pytest.raises(UserError):
        SIMULATION.resolve({"periods": 2000.5})
    with pytest.raises(UserError):
        SIMULATION.resolve({"no_such_parameter": 1.0})


def test_validation_checks_pass(checks: list[Check]) -> None:
    assert [check.name for check in checks] == ["heavy_tails", "volatility_clustering", "no_linear_autocorrelation"]
    for check in checks:
        assert check.simulation == "market" and check.reference and check.caveat
        assert check.passed, f"{check.name}: measured {check.measured} vs {check.threshold}"


def test_validate_writes_the_plot(tmp_path: Path) -> None:
    checks = SIMULATION.validate(tmp_path)
    assert all(check.passed for check in checks)
    plot = tmp_path / "market.png"
    assert plot.exists() and plot.stat().st_size > 10_000
