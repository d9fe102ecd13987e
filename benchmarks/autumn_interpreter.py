"""Autumn interpreter speed: steps per second, rendering included, for each of discogym's own programs under
1,000 seeded random actions (a sixth each: noop, four arrows, a click at a random cell). Also the median; the
issue's target is a median of 1,000 steps/s on these 16x16-class grids. There is no other Autumn interpreter in
this project to compare with, so the figures are absolute."""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

from discogym.suites.autumn.challenges import random_actions
from discogym.suites.autumn.interpreter import Interpreter

PROGRAMS = Path(__file__).resolve().parents[1] / "src/discogym/suites/autumn/programs"
STEPS = 1000


def steps_per_second(source: str) -> tuple[float, int, int]:
    """Steps/s over ``STEPS`` random actions, the grid size, and the objects at the end."""
    interpreter = Interpreter(source, seed=7)
    size = interpreter.grid_size
    actions = random_actions(np.random.default_rng(3), size, STEPS)
    started = time.perf_counter()
    for action in actions:
        interpreter.step(action)
    return STEPS / (time.perf_counter() - started), size, len(interpreter.objects())


def main() -> None:
    rates = []
    for path in sorted(PROGRAMS.glob("*.sexp")):
        rate, size, objects = steps_per_second(path.read_text(encoding="utf-8"))
        rates.append(rate)
        print(f"{path.stem:<12} {size:>2}x{size:<2} {rate:>9,.0f} steps/s  ({objects} objects at the end)")
    print(f"median over {len(rates)} programs: {statistics.median(rates):,.0f} steps/s (target 1,000)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
