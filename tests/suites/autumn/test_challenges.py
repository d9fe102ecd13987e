"""WorldTest's challenges: scoring edge cases, MFP uniqueness under randomness, planning goals, change detection."""

import math
from pathlib import Path

import pytest

from discogym.suites.autumn.catalog import CATALOG, env_stats, program_source
from discogym.suites.autumn.challenges import (
    GUARD_CLOCK,
    MfpTask,
    cd_score,
    defect_time,
    explore,
    goal_reached,
    is_stochastic,
    make_change,
    make_mfp,
    make_planning,
    play,
    region,
    verify_mfp,
    verify_planning,
)
from discogym.suites.autumn.interpreter import parse_action
from discogym.suites.autumn.tasks import packaged_tasks

PROGRAMS = Path(__file__).parents[3] / "src/discogym/suites/autumn/programs"


def source(name: str) -> str:
    return (PROGRAMS / f"{name}.sexp").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [(None, 0.0), (0, 0.0), (8, 0.0), (9, 1.0), (10, 1.0)],
)
def test_change_detection_scores_early_exact_and_one_early(chosen, expected):
    assert cd_score(10, chosen) == expected  # T = 10: f < 9 scores 0, f in {9, 10} scores 1


def test_change_detection_scores_late_frames_by_the_formula_and_never_triggered_as_zero():
    def formula(f: int, t: int) -> float:
        g = 1 / (1 - (f / t) * math.exp(-f / t))
        return min(1.0, max(0.0, 1.377 * g - 1.178))

    assert cd_score(10, 11) == pytest.approx(formula(11, 10)) and 0.99 < cd_score(10, 11) < 1
    assert cd_score(10, 20) == pytest.approx(0.7100, abs=1e-4)
    assert cd_score(10, 50) == pytest.approx(formula(50, 10))
    assert cd_score(10, 20) > cd_score(10, 30) > cd_score(10, 50)  # later is worse
    assert cd_score(None, 12) == 0.0  # the change never showed


def test_goal_checks():
    frame = [["black", "red"], ["blue", "black"]]
    assert goal_reached(frame, [(1, 0, "red"), (0, 1, "blue")])
    assert not goal_reached(frame, [(1, 0, "red"), (0, 1, "red")])
    assert not goal_reached(frame, [(2, 0, "red")])  # off the grid never matches
    assert goal_reached(frame, [])


def test_particles_are_stochastic_and_counter_is_not():
    probe = [("click", 3, 3), None, None, "left", None]
    assert is_stochastic(source("particles"), probe)
    assert not is_stochastic(source("counter"), probe)


def test_masked_frame_prediction_has_exactly_one_answer_under_the_randomness():
    stochastic = [info.name for info in CATALOG if env_stats(info.name).stochastic]
    tasks = [t for t in packaged_tasks("v1").tasks if t.kind == "mfp" and t.env in stochastic]  # v2: test_sets.py
    assert len(tasks) >= 5
    for task in tasks:
        program, challenge = program_source(task.env), task.challenge
        assert isinstance(challenge, MfpTask)
        assert verify_mfp(program, challenge, realizations=100)  # more seeds than were used to make it
        actions = [parse_action(a) for a in challenge.actions]
        truth = region(play(program, actions, challenge.seed + 177)[-1], challenge.mask)
        assert challenge.options[challenge.answer] == truth
        assert len({str(option) for option in challenge.options}) == 6


def test_planning_goals_are_reached_by_their_solution_and_not_at_the_start():
    program = source("push")
    task = make_planning(program, 4)
    assert task is not None and verify_planning(program, task)
    frames = play(program, [parse_action(a) for a in task.solution], task.seed)
    assert not goal_reached(frames[0], task.goal) and goal_reached(frames[-1], task.goal)
    broken = task.model_copy(update={"goal": [(x, y, "purple") for x, y, _ in task.goal]})
    assert not verify_planning(program, broken)


@pytest.mark.parametrize("name", ["counter", "ball", "collector", "water"])
def test_a_change_shows_only_after_its_guard(name):
    program = source(name)
    task = make_change(program, 6)
    assert task is not None and GUARD_CLOCK in task.modified
    import numpy as np

    actions = explore(program, task.seed, np.random.default_rng(99), 250)
    when = defect_time(program, task.modified, actions, task.seed)
    assert when is None or when > task.guard  # the first differing frame comes after the guard's step
    assert defect_time(program, program, actions, task.seed) is None  # the original never differs from itself


def test_generation_is_deterministic():
    program = source("counter")
    assert make_mfp(program, 7) == make_mfp(program, 7)
    assert make_planning(program, 7) == make_planning(program, 7)
    assert make_change(program, 7) == make_change(program, 7)
