"""The swarm simulation: model invariants, determinism, the driver/decoy contract and the Vicsek checks."""

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from discogym.core import UserError
from discogym.suites.petri.sims import swarm
from discogym.suites.petri.sims.base import Param
from discogym.suites.petri.sims.swarm import SIMULATION as SIM
from tests.suites.petri.checks import assert_params_inside_ranges

SEEDS = list(range(12))
TARGET = SIM.metrics.index(SIM.target)


def _state(x: list[float], y: list[float], theta: list[float]) -> swarm._State:
    return swarm._State.from_angles(np.array([x]), np.array([y]), np.array([theta]))


def _pairs_of(state: swarm._State) -> swarm._Pairs:
    n = state.x.shape[1]
    return swarm._pairs(state, swarm._Pairs(*(np.empty((1, n, n)) for _ in range(3))))


def _params(role: str) -> list[Param]:
    return [param for param in SIM.params if param.role == role]


def test_parameter_space_has_drivers_decoys_and_a_control_inside_the_ranges():
    assert SIM.name == "swarm" and SIM.target == "polarization" and len(SIM.metrics) >= 4
    assert len(_params("driver")) >= 3 and len(_params("decoy")) >= 3
    assert {param.name for param in SIM.params} == set(SIM.control)
    assert_params_inside_ranges(SIM, min_test_values=1)


def test_control_is_ordered_but_not_saturated(control_values):
    assert 0.6 <= control_values[:, TARGET].mean() <= 0.85


@pytest.mark.parametrize(
    "overrides",
    [{}, {"noise": 0.0}, {"noise": 2 * np.pi, "n_agents": 16}, {"interaction_radius": 0.5, "alignment_weight": 0.0}],
)
def test_metrics_are_finite_and_inside_their_ranges(overrides):
    values = SIM.run(overrides, [0, 1, 2])
    n = SIM.resolve(overrides)["n_agents"]
    metric = {name: values[:, i] for i, name in enumerate(SIM.metrics)}
    assert np.isfinite(values).all()
    assert ((metric["polarization"] >= 0) & (metric["polarization"] <= 1)).all()
    assert ((metric["milling"] >= 0) & (metric["milling"] <= 1)).all()
    assert ((metric["nearest_neighbour_distance"] > 0) & (metric["nearest_neighbour_distance"] < swarm.BOX)).all()
    clusters = metric["n_clusters"]
    assert (clusters == np.round(clusters)).all() and ((clusters >= 1) & (clusters <= n)).all()
    assert ((metric["mean_neighbours"] >= 0) & (metric["mean_neighbours"] <= n - 1)).all()


def test_zero_noise_aligns_everyone_and_maximal_noise_disorders():
    assert SIM.run({"noise": 0.0}, [5])[0, TARGET] > 0.99
    assert SIM.run({"noise": 2 * np.pi}, [5])[0, TARGET] < 0.3


def test_a_step_moves_every_agent_by_exactly_the_speed_and_stays_in_the_box():
    config = SIM.resolve({"speed": 0.15})
    state, noise = swarm._initial(config, np.array([3, 4]))
    replicates, n = state.x.shape
    pairs = swarm._Pairs(*(np.empty((replicates, n, n)) for _ in range(3)))
    after = swarm._step(state, swarm._pairs(state, pairs), (noise[0][0], noise[1][0]), config)
    moved = np.hypot(swarm._wrap(after.x - state.x), swarm._wrap(after.y - state.y))
    assert np.allclose(moved, 0.15)
    assert ((after.x >= 0) & (after.x < swarm.BOX) & (after.y >= 0) & (after.y < swarm.BOX)).all()
    assert np.allclose(np.hypot(after.ux, after.uy), 1.0, rtol=0, atol=1e-12)


def test_distances_use_the_minimum_image():
    pairs = _pairs_of(_state([0.1, 3.9], [2.0, 2.0], [0.0, 0.0]))
    assert pairs.dx[0, 0, 1] == pytest.approx(-0.2) and pairs.d2[0, 0, 1] == pytest.approx(0.04)


