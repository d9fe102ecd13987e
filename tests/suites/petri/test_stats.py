"""petri's statistics against hand-computed values and their edge cases."""

import numpy as np
import pytest

from discogym.suites.petri.stats import (
    cliffs_delta,
    compare,
    holm,
    holm_rows,
    mann_whitney_p,
    relative_change,
    sign_flip_p,
)


def test_holm_adjusts_in_step_down_order_and_keeps_the_input_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])  # capped at 1 and monotone
    rows = holm_rows(np.array([[0.01, 0.04, 0.03], [0.5, 0.001, 0.2]]))
    assert rows[0] == pytest.approx([0.03, 0.06, 0.06]) and rows[1] == pytest.approx([0.5, 0.003, 0.4])


def test_mann_whitney_matches_the_asymptotic_reference_values():
    separated = mann_whitney_p(np.arange(12.0), np.arange(12.0) + 100)
    assert separated == pytest.approx(3.658e-5, rel=1e-3)  # the smallest p of 12 vs 12 without ties
    assert mann_whitney_p(np.full(12, 2.0), np.full(12, 2.0)) == 1.0
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(5, 12, 3)), rng.normal(size=(5, 12, 3)) + 0.5
    batched = mann_whitney_p(a, b, axis=1)  # one p per (row, metric), as one by one
    assert batched.shape == (5, 3)
    assert all(batched[i, j] == mann_whitney_p(a[i, :, j], b[i, :, j]) for i in range(5) for j in range(3))


def test_cliffs_delta_and_relative_change():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0])
    assert cliffs_delta(a, b) == pytest.approx((6 - 1) / 9)
    assert cliffs_delta(a, a + 10) == 1.0 and cliffs_delta(a + 10, a) == -1.0
    assert relative_change(a, b) == pytest.approx(0.5)
    assert relative_change(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_change(np.zeros(3), np.ones(3)) == 1e9


def test_compare_holm_adjusts_across_the_metric_vector():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(12, 3))
    b = a.copy()
    b[:, 0] += 5.0
    rows = compare(a, b, ["moved", "same", "same_too"])
    assert [row.significant for row in rows] == [True, False, False]
    assert rows[0].p_holm == pytest.approx(3 * rows[0].p_value) and rows[0].cliffs_delta == 1.0
    assert rows[1].p_value == 1.0 and rows[1].relative_change == 0.0


def test_sign_flip_permutation_test_is_deterministic_and_detects_a_consistent_sign():
    positive = np.linspace(0.5, 1.5, 12)
    p1 = sign_flip_p(positive, 5000, np.random.default_rng(7))
    assert p1 == sign_flip_p(positive, 5000, np.random.default_rng(7))
    assert p1 < 0.01
    noise = np.random.default_rng(1).normal(size=12)
    assert sign_flip_p(noise - noise.mean(), 5000, np.random.default_rng(7)) > 0.5
