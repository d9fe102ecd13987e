"""The two frozen set versions: v1 (the first 45 tasks, kept as they were) and v2 (challenges that discriminate):
both regenerate byte for byte, the oracle solves every task of both, and every v2 task has its generation's
properties (the random agent rarely reaches a planning goal, a frame-copying guess misses the MFP answer, a change
never shows to an agent that only waits)."""

import json
from statistics import fmean

import pytest

from discogym.core import UserError, get_suite
from discogym.core.running.storage import RunDir
from discogym.suites.autumn.catalog import env_stats, program_source
from discogym.suites.autumn.challenges import (
    RANDOM_MAX_HITS,
    RANDOM_RUNS,
    ChangeTask,
    MfpTask,
    PlanningTask,
    copy_guesses,
    defect_time,
    hidden_change,
    random_reach,
    verify_mfp,
    verify_planning,
)
from discogym.suites.autumn.suite import parse_split
from discogym.suites.autumn.tasks import DEFAULT_VERSION, V1_ENVS, AutumnTask, generate, packaged_tasks
from tests.conftest import run_discogym

V2 = packaged_tasks("v2").tasks


def of_kind(kind: str) -> list[AutumnTask]:
    return [t for t in V2 if t.kind == kind]


def test_the_first_set_keeps_its_15_environments_and_45_tasks():
    v1 = packaged_tasks("v1")
    assert v1.set_version == "v1" and len(v1.tasks) == 45
    assert list(dict.fromkeys(t.env for t in v1.tasks)) == list(V1_ENVS)
    with pytest.raises(UserError):
        generate(["dunes"], version="v1")  # environments added later are not part of it


def test_the_second_set_is_the_default_and_covers_the_catalogue_it_was_frozen_with():
    assert DEFAULT_VERSION == "v2" and packaged_tasks().set_version == "v2"
    envs = list(dict.fromkeys(t.env for t in V2))
    assert set(V1_ENVS) <= set(envs) and len(V2) == 3 * len(envs)
    assert {t.kind for t in V2 if t.env == "gravity"} == {"mfp", "planning", "cd"}


@pytest.mark.parametrize(
    ("split", "expected"),
    [("all", ("all", "v2")), ("v1", ("all", "v1")), ("mfp-v1", ("mfp", "v1")), ("gravity-v2", ("gravity", "v2"))],
)
def test_splits_choose_a_set_version(split, expected):
    assert parse_split(split) == expected


def test_split_sizes_follow_the_set():
    suite = get_suite("autumn")
    assert len(suite.tasks("v1")) == 45 and len(suite.tasks("planning-v1")) == 15
    assert len(suite.tasks("all")) == len(V2) and len(suite.tasks("cd")) == len(V2) // 3
    with pytest.raises(UserError):
        suite.tasks("mfp-v9")


def test_verify_regenerates_both_sets_byte_for_byte():
    done = run_discogym("autumn", "verify", "--env", "paint", "--env", "wind", "--env", "collector", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["identical"] is True and set(result["sets"]) == {"v1", "v2"}
    assert all(s["tasks"] == 9 for s in result["sets"].values())


def test_the_oracle_solves_every_task_of_the_first_set(tmp_path):
    done = run_discogym("run", "autumn", "--split", "v1", "--agent", "oracle", "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert len(episodes) == 45 and all(e.score.value == 1.0 for e in episodes)


def test_the_random_agent_rarely_reaches_a_second_generation_goal():
    challenges = [t.challenge for t in of_kind("planning")]
    reaches = [c.random_reach for c in challenges if isinstance(c, PlanningTask) and c.random_reach is not None]
    assert len(reaches) == len(challenges) == 43
    assert all(r <= RANDOM_MAX_HITS / RANDOM_RUNS for r in reaches)
    assert fmean(reaches) <= 0.10


@pytest.mark.parametrize("env", ["collector", "lightsout", "ball"])
def test_a_stored_random_estimate_is_measured_again(env):
    (task,) = [t for t in of_kind("planning") if t.env == env]
    goal = task.challenge
    assert isinstance(goal, PlanningTask) and verify_planning(program_source(env), goal)
    assert random_reach(program_source(env), goal.goal, goal.seed, goal.step_limit) == goal.random_reach
    assert goal.step_limit <= len(goal.solution) + max(5, len(goal.solution) // 4)


def test_a_frame_copying_guess_never_picks_the_mfp_answer():
    for task in of_kind("mfp"):
        challenge = task.challenge
        assert isinstance(challenge, MfpTask)
        guesses = copy_guesses(program_source(task.env), challenge)
        assert guesses and challenge.answer not in guesses, task.id
        assert len({str(option) for option in challenge.options}) == 6


def test_a_second_generation_mfp_answer_holds_under_the_randomness():
    for task in of_kind("mfp"):
        if env_stats(task.env).stochastic:
            assert isinstance(task.challenge, MfpTask)
            assert verify_mfp(program_source(task.env), task.challenge, realizations=60), task.id


def test_a_second_generation_change_never_shows_to_an_agent_that_only_waits():
    for task in of_kind("cd"):
        change = task.challenge
        assert isinstance(change, ChangeTask)
        noops = [None] * change.step_limit
        assert defect_time(program_source(task.env), change.modified, noops, change.seed) is None, task.id


@pytest.mark.parametrize("env", ["gravity", "chase", "lightsout"])
def test_a_second_generation_change_shows_on_exploring(env):
    (task,) = [t for t in of_kind("cd") if t.env == env]
    change = task.challenge
    assert isinstance(change, ChangeTask)
    assert hidden_change(program_source(env), change.modified, change.seed, change.step_limit)
