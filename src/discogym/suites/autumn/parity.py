"""Side by side with the official Autumn interpreter (Autumn.cpp): the same programs, seeds and random actions
through both, frame by frame.

discogym ships no copy of the official interpreter and no recipe to build it: the user builds Autumn.cpp's Python
module (``interpreter_module``) by its own README and names the folder that holds it. The official module is driven
the way AutumnBench's harness (MARAProtocol) drives it: ``Interpreter()``, ``run_script(program, stdlib, "", seed)``,
then per step an input call (``click(x, y)``, ``left()``, ``right()``, ``up()``, ``down()``, nothing for a noop),
``step()`` and ``render_all()``, whose JSON cells are painted over ``get_background()`` on a GRID_SIZE grid.

The official module runs in a child process per run, so that a crash of the official interpreter (it crashes on
some programs) ends only that run and is reported as such. Both interpreters get the same seed and the same seeded
random actions (a numpy Generator per program, seed and run); the first frame that differs, or the first error on
either side, ends the comparison of a run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from discogym.core import UserError
from discogym.suites.autumn.interpreter import Action, Interpreter, action_text
from discogym.suites.autumn.sexpr import AutumnError

Grid = list[list[str]]
MODULE = "interpreter_module"
STDLIB_PLACES = ("autumnstdlib/stdlib.sexp", "../autumnstdlib/stdlib.sexp", "../../autumnstdlib/stdlib.sexp")
DIRECTIONS = ("left", "right", "up", "down")

# The child process: import the official module from a folder, run one program with a list of actions, print one
# JSON line per frame and a last line with the time the official calls took (or the error). Kept free of discogym
# imports so that it starts fast.
_WORKER = r"""
import json, sys, time
job = json.loads(sys.stdin.read())
sys.path.insert(0, job["dir"])
import interpreter_module as official

def grid():
    cells = json.loads(interp.render_all())
    size = cells.pop("GRID_SIZE", 0)
    background = interp.get_background().lower()
    rows = [[background] * size for _ in range(size)]
    for items in cells.values():
        for item in items:
            x, y = item["position"]["x"], item["position"]["y"]
            if 0 <= x < size and 0 <= y < size:
                rows[y][x] = str(item["color"]).lower()
    return rows

def emit(document):
    sys.stdout.write(json.dumps(document) + "\n")
    sys.stdout.flush()

spent = 0.0
step = 0
try:
    start = time.perf_counter()
    interp = official.Interpreter()
    message = interp.run_script(job["program"], job["stdlib"], "", job["seed"])
    if message.startswith("Runtime Error"):
        raise RuntimeError(message)
    frame = grid()
    spent += time.perf_counter() - start
    emit({"frame": frame})
    for action in job["actions"]:
        step += 1
        start = time.perf_counter()
        if action[0] == "click":
            interp.click(action[1], action[2])
        elif action[0] != "noop":
            getattr(interp, action[0])()
        interp.step()
        frame = grid()
        spent += time.perf_counter() - start
        emit({"frame": frame})
except Exception as err:
    emit({"error": f"{type(err).__name__}: {err}".strip()[:2000], "step": step, "seconds": spent})
else:
    emit({"seconds": spent})
"""


@dataclass
class Run:
    """One interpreter's frames for one action sequence: frame 0 is the initial state. ``error`` is the message of
    the error that stopped it (``None`` if it ran to the end), at step ``error_step`` (0: while starting)."""

    frames: list[Grid]
    seconds: float
    error: str | None = None
    error_step: int | None = None


class Official(Protocol):
    """Runs a program through the official interpreter (or replays recorded official frames)."""

    def run(self, name: str, program: str, seed: int, actions: Sequence[Action]) -> Run: ...


@dataclass
class OfficialModule:
    """The official Python module in ``folder``, run in a child process per run with the standard library text
    ``stdlib``."""

    folder: Path
    stdlib: str
    python: str = sys.executable
    timeout: float = 600.0

    def run(self, name: str, program: str, seed: int, actions: Sequence[Action]) -> Run:
        """Run ``program`` with ``seed`` and ``actions``; a crash of the child is an error at the step it reached."""
        job = {
            "dir": str(self.folder),
            "program": program,
            "stdlib": self.stdlib,
            "seed": seed,
            "actions": [_action_list(action) for action in actions],
        }
        done = subprocess.run(
            [self.python, "-c", _WORKER],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        return _read_worker(done.stdout, done.returncode, done.stderr)


def _read_worker(stdout: str, returncode: int, stderr: str) -> Run:
    frames: list[Grid] = []
    for line in stdout.splitlines():
        document = json.loads(line)
        if "frame" in document:
            frames.append(document["frame"])
        elif "error" in document:
            return Run(frames, document["seconds"], document["error"], document["step"])
        else:
            return Run(frames, document["seconds"])
    last = stderr.strip().splitlines()[-1:] or [""]
    reason = f"the official interpreter crashed (exit code {returncode}) {last[0]}".strip()
    return Run(frames, 0.0, reason, len(frames))


@dataclass
class RecordedOfficial:
    """Official runs recorded earlier (a JSON document: ``{"runs": [{"program", "seed", "actions", "frames",
    "error", "error_step"}, ...]}``), replayed for tests without the official module."""

    runs: list[dict[str, Any]]

    def run(self, name: str, program: str, seed: int, actions: Sequence[Action]) -> Run:
        """The recorded run of ``name`` with ``seed`` and these actions; KeyError if none was recorded."""
        wanted = [action_text(a) for a in actions]
        for run in self.runs:
            if run["program"] == name and run["seed"] == seed and run["actions"] == wanted:
                return Run(run["frames"], run.get("seconds", 0.0), run.get("error"), run.get("error_step"))
        raise KeyError(f"no recorded official run of {name} with seed {seed} and these actions")


def run_ours(program: str, seed: int, actions: Sequence[Action], **options: Any) -> Run:
    """Run ``program`` through discogym's interpreter (``options`` go to :class:`Interpreter`)."""
    spent = 0.0
    frames: list[Grid] = []
    step = 0
    try:
        start = time.perf_counter()
        interp = Interpreter(program, seed=seed, **options)
        frames.append(interp.frame)
        spent += time.perf_counter() - start
        for action in actions:
            step += 1
            start = time.perf_counter()
            frames.append(interp.step(action))
            spent += time.perf_counter() - start
    except AutumnError as err:
        return Run(frames, spent, err.describe(), step)
    return Run(frames, spent)


