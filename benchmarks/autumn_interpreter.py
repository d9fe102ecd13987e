"""Autumn interpreter speed: steps per second, rendering included, for each of discogym's own programs under
1,000 seeded random actions (a sixth each: noop, four arrows, a click at a random cell), and the median.

With ``--against REV`` the interpreter of the git revision REV (its ``suites/autumn`` package, imported under
another name) is the baseline, measured in the same process: each program's two interpreters take ten steps in
turn, so that a spell of a slower machine slows both alike, and their frames are checked to be the same; printed
per program are both speeds and the ratio, then the median ratio.

With ``--official BUILD`` the baseline is Autumn.cpp's Python module built in the folder BUILD (docs/autumn-compat.md
says how), on the programs of ``--programs DIR`` (Autumn.cpp's own ``tests/``, say) with its standard library
(``--stdlib FILE``, else found in or above BUILD): ``discogym autumn parity``'s runs (seeds 1 and 0, five runs of
200 random actions each), per program both interpreters' time, whether the frames were the same, and the ratio,
then the median ratio over the programs both finished.

``--programs DIR --dialect official`` runs another folder of programs through discogym's interpreter as the
official one reads them (its standard library and map order), alone or ``--against REV``.

    python benchmarks/autumn_interpreter.py [--against REV] [--programs DIR [--dialect official]]
    python benchmarks/autumn_interpreter.py --official BUILD --programs DIR [--stdlib FILE]
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
from discogym.suites.autumn.parity import (
    ProgramReport,
    compare_folder,
    median_speed_ratio,
    official_module,
    program_files,
)
from discogym.suites.autumn.sexpr import AutumnError

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "src/discogym/suites/autumn"
PROGRAMS = ROOT / PACKAGE / "programs"
STEPS = 1000
TURN = 10  # steps each interpreter takes in turn when two are compared


OFFICIAL_DIALECT: dict[str, Any] = {
    "stdlib": "official",
    "order": "official",
    "flavor": "libstdc++",
}  # as autumn parity runs ours


def steps_per_second(source: str, **dialect: Any) -> tuple[float, int, int]:
    """Steps/s over ``STEPS`` random actions, the grid size, and the objects at the end."""
    interpreter = Interpreter(source, seed=7, **dialect)
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


def compared(source: str, baseline: Any, **dialect: Any) -> tuple[float, float]:
    """Steps/s of this checkout's interpreter and of the baseline's on ``source``, ``TURN`` steps each in turn;
    AssertionError if their frames differ."""
    ours, theirs = Interpreter(source, seed=7, **dialect), baseline.Interpreter(source, seed=7, **dialect)
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


def against_official(build: Path, programs: list[Path], stdlib: Path | None) -> None:
    """Both interpreters on every program, as ``discogym autumn parity`` runs them, and the median ratio."""
    official = official_module(build, stdlib)

    def show(report: ProgramReport) -> None:
        ratio = "-" if report.speed_ratio is None else f"{report.speed_ratio:.2f}x"
        print(
            f"{report.program:<26} {report.status:<40} ours {report.ours_seconds:6.2f} s, "
            f"Autumn.cpp {report.official_seconds:6.2f} s  ({ratio})",
            flush=True,
        )

    reports = compare_folder(programs, official, on_program=show, **OFFICIAL_DIALECT)
    median = median_speed_ratio(reports)
    finished = sum(report.speed_ratio is not None for report in reports)
    shown = "-" if median is None else f"{median:.2f}x"
    print(f"median over the {finished} programs both finished: ours is {shown} as fast as Autumn.cpp")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="a git revision whose interpreter is the baseline")
    parser.add_argument("--official", metavar="BUILD", type=Path, help="Autumn.cpp's built module is the baseline")
    parser.add_argument("--programs", metavar="DIR", type=Path, help="the programs (default: discogym's own)")
    parser.add_argument("--stdlib", metavar="FILE", type=Path, help="with --official: its standard library")
    parser.add_argument("--dialect", choices=["discogym", "official"], default="discogym")
    options = parser.parse_args()
    paths = program_files(options.programs) if options.programs else sorted(PROGRAMS.glob("*.sexp"))
    if options.official is not None:
        against_official(options.official, paths, options.stdlib)
        return
    dialect = OFFICIAL_DIALECT if options.dialect == "official" else {}
    if options.against is None:
        rates = []
        for path in paths:
            rate, size, objects = steps_per_second(path.read_text(encoding="utf-8"), **dialect)
            rates.append(rate)
            print(f"{path.stem:<12} {size:>2}x{size:<2} {rate:>9,.0f} steps/s  ({objects} objects at the end)")
        print(f"median over {len(rates)} programs: {statistics.median(rates):,.0f} steps/s")
        return
    with tempfile.TemporaryDirectory() as folder:
        baseline = baseline_interpreter(options.against, Path(folder))
        ratios = []
        for path in paths:
            try:
                ours, theirs = compared(path.read_text(encoding="utf-8"), baseline, **dialect)
            except AutumnError as err:  # a program that stops at an error (some of Autumn.cpp's tests do)
                print(f"{path.stem:<12} left out: {err}")
                continue
            ratios.append(ours / theirs)
            print(f"{path.stem:<12} {ours:>9,.0f} steps/s, {options.against}: {theirs:>9,.0f}  ({ours / theirs:.2f}x)")
    print(
        f"median over {len(ratios)} programs: {statistics.median(ratios):.2f}x the speed of {options.against} "
        f"({min(ratios):.2f}x to {max(ratios):.2f}x), the same frames"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
