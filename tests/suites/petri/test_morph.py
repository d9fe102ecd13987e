"""The morph simulation: model invariants, blob counting on the torus, determinism, the driver/decoy contract
and Pearson's phase-structure checks."""

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from discogym.core import UserError
from discogym.suites.petri.sims import morph
from discogym.suites.petri.sims.base import Check, Param
from discogym.suites.petri.sims.morph import SIMULATION as SIM
from tests.suites.petri.checks import assert_params_inside_ranges

SEEDS = list(range(12))
TARGET = SIM.metrics.index(SIM.target)


def _params(role: str) -> list[Param]:
    return [param for param in SIM.params if param.role == role]


def _cases(role: str) -> list[tuple[str, float]]:
    return [(param.name, value) for param in _params(role) for value in param.test_values]


def test_parameter_space_has_drivers_decoys_and_a_control_inside_the_ranges() -> None:
    assert SIM.name == "morph" and SIM.target == "blob_count" and len(SIM.metrics) >= 4
    assert {"blob_count", "area_fraction", "mean_v", "mean_blob_size"} <= set(SIM.metrics)
    assert len(_params("driver")) >= 3 and len(_params("decoy")) >= 3
    assert {param.name for param in SIM.params} == set(SIM.control)
    assert_params_inside_ranges(SIM)


def test_resolve_rejects_out_of_range_and_fractional_values() -> None:
    with pytest.raises(UserError, match="parameter 'feed' must lie in"):
        SIM.resolve({"feed": 0.2})
    with pytest.raises(UserError, match="parameter 'kill' must lie in"):
        SIM.resolve({"kill": 0.0})
    with pytest.raises(UserError, match="parameter 'patches' takes a whole number"):
        SIM.resolve({"patches": 2.5})
    with pytest.raises(UserError, match="morph has no parameter"):
        SIM.resolve({"gravity": 1.0})


def test_same_seeds_give_identical_rows_alone_or_in_any_batch() -> None:
    config = SIM.resolve({"steps": 300})
    batch = SIM.batch(config, np.array([3, 11, 5], dtype=np.int64))
    assert np.array_equal(batch, SIM.batch(config, np.array([3, 11, 5], dtype=np.int64)))
    alone = SIM.batch(config, np.array([11], dtype=np.int64))
    assert np.array_equal(alone[0], batch[1])
    reordered = SIM.batch(config, np.array([5, 7, 3], dtype=np.int64))
    assert np.array_equal(reordered[2], batch[0]) and np.array_equal(reordered[0], batch[2])


def test_fields_stay_in_bounds_and_metrics_are_consistent(control_values: np.ndarray) -> None:
    u, v = morph.simulate(SIM.resolve(), np.array([0, 1], dtype=np.int64))
    assert u.shape == v.shape == (2, morph.GRID, morph.GRID)
    assert u.min() >= 0.0 and u.max() <= 1.0 + 1e-6 and v.min() >= 0.0
    assert np.isfinite(control_values).all()
    count, area, mean_v, size, largest, mean_u = control_values.T
    assert (count == np.round(count)).all() and (count > 0).all()
    assert ((area > 0) & (area < 1)).all() and ((mean_v > 0) & (mean_u < 1)).all()
    assert np.allclose(size * count, area * morph.GRID**2)  # mean size = covered cells / blobs
    assert ((largest > 0) & (largest <= 1)).all()


def test_without_feed_and_kill_the_scheme_conserves_u_plus_v() -> None:
    # F = k = 0: the reaction only converts U into V and the periodic Laplacian only moves mass around. The
    # trivial state is then unstable, so the run is kept short (weak noise, no patches).
    config = {**SIM.resolve(), "feed": 0.0, "kill": 0.0, "steps": 10, "patches": 0, "noise": 0.05}
    seeds = np.array([4], dtype=np.int64)
    u0, v0 = morph.initial_fields(config, seeds)
    u, v = morph.simulate(config, seeds)
    assert np.isclose((u + v).sum(), (u0 + v0).sum(), rtol=1e-6)
    assert v.std() < 0.6 * v0.std()  # while diffusion smoothed the noise


