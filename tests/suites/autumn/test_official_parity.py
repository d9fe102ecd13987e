"""Parity with the official Autumn interpreter (Autumn.cpp): tiny programs of our own whose frames (or error) were
recorded from the official module (tests/suites/autumn/data/official/*.json) run through ours; the parity module
against recorded runs; and, when DISCOGYM_AUTUMN_OFFICIAL names a folder with a built official module, the real
side-by-side comparison."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from discogym.core import UserError
from discogym.suites.autumn import parity
from discogym.suites.autumn.interpreter import Interpreter, parse_action, parse_actions
from discogym.suites.autumn.values import Instance, Position
from tests.conftest import run_discogym
from tests.suites.autumn.helpers import program, value

DATA = Path(__file__).parent / "data" / "official"
CASES = sorted(p for p in DATA.glob("*.json") if p.stem != "parity_runs")
OFFICIAL_ENV = "DISCOGYM_AUTUMN_OFFICIAL"


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def test_every_listed_difference_has_a_recorded_case():
    names = {p.stem for p in CASES}
    assert names >= {
        "prev_by_name",
        "render_method",
        "on_extra_items",
        "lambda_extra_arguments",
        "remove_in_let",
        "equal_objects",
        "free_off_grid",
        "stdlib_positions",
        "stdlib_objects",
        "stdlib_collisions",
        "stdlib_liquid",
        "on_condition_list",
        "assign_other_kind",
        "all_objects_order",
    }


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_ours_gives_the_official_frames(path):
    case = load(path)
    actions = [parse_action(a) for a in case["actions"]]
    order = case.get("order", "program")  # all_objects_order needs the official order of the globals
    ours = parity.run_ours(case["program"], case["seed"], actions, stdlib="official", order=order)
    assert ours.frames == case["frames"], case["note"]
    if case["error"] is None:
        assert ours.error is None, ours.error
    else:  # the official interpreter stopped with an error: ours stops at the same step
        assert ours.error is not None and ours.error_step == case["error_step"], (ours.error, case["error"])


def test_discogym_keeps_its_older_forms_beside_the_official_ones():
    dot = '(object Dot (Cell 0 0 "red"))'
    src = program(
        dot,
        "(= a (Dot (Position 0 0)))",
        "(= b (Dot (Position 1 0)))",
        "(= free (initnext false (isFree (Position 3 3))))",
        "(= edge (initnext true (isFree (Position 4 0))))",
        "(= step (initnext null (moveNoCollision a (Position 0 1))))",
        "(= blocked (initnext null (moveNoCollision a (Position 1 0))))",
        "(= unit (initnext null (unitVector (Position 0 0) (Position 3 -2))))",
        "(= near (initnext null (adjacentObjs a (list a b))))",
        size=4,
    )
    assert value(src, "free", "noop") is True and value(src, "edge", "noop") is False
    step, blocked, near = (value(src, name, "noop") for name in ("step", "blocked", "near"))
    assert isinstance(step, Instance) and step.origin == Position(0, 1)
    assert isinstance(blocked, Instance) and blocked.origin == Position(0, 0)
    assert value(src, "unit", "noop") == Position(1, -1)
    assert isinstance(near, tuple) and [o.origin for o in near] == [Position(1, 0)]


def test_next_liquid_is_discogyms_unless_the_official_library_is_asked_for():
    src = program(
        '(object Drop (Cell 0 0 "blue"))',
        '(object Wall (Cell 0 0 "gray"))',
        "(= floor (map (--> x (Wall (Position x 3))) (list 0 1 2 3)))",
        "(= wall (Wall (Position 0 2)))",
        "(= drop (initnext (Drop (Position 1 2)) (nextLiquid (prev drop))))",
    )
    ours = Interpreter(src, seed=1)
    ours.step(None)
    official = Interpreter(src, seed=1, stdlib="official")
    official.step(None)
    assert ours.globals["drop"].origin == Position(2, 2)  # blocked below and on the left: right
    assert official.globals["drop"].origin == Position(1, 2)  # no hole in the row below: stays


def test_random_actions_are_deterministic_and_cover_every_kind():
    first = parity.random_actions("ice", 1, 0, 300, 8)
    assert first == parity.random_actions("ice", 1, 0, 300, 8)
    assert first != parity.random_actions("ice", 1, 1, 300, 8) != parity.random_actions("ice", 0, 0, 300, 8)
    kinds = {a if not isinstance(a, tuple) else "click" for a in first}
    assert kinds == {None, "left", "right", "up", "down", "click"}
    assert all(0 <= a[1] < 8 and 0 <= a[2] < 8 for a in first if isinstance(a, tuple))


def _recorded() -> parity.RecordedOfficial:
    return parity.RecordedOfficial(load(DATA / "parity_runs.json")["runs"])


def _programs(tmp_path: Path, *names: str) -> list[Path]:
    files = []
    for name in names:
        path = tmp_path / f"{name}.sexp"
        path.write_text(load(DATA / f"{name}.json")["program"], encoding="utf-8")
        files.append(path)
    return files


def test_the_parity_check_against_recorded_official_runs(tmp_path):
    files = _programs(tmp_path, "render_method", "stdlib_liquid", "on_condition_list")
    reports = parity.compare_folder(files, _recorded(), seeds=(1, 0), runs=1, steps=25, stdlib="official")
    assert [r.status for r in reports] == ["identical", "identical", "identical until the official error"]
    assert [r.steps for r in reports[:2]] == [50, 50]
    assert "identical" in parity.summary_line(reports[0])
    document = reports[1].document()
    assert document["status"] == "identical" and len(document["runs"]) == 2


def test_the_parity_check_reports_the_first_differing_frame(tmp_path):
    (path,) = _programs(tmp_path, "render_method")
    path.write_text(path.read_text().replace('"green"', '"red"'), encoding="utf-8")
    (report,) = parity.compare_folder([path], _recorded(), seeds=(1,), runs=1, steps=25, stdlib="official")
    first = report.first_difference
    assert report.status == "different" and first is not None
    assert first.reason is not None and first.reason.startswith("frame 0 differs: cell (2, 1) is red (ours) vs green")
    assert "seed 1 run 0: frame 0 differs" in parity.summary_line(report)


def test_a_crash_of_the_official_child_is_an_error_at_the_step_it_reached():
    frame = [["black"]]
    lines = "\n".join(json.dumps({"frame": frame}) for _ in range(3))
    run = parity._read_worker(lines, -11, "")
    assert run.frames == [frame] * 3 and run.error_step == 3 and "crashed (exit code -11)" in (run.error or "")
    ours = parity.Run([frame] * 6, 0.1)
    comparison = parity.compare_run(ours, run, 1, 0)
    assert not comparison.identical and comparison.reason == "official error" and comparison.steps == 2


def test_speed_ratio_median_leaves_out_crashed_programs():
    fast = parity.ProgramReport("a", [parity.Comparison(1, 0, 5, True)], ours_seconds=1.0, official_seconds=2.0)
    slow = parity.ProgramReport("b", [parity.Comparison(1, 0, 5, True)], ours_seconds=1.0, official_seconds=1.0)
    crashed = parity.ProgramReport(
        "c", [parity.Comparison(1, 0, 1, False, "official error", "crash")], ours_seconds=1.0, official_seconds=9.0
    )
    assert parity.median_speed_ratio([fast, slow, crashed]) == pytest.approx(1.5)
    assert parity.median_speed_ratio([]) is None


@pytest.mark.parametrize(
    "run",
    [
        parity.Comparison(1, 0, 1, False, "official error", official_error="crashed (exit code -11)"),
        parity.Comparison(1, 0, 1, False, "official error", "stopped", "stopped"),  # both stopped (sokoban)
        parity.Comparison(1, 0, 1, False, "our error", ours_error="stopped"),
    ],
)
def test_no_speed_ratio_for_a_program_with_a_run_that_did_not_finish(run):
    finished = parity.Comparison(0, 0, 200, True)
    report = parity.ProgramReport("crashy", [finished, run], ours_seconds=2.99, official_seconds=0.71)
    assert not report.finished and report.speed_ratio is None and report.document()["speed_ratio"] is None
    line = parity.summary_line(report)
    assert "x)" not in line and "0.24" not in line and "(-: a run stopped at an error, no speed ratio)" in line
    whole = parity.ProgramReport("whole", [finished], ours_seconds=2.0, official_seconds=3.0)
    assert whole.finished and "(1.50x)" in parity.summary_line(whole)


def test_the_recorded_official_error_gets_no_speed_ratio(tmp_path):
    files = _programs(tmp_path, "render_method", "on_condition_list")
    finished, stopped = parity.compare_folder(files, _recorded(), seeds=(1, 0), runs=1, steps=25, stdlib="official")
    assert finished.speed_ratio is not None and stopped.status == "identical until the official error"
    assert stopped.speed_ratio is None and parity.UNFINISHED in parity.summary_line(stopped)


def test_parity_command_errors_are_one_clear_line(tmp_path):
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "a.sexp").write_text("(program)", encoding="utf-8")

    def parity_run(official: Path, *extra: str):
        return run_discogym("autumn", "parity", "--official", str(official), "--programs", str(programs), *extra)

    missing = parity_run(tmp_path / "nope")
    assert missing.returncode == 2 and "no such folder" in missing.stderr and len(missing.stderr.splitlines()) == 1
    no_module = parity_run(tmp_path)
    assert no_module.returncode == 2 and "no interpreter_module" in no_module.stderr
    (tmp_path / "interpreter_module.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    no_stdlib = parity_run(tmp_path)
    assert no_stdlib.returncode == 2 and "--stdlib" in no_stdlib.stderr
    (tmp_path / "autumnstdlib").mkdir()
    (tmp_path / "autumnstdlib" / "stdlib.sexp").write_text("(module)", encoding="utf-8")
    broken = parity_run(tmp_path)
    assert broken.returncode == 2 and "cannot import interpreter_module" in broken.stderr
    assert parity_run(tmp_path, "--seeds", "x").returncode == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"no \.sexp programs"):
        parity.program_files(tmp_path / "empty")
    with pytest.raises(UserError, match="no such folder"):
        parity.program_files(tmp_path / "nope")


@pytest.mark.skipif(
    not os.environ.get(OFFICIAL_ENV),
    reason=f"{OFFICIAL_ENV} does not name a folder with a built Autumn.cpp interpreter_module (docs/autumn-compat.md)",
)
def test_the_real_comparison_with_the_official_module(tmp_path):
    programs = tmp_path / "programs"
    programs.mkdir()
    _programs(programs, "render_method", "stdlib_objects", "stdlib_liquid")
    extra = ["--stdlib", os.environ[f"{OFFICIAL_ENV}_STDLIB"]] if os.environ.get(f"{OFFICIAL_ENV}_STDLIB") else []
    done = run_discogym(
        "autumn", "parity", "--official", os.environ[OFFICIAL_ENV], "--programs", str(programs),
        "--runs", "1", "--steps", "30", "--json", *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["identical"] == 3 and all(p["steps"] == 60 for p in document["programs"])


def test_recorded_cases_use_only_known_actions():
    for path in CASES:
        parse_actions("; ".join(load(path)["actions"]))


def test_the_checker_accepts_extra_arguments_and_names_too_few():
    from discogym.suites.autumn.lint import check_program

    src = program("(= f (--> (a b) a))", "(= x (f 1 2 3))", "(= g nextLiquid)")
    assert check_program(src) == []
    (problem,) = check_program(program("(= f (--> (a b) a))", "(= x (f 1))"))
    assert "f takes at least 2 argument(s), got 1" in problem.message
