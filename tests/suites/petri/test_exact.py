"""Sine and cosine from IEEE arithmetic alone: accurate, and refusing what they were not made for."""

import numpy as np
import pytest

from discogym.suites.petri.sims.exact import LIMIT, sin_cos


def test_sine_and_cosine_agree_with_numpy_to_the_last_bits_over_their_range():
    angles = np.random.default_rng(3).uniform(-LIMIT, LIMIT, 200_000)
    sine, cosine = sin_cos(angles)
    assert np.max(np.abs(sine - np.sin(angles))) < 1e-15
    assert np.max(np.abs(cosine - np.cos(angles))) < 1e-15


def test_the_quadrants_and_special_angles_are_exact():
    sine, cosine = sin_cos(np.array([0.0, np.pi / 2, -np.pi / 2, np.pi, -np.pi, np.pi / 6]))
    assert sine == pytest.approx([0.0, 1.0, -1.0, 0.0, 0.0, 0.5], abs=1e-15)
    assert cosine == pytest.approx([1.0, 0.0, 0.0, -1.0, -1.0, np.sqrt(3) / 2], abs=1e-15)
    assert sin_cos(np.array([0.0]))[0][0] == 0.0 and sin_cos(np.array([0.0]))[1][0] == 1.0


def test_angles_beyond_the_range_are_refused():
    with pytest.raises(ValueError, match="within"):
        sin_cos(np.array([0.0, 5 * np.pi]))