def random_actions(program_name: str, seed: int, run: int, steps: int, grid_size: int) -> list[Action]:
    """``steps`` random actions, the same for every call with these arguments: noop, the four directions and
    clicks on the grid, equally likely (a numpy Generator seeded from the seed, the run and the program's name)."""
    rng = np.random.default_rng([seed, run, *program_name.encode("utf-8")])
    actions: list[Action] = []
    for _ in range(steps):
        kind = int(rng.integers(6))
        if kind == 0:
            actions.append(None)
        elif kind <= 4:
            actions.append(DIRECTIONS[kind - 1])
        else:
            actions.append(("click", int(rng.integers(grid_size)), int(rng.integers(grid_size))))
    return actions


@dataclass
class Comparison:
    """One run of one program through both interpreters."""

    seed: int
    run: int
    steps: int  # steps compared (frames equal up to and including this step)
    identical: bool
    reason: str | None = None  # why the comparison stopped early
    official_error: str | None = None
    ours_error: str | None = None


@dataclass
class ProgramReport:
    """A program's runs: frame-identical or not, the first difference, and both interpreters' time."""

    program: str
    runs: list[Comparison] = field(default_factory=list)
    ours_seconds: float = 0.0
    official_seconds: float = 0.0

    @property
    def status(self) -> str:
        """``identical``; ``identical until the official error`` (ours matched every frame the official
        interpreter produced before it failed); or ``different``."""
        if all(r.identical for r in self.runs):
            return "identical"
        if all(r.identical or (r.official_error and r.reason == "official error") for r in self.runs):
            return "identical until the official error"
        return "different"

    @property
    def steps(self) -> int:
        """Steps compared over all runs."""
        return sum(r.steps for r in self.runs)

    @property
    def first_difference(self) -> Comparison | None:
        """The first run that did not match (None if all did)."""
        return next((r for r in self.runs if not r.identical), None)

    @property
    def finished(self) -> bool:
        """True when both interpreters played every run to its last step (neither stopped at an error)."""
        return not any(r.official_error or r.ours_error for r in self.runs)

    @property
    def speed_ratio(self) -> float | None:
        """The official interpreter's time over ours (> 1: ours is faster); None when a run did not finish: an
        interpreter that stopped early did less work, and its time is not comparable."""
        return self.official_seconds / self.ours_seconds if self.ours_seconds > 0 and self.finished else None

    def document(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "program": self.program,
            "status": self.status,
            "steps": self.steps,
            "ours_seconds": round(self.ours_seconds, 4),
            "official_seconds": round(self.official_seconds, 4),
            "speed_ratio": None if self.speed_ratio is None else round(self.speed_ratio, 2),
            "runs": [asdict(r) for r in self.runs],
        }


def compare_run(ours: Run, official: Run, seed: int, run: int) -> Comparison:
    """Compare two runs frame by frame: where the first frame differs, or where either side failed."""
    shared = min(len(ours.frames), len(official.frames))
    for index in range(shared):
        if ours.frames[index] != official.frames[index]:
            reason = f"frame {index} differs: {_first_cell(ours.frames[index], official.frames[index])}"
            return Comparison(seed, run, max(index - 1, 0), False, reason, official.error, ours.error)
    steps = max(shared - 1, 0)
    if official.error is None and ours.error is None:
        return Comparison(seed, run, steps, True)
    if official.error is not None and (ours.error is None or official.error_step == ours.error_step):
        return Comparison(seed, run, steps, False, "official error", official.error, ours.error)
    return Comparison(seed, run, steps, False, "our error", official.error, ours.error)


