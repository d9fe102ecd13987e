"""Autumn interpreter speed: steps per second, rendering included, for each of discogym's own programs under
1,000 seeded random actions (a sixth each: noop, four arrows, a click at a random cell), and the median.

With ``--against REV`` the interpreter of the git revision REV (its ``suites/autumn`` package, imported under
another name) is the baseline, measured in the same process: each program's two interpreters take ten steps in
turn, so that a spell of a slower machine slows both alike, and their frames are checked to be the same; printed
per program are both speeds and the ratio, then the median ratio. Without it the figures are absolute (there is
no other Autumn interpreter in this project; Autumn.cpp's is compared by ``discogym autumn parity``).

    python benchmarks/autumn_interpreter.py [--against REV]
"""

import argparse
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from discogym.suites.autumn.challenges import random_actions
from discogym.suites.autumn.interpreter import Interpreter

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "src/discogym/suites/autumn"
PROGRAMS = ROOT / PACKAGE / "programs"
STEPS = 1000
TURN = 10  # steps each interpreter takes in turn when two are compared


def steps_per_second(source: str) -> tuple[float, int, int]:
    """Steps/s over ``STEPS`` random actions, the grid size, and the objects at the end."""
    interpreter = Interpreter(source, seed=7)
    size = interpreter.grid_size
    actions = random_actions(np.random.default_rng(3), size, STEPS)
    started = time.perf_counter()
    for action in actions:
        interpreter.step(action)
    return STEPS / (time.perf_counter() - started), size, len(interpreter.objects())


def baseline_interpreter(revision: str, into: Path) -> ModuleType:
    """The interpreter module of ``revision``'s autumn package, copied from git into ``into`` as the package
    ``autumn_baseline`` (its imports of itself renamed; the rest of discogym is this checkout's)."""

    def git(*args: str) -> bytes:
        return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True).stdout

    package = into / "autumn_baseline"
    for name in git("ls-tree", "-r", "--name-only", revision, PACKAGE).decode().splitlines():
        target = package / Path(name).relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        content = git("show", f"{revision}:{name}")
        if name.endswith(".py"):
            content = content.replace(b"discogym.suites.autumn", b"autumn_baseline")
        target.write_bytes(content)
    sys.path.insert(0, str(into))
    return importlib.import_module("autumn_baseline.interpreter")


def compared(source: str, baseline: Any) -> tuple[float, float]:
    """Steps/s of this checkout's interpreter and of the baseline's on ``source``, ``TURN`` steps each in turn;
    AssertionError if their frames differ."""
    ours, theirs = Interpreter(source, seed=7), baseline.Interpreter(source, seed=7)
    actions = random_actions(np.random.default_rng(3), ours.grid_size, STEPS)
    spent = [0.0, 0.0]
    for start in range(0, STEPS, TURN):
        for index, interpreter in enumerate((ours, theirs)):
            began = time.perf_counter()
            for action in actions[start : start + TURN]:
                interpreter.step(action)
            spent[index] += time.perf_counter() - began
        assert ours.frame == theirs.frame, f"the frames differ after step {start + TURN}"
    return STEPS / spent[0], STEPS / spent[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="a git revision whose interpreter is the baseline")
    options = parser.parse_args()
    paths = sorted(PROGRAMS.glob("*.sexp"))
    if options.against is None:
        rates = []
        for path in paths:
            rate, size, objects = steps_per_second(path.read_text(encoding="utf-8"))
            rates.append(rate)
            print(f"{path.stem:<12} {size:>2}x{size:<2} {rate:>9,.0f} steps/s  ({objects} objects at the end)")
        print(f"median over {len(rates)} programs: {statistics.median(rates):,.0f} steps/s")
        return
    with tempfile.TemporaryDirectory() as folder:
        baseline = baseline_interpreter(options.against, Path(folder))
        ratios = []
        for path in paths:
            ours, theirs = compared(path.read_text(encoding="utf-8"), baseline)
            ratios.append(ours / theirs)
            print(f"{path.stem:<12} {ours:>9,.0f} steps/s, {options.against}: {theirs:>9,.0f}  ({ours / theirs:.2f}x)")
    print(
        f"median over {len(ratios)} programs: {statistics.median(ratios):.2f}x the speed of {options.against} "
        f"({min(ratios):.2f}x to {max(ratios):.2f}x), the same frames"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
