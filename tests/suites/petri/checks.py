"""Assertions several simulations' tests share."""

from discogym.suites.petri.sims.base import Simulation


def assert_params_inside_ranges(sim: Simulation, min_test_values: int = 2) -> None:
    """Every control value lies in its range, and every test value too, differing from the control."""
    for param in sim.params:
        assert param.low <= sim.control[param.name] <= param.high, param.name
        assert min_test_values <= len(param.test_values) <= 4 or param.role == "fixed"
        assert all(param.low <= v <= param.high and v != sim.control[param.name] for v in param.test_values)