def _first_cell(ours: Grid, official: Grid) -> str:
    if len(ours) != len(official):
        return f"grid {len(ours)} rows (ours) vs {len(official)} (official)"
    for y, (row, other) in enumerate(zip(ours, official, strict=True)):
        for x, (a, b) in enumerate(zip(row, other, strict=False)):
            if a != b:
                return f"cell ({x}, {y}) is {a} (ours) vs {b} (official)"
    return "rows of different lengths"


def compare_program(
    name: str,
    program: str,
    official: Official,
    seeds: Sequence[int] = (1, 0),
    runs: int = 5,
    steps: int = 200,
    **options: Any,
) -> ProgramReport:
    """Every run (``runs`` per seed) of one program through both interpreters."""
    report = ProgramReport(name)
    for seed in seeds:
        for run in range(runs):
            size = _grid_size(program, seed, options)
            actions = random_actions(name, seed, run, steps, size)
            ours = run_ours(program, seed, actions, **options)
            theirs = official.run(name, program, seed, actions)
            report.ours_seconds += ours.seconds
            report.official_seconds += theirs.seconds
            report.runs.append(compare_run(ours, theirs, seed, run))
    return report


def _grid_size(program: str, seed: int, options: dict[str, Any]) -> int:
    try:
        return Interpreter(program, seed=seed, **options).grid_size
    except AutumnError:
        return 16


def official_module(folder: Path, stdlib: Path | None = None) -> OfficialModule:
    """The official module in ``folder`` and its standard library (``stdlib``, or Autumn.cpp's
    ``autumnstdlib/stdlib.sexp`` found in or above ``folder``); UserError with one clear line otherwise."""
    if not folder.is_dir():
        raise UserError(f"--official {folder}: no such folder (give the folder holding Autumn.cpp's built {MODULE})")
    if not any(folder.glob(f"{MODULE}*.so")) and not any(folder.glob(f"{MODULE}*.pyd")):
        raise UserError(
            f"--official {folder}: no {MODULE}*.so in it (build Autumn.cpp's Python module by its README first)"
        )
    if stdlib is None:
        found = [folder / place for place in STDLIB_PLACES if (folder / place).is_file()]
        if not found:
            raise UserError(
                f"no autumnstdlib/stdlib.sexp in or above {folder}: give the official standard library with --stdlib"
            )
        stdlib = found[0]
    if not stdlib.is_file():
        raise UserError(f"--stdlib {stdlib}: no such file")
    module = OfficialModule(folder.resolve(), stdlib.read_text(encoding="utf-8"))
    probe = subprocess.run(
        [module.python, "-c", f"import sys; sys.path.insert(0, {str(module.folder)!r}); import {MODULE}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UserError(f"cannot import {MODULE} from {folder}: {last}")
    return module


def program_files(folder: Path) -> list[Path]:
    """The ``.sexp`` programs of ``folder``, by name; UserError if it has none."""
    if not folder.is_dir():
        raise UserError(f"--programs {folder}: no such folder")
    files = sorted(folder.glob("*.sexp"))
    if not files:
        raise UserError(f"--programs {folder}: no .sexp programs in it")
    return files


def compare_folder(
    files: Iterable[Path],
    official: Official,
    seeds: Sequence[int] = (1, 0),
    runs: int = 5,
    steps: int = 200,
    on_program: Callable[[ProgramReport], None] | None = None,
    **options: Any,
) -> list[ProgramReport]:
    """:func:`compare_program` for every file; ``on_program`` is told of each report as it is made."""
    reports = []
    for path in files:
        report = compare_program(path.stem, path.read_text(encoding="utf-8"), official, seeds, runs, steps, **options)
        reports.append(report)
        if on_program is not None:
            on_program(report)
    return reports


def median_speed_ratio(reports: Iterable[ProgramReport]) -> float | None:
    """The median over programs of the official interpreter's time over ours, leaving out programs with a run
    that did not finish (their :attr:`ProgramReport.speed_ratio` is None)."""
    ratios = sorted(r.speed_ratio for r in reports if r.speed_ratio is not None)
    if not ratios:
        return None
    middle = len(ratios) // 2
    return ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2


UNFINISHED = "-: a run stopped at an error, no speed ratio"


def summary_line(report: ProgramReport) -> str:
    """One line per program: status, steps compared, times, their ratio ("-" when a run stopped at an error:
    the times of unfinished runs are not comparable), and where the first difference is."""
    ratio = f"{report.speed_ratio:.2f}x" if report.speed_ratio is not None else UNFINISHED
    line = (
        f"{report.program:<28} {report.status:<34} {report.steps:>6} steps  ours {report.ours_seconds:7.2f} s  "
        f"official {report.official_seconds:7.2f} s  ({ratio})"
    )
    first = report.first_difference
    if first is not None:
        line += f"\n    seed {first.seed} run {first.run}: {first.reason}"
        for side, error in (("official", first.official_error), ("ours", first.ours_error)):
            if error:
                line += f"\n    {side}: {_one_line(error)}"
    return line


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _action_list(action: Action) -> list[Any]:
    if action is None:
        return ["noop"]
    if isinstance(action, tuple):
        return list(action)
    return [action]
