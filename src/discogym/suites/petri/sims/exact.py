"""Sine and cosine from IEEE-754 arithmetic alone, for simulations whose dynamics amplify the last bit.

numpy's own ``sin`` and ``cos`` are fast but their last bits depend on the CPU's instruction set and on the
numpy version (SIMD implementations are chosen at run time). In a chaotic simulation such a difference grows
until whole trajectories differ, so two machines would disagree on a task's statistics. Additions,
multiplications and ``rint`` are exactly rounded by IEEE-754 and give the same bits everywhere, so these
polynomials do too. Accuracy: within 1e-15 of the true value for |x| <= 4 pi (Taylor series to the
19th order on |r| <= pi/4, where the first omitted term is below 1e-19).
"""

import math

import numpy as np

HALF_PI = np.pi / 2
LIMIT = 4 * np.pi

# Taylor coefficients of sin(r)/r and cos(r) in r^2, highest order first (for Horner's rule).
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(9, -1, -1))
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(9, -1, -1))


def _horner(coefficients: tuple[float, ...], r2: np.ndarray) -> np.ndarray:
    total = np.full_like(r2, coefficients[0])
    for coefficient in coefficients[1:]:
        total = total * r2 + coefficient
    return total


def sin_cos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sin(x), cos(x))`` elementwise, bit-identical on every machine, for |x| <= 4 pi."""
    x = np.asarray(x, dtype=np.float64)
    if x.size and not np.all(np.abs(x) <= LIMIT):
        raise ValueError(f"sin_cos takes angles within +-4 pi, got up to {float(np.max(np.abs(x)))!r}")
    quarter = np.rint(x / HALF_PI)
    r = x - quarter * HALF_PI
    r2 = r * r
    s = r * _horner(_SIN, r2)
    c = _horner(_COS, r2)
    turn = np.remainder(quarter, 4.0)  # sin(r + q pi/2): q = 0 -> (s, c), 1 -> (c, -s), 2 -> (-s, -c), 3 -> (-c, s)
    sine = np.where(turn == 0, s, np.where(turn == 1, c, np.where(turn == 2, -s, -c)))
    cosine = np.where(turn == 0, c, np.where(turn == 1, -s, np.where(turn == 2, -c, s)))
    return sine, cosine
