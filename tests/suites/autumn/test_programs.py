"""discogym's own Autumn programs run 1,000 random steps without error; the CLI runs and checks programs."""

import json
from pathlib import Path

import numpy as np
import pytest

from discogym.suites.autumn.challenges import random_actions
from discogym.suites.autumn.interpreter import Interpreter
from tests.conftest import run_discogym

PROGRAMS = sorted((Path(__file__).parents[3] / "src/discogym/suites/autumn/programs").glob("*.sexp"))


def test_there_are_at_least_ten_programs():
    assert len(PROGRAMS) >= 10


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_a_program_runs_1000_random_steps(path):
    interpreter = Interpreter(path.read_text(encoding="utf-8"), seed=7)
    frames = [
        interpreter.step(action) for action in random_actions(np.random.default_rng(3), interpreter.grid_size, 1000)
    ]
    assert len(frames) == 1000 and interpreter.time == 1000
    assert len({str(frame) for frame in frames}) > 1  # something happens
    again = Interpreter(path.read_text(encoding="utf-8"), seed=7)
    assert [again.step(a) for a in random_actions(np.random.default_rng(3), again.grid_size, 50)] == frames[
        :50
    ]  # deterministic


def test_run_prints_frames_and_json(tmp_path):
    paint = str(next(p for p in PROGRAMS if p.stem == "paint"))
    done = run_discogym("autumn", "run", paint, "--actions", "click 3 4; right; click 5 5", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    frames = document["frames"]
    assert len(frames) == 4 and len(frames[0]) == 16
    assert frames[1][4][3] == "red" and frames[3][5][5] == "orange" and frames[3][0][0] == "orange"
    text = run_discogym("autumn", "run", paint, "--steps", "2")
    assert text.returncode == 0 and "frame 2" in text.stdout and "legend: . black" in text.stdout


def test_check_reports_problems_with_line_and_column(tmp_path):
    bad = tmp_path / "bad.sexp"
    bad.write_text("(program\n  (= x (foo 1))\n  (= y (+ 1 2 3)))\n", encoding="utf-8")
    done = run_discogym("autumn", "check", str(bad))
    assert done.returncode == 1
    assert f"{bad}:2:9: unknown name 'foo'" in done.stdout and f"{bad}:3:8: '+' takes two operands" in done.stdout
    good = run_discogym("autumn", "check", str(PROGRAMS[0]), "--json")
    assert good.returncode == 0 and json.loads(good.stdout)["ok"] is True
    broken = tmp_path / "broken.sexp"
    broken.write_text("(program (= x 1)", encoding="utf-8")
    failed = run_discogym("autumn", "run", str(broken))
    assert failed.returncode == 2 and "line 1, column 1: '(' is never closed" in failed.stderr
    assert "Traceback" not in failed.stderr