def test_clusters_are_connected_components_across_the_periodic_boundary():
    # a chain 0.8 apart that wraps around the box is one cluster; an isolated agent is another
    chain = [0.2, 1.0, 1.8, 2.6, 3.4]
    pairs = _pairs_of(_state([*chain, 2.0], [1.0] * 5 + [3.0], [0.0] * 6))
    assert swarm._cluster_count(pairs, 1.0)[0] == 2
    assert swarm._cluster_count(pairs, 0.5)[0] == 6
    # a chain whose lowest index sits in the middle needs the label to travel both ways
    order = [1.4, 0.6, 2.2, 1.0, 0.2, 1.8]
    assert swarm._cluster_count(_pairs_of(_state(order, [1.0] * 6, [0.0] * 6)), 0.5)[0] == 1


def test_milling_is_one_for_a_ring_and_small_for_a_parallel_flock():
    angles = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    ring = _state(list(2 + np.cos(angles)), list(2 + np.sin(angles)), list(angles + np.pi / 2))
    assert swarm._milling(ring)[0] == pytest.approx(1.0)
    assert swarm._polarization(ring)[0] == pytest.approx(0.0, abs=1e-12)
    parallel = _state(list(2 + np.cos(angles)), list(2 + np.sin(angles)), [0.3] * 16)
    assert swarm._milling(parallel)[0] == pytest.approx(0.0, abs=1e-12)
    assert swarm._polarization(parallel)[0] == pytest.approx(1.0)


def test_same_seeds_give_identical_numbers_and_a_row_depends_only_on_its_seed():
    seeds = [0, 7, 2**40, 3, 11]
    for overrides in ({}, {"n_agents": 16, "separation_radius": 0.5}):
        batch = SIM.run(overrides, seeds)
        assert np.array_equal(batch, SIM.run(overrides, seeds))
        for i, seed in enumerate(seeds):
            assert np.array_equal(SIM.run(overrides, [seed])[0], batch[i])
        assert np.array_equal(SIM.run(overrides, seeds[::-1]), batch[::-1])


@pytest.mark.parametrize(
    ("name", "value"), [(param.name, value) for param in _params("driver") for value in param.test_values]
)
def test_each_driver_test_value_moves_polarization(control_values, name, value):
    changed = SIM.run({name: value}, SEEDS)[:, TARGET]
    assert mannwhitneyu(control_values[:, TARGET], changed, alternative="two-sided").pvalue < 0.01


@pytest.mark.parametrize(
    ("name", "value"), [(param.name, value) for param in _params("decoy") for value in param.test_values]
)
def test_each_decoy_test_value_leaves_polarization_alone_but_changes_the_swarm(control_values, name, value):
    changed = SIM.run({name: value}, SEEDS)
    control, target = control_values[:, TARGET], changed[:, TARGET]
    assert mannwhitneyu(control, target, alternative="two-sided").pvalue > 0.2
    assert abs(target.mean() / control.mean() - 1) < 0.05
    assert not np.array_equal(changed, control_values)  # the decoy really enters the dynamics


def test_noise_can_change_polarization_by_three_quarters(control_values):
    disordered = SIM.run({"noise": 4.5}, SEEDS)[:, TARGET]
    assert disordered.mean() / control_values[:, TARGET].mean() - 1 <= -0.75


@pytest.mark.parametrize(
    "overrides",
    [{"noise": -0.1}, {"noise": 7.0}, {"n_agents": 8}, {"n_agents": 32.5}, {"speed": 1.0}, {"cohesion_weight": -1}],
)
def test_resolve_rejects_values_outside_the_legal_ranges(overrides):
    with pytest.raises(UserError):
        SIM.resolve(overrides)


def test_validation_checks_all_pass_and_the_plot_is_written(validation):
    checks, plot_dir = validation
    assert len(checks) >= 5 and len({check.name for check in checks}) == len(checks)
    for check in checks:
        assert check.simulation == "swarm" and check.reference and check.threshold and check.caveat
        assert check.passed, (check.name, check.measured, check.threshold)
    assert (plot_dir / "swarm.png").read_bytes().startswith(b"\x89PNG")


def test_the_noise_turns_the_steering_direction_by_exactly_its_angle():
    config = SIM.resolve({"alignment_weight": 0.0, "cohesion_weight": 0.0, "separation_weight": 0.0})
    state = _state([0.5, 2.5], [0.5, 2.5], [0.3, -2.0])
    turn = np.array([[0.25, -1.0]])
    after = swarm._step(state, _pairs_of(state), (np.sin(turn[0]), np.cos(turn[0])), config)
    headings = np.arctan2(after.uy, after.ux)[0]
    assert headings == pytest.approx(np.array([0.55, -3.0]), abs=1e-12)
