"""The v1 calibration: measured edges, the lab ranges and hidden values that follow from them."""

import numpy as np

from discogym.suites.petri.calibrate import EDGE_POWER, find_edges
from discogym.suites.petri.calibration import CALIBRATION, significant_digits
from discogym.suites.petri.sims.registry import get_simulation


def test_measuring_an_edge_again_gives_the_committed_one():
    sim = get_simulation("social")
    calibration = CALIBRATION["social"]
    down, up = find_edges(sim, calibration.base, ["init_width"])
    assert up.fraction is None and up.value is None  # the control (1) is init_width's upper bound
    assert down.value is not None and down.power >= EDGE_POWER
    assert significant_digits(down.value) == calibration.edges["init_width"]["down"]


def test_lab_ranges_put_the_edge_sixty_percent_of_the_way_out_and_hidden_values_inside():
    for name, calibration in CALIBRATION.items():
        sim = get_simulation(name)
        control = sim.resolve(calibration.base)
        rng = np.random.default_rng(0)
        for driver, edges in calibration.edges.items():
            param = sim.param(driver)
            low, high = calibration.lab_range(param, control[driver])
            assert param.low <= low <= control[driver] <= high <= param.high and low < high
            for side, edge in edges.items():
                end = low if side == "down" else high
                if end not in (param.low, param.high):  # not cut off by the simulation's bound
                    assert abs((edge - control[driver]) / (end - control[driver]) - 0.6) < 0.05, (
                        driver,
                        side,
                    )  # ends rounded to 3 digits
            for _ in range(20):
                value = calibration.hidden_value(param, control[driver], rng)
                assert low <= value <= high and value != control[driver], (driver, value)