def test_washout_leaves_no_blobs_and_edge_cases_are_zero() -> None:
    rows = SIM.run({"kill": 0.07}, [0, 1])
    assert np.array_equal(rows[:, [0, 1, 3, 4]], np.zeros((2, 4)))
    assert np.allclose(rows[:, SIM.metrics.index("mean_u")], 1.0, atol=1e-3)


def test_blob_counting_merges_components_across_the_wrap() -> None:
    mask = np.zeros((morph.GRID, morph.GRID), dtype=bool)
    mask[10:14, 0:3] = mask[10:14, -2:] = True  # one blob cut by the left/right edge
    mask[0:2, 40:44] = mask[-3:, 40:44] = True  # one blob cut by the top/bottom edge
    mask[50:53, 50:53] = True
    mask[60, :] = True  # a stripe around the torus
    sizes, perimeters = morph.blob_shapes(mask)
    assert sorted(sizes.tolist()) == [9.0, 20.0, 20.0, 96.0]
    assert sorted(perimeters.tolist())[0] == 12.0 and perimeters.max() == 192.0  # the stripe: two long sides
    assert morph.torus_components(np.zeros((5, 5), dtype=bool))[0] == 0
    rows = morph.measure(np.ones((1, 96, 96)), np.zeros((1, 96, 96)), 0.2)
    assert np.array_equal(rows[0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def test_decoys_enter_the_model() -> None:
    short = {"steps": 150}
    base = SIM.run(short, [0])[0]
    for name, value in _cases("decoy"):
        changed = SIM.run({**short, name: value}, [0])[0]
        assert not np.array_equal(changed, base), (name, value)


@pytest.mark.parametrize(("name", "value"), _cases("driver"))
def test_each_driver_test_value_moves_the_blob_count(control_values: np.ndarray, name: str, value: float) -> None:
    changed = SIM.run({name: value}, SEEDS)[:, TARGET]
    assert mannwhitneyu(control_values[:, TARGET], changed).pvalue < 0.01


@pytest.mark.parametrize(("name", "value"), _cases("decoy"))
def test_each_decoy_test_value_leaves_the_blob_count_alone(control_values: np.ndarray, name: str, value: float) -> None:
    changed = SIM.run({name: value}, SEEDS)[:, TARGET]
    assert mannwhitneyu(control_values[:, TARGET], changed).pvalue > 0.2
    assert abs(changed.mean() / control_values[:, TARGET].mean() - 1) < 0.05


def test_some_driver_moves_the_blob_count_by_at_least_75_percent(control_values: np.ndarray) -> None:
    mean = control_values[:, TARGET].mean()
    changed = SIM.run({"feed": 0.04}, SEEDS)[:, TARGET].mean()
    assert abs(changed / mean - 1) >= 0.75


def test_phase_classifier_names_the_regimes() -> None:
    assert morph.classify(np.array([0, 0.0, 0.0, 0.0, 0.0, 1.0])) == "washout"
    assert morph.classify(np.array([120, 0.23, 0.11, 17.0, 0.02, 0.65])) == "spots"
    assert morph.classify(np.array([3, 0.45, 0.2, 1400.0, 0.9, 0.5])) == "labyrinth"
    assert morph.classify(np.array([1, 1.0, 0.3, 9216.0, 1.0, 0.4])) == "other"


def test_validation_checks_all_pass_and_write_the_plot(validation: tuple[list[Check], Path]) -> None:
    checks, plot_dir = validation
    assert len(checks) == 7 and len({check.name for check in checks}) == 7
    for check in checks:
        assert check.simulation == "morph" and check.passed, check
        assert check.claim and check.reference and check.threshold and check.caveat
        assert np.isfinite(check.measured)
    assert (plot_dir / "morph.png").stat().st_size > 10_000


def test_validation_is_deterministic_without_a_plot(validation: tuple[list[Check], Path]) -> None:
    checks, _ = validation
    again = SIM.validate()
    assert [check.model_dump() for check in again] == [check.model_dump() for check in checks]
