"""Fixtures shared by the simulations' tests; each test module names its simulation ``SIM``."""

from pathlib import Path

import numpy as np
import pytest

from discogym.suites.petri.sims.base import Check, Simulation

CONTROL_SEEDS = list(range(12))


def module_simulation(request: pytest.FixtureRequest) -> Simulation:
    """The ``SIM`` of the requesting test module."""
    sim = getattr(request.module, "SIM", None)
    assert isinstance(sim, Simulation), f"{request.module.__name__} defines no SIM"
    return sim


@pytest.fixture(scope="module")
def control_values(request: pytest.FixtureRequest) -> np.ndarray:
    """The module's simulation at its control configuration, seeds 0..11."""
    return module_simulation(request).run({}, CONTROL_SEEDS)


@pytest.fixture(scope="module")
def validation(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Check], Path]:
    """The module's simulation's literature checks, run once, and the folder its plot went to."""
    plot_dir = tmp_path_factory.mktemp("plots")
    return module_simulation(request).validate(plot_dir), plot_dir
