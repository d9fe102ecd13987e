"""The crafting verdict comes from the log: the table replayed from the task's slots through the logged calls,
never the environment's cached summary, which rescoring only cross-checks."""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from discogym.core import Event, ToolCall, get_suite
from discogym.core.model.jsonsafe import json_safe
from discogym.core.model.tools import UNREADABLE_TOOL
from discogym.suites.crafting.recipes import recipe_book
from discogym.suites.crafting.tasks import slots_of
from discogym.suites.crafting.verdict import recompute
from tests.suites.rescore_log import assert_stored_scores_recompute, copy_run, episode_path, rescore, run, tamper

SPLIT = "test.small"
POSSIBLE, IMPOSSIBLE = "TEST0487", "TEST0385"


@pytest.fixture(scope="module")
def planner_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference planner on every task of the small test split."""
    out = tmp_path_factory.mktemp("crafting-planner")
    episodes = run("crafting", out, "--split", SPLIT, "--agent", "planner")
    assert len(episodes) == 117 and all(e.score.success for e in episodes if e.key.task in (POSSIBLE, IMPOSSIBLE))
    return out


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The random agent on a possible and an impossible task, in the text and a picture condition."""
    out = tmp_path_factory.mktemp("crafting-random")
    tasks = ["--tasks", POSSIBLE, "--tasks", IMPOSSIBLE]
    run("crafting", out, "--split", SPLIT, *tasks, "--agent", "random", "--condition", "mst-se-i")
    run("crafting", out, "--split", SPLIT, *tasks, "--agent", "random", "--condition", "image-low")
    return out


def test_stored_scores_are_what_the_log_recomputes(planner_run, random_run):
    assert_stored_scores_recompute(planner_run)
    assert_stored_scores_recompute(random_run)


def test_false_cached_failures_do_not_change_the_score_and_are_flagged(planner_run, tmp_path):
    copied = copy_run(planner_run, tmp_path / "run")
    before = rescore(copied).row("planner")
    tamper(episode_path(copied, POSSIBLE), crafted=False, steps=30)
    tamper(episode_path(copied, IMPOSSIBLE), declared_impossible=False, counts={})
    rescored = rescore(copied)
    assert rescored.row("planner") == before and before["success rate"] > 0.9
    warnings = sorted(rescored.warned())
    assert len(warnings) == 2
    assert POSSIBLE in warnings[1] and "on crafted, steps;" in warnings[1]
    assert IMPOSSIBLE in warnings[0] and "on counts, declared_impossible;" in warnings[0]


def test_a_false_cached_success_of_the_random_agent_is_not_believed(random_run, tmp_path):
    copied = copy_run(random_run, tmp_path / "run")
    before = rescore(copied).document["tables"][0]["rows"]
    for path in (copied / "episodes").iterdir():
        impossible = json.loads(path.read_text())["task"]["ground_truth"]["impossible"]
        tamper(path, **({"declared_impossible": True} if impossible else {"crafted": True}))
    rescored = rescore(copied)
    assert rescored.document["tables"][0]["rows"] == before
    flagged = [line for line in rescored.warned() if "on crafted;" in line or "on declared_impossible;" in line]
    assert len(flagged) == len(rescored.warned()) >= 2  # an episode that did succeed agrees with the forgery


@pytest.mark.parametrize("condition", ["mst-se-i", "ms"])
def test_the_replay_reaches_the_environments_end_on_random_call_sequences(condition):
    suite = get_suite("crafting")
    rng = np.random.default_rng(7)
    for task in suite.tasks(SPLIT)[:20]:
        env = suite.make_env(task, suite.condition(condition), seed=3)
        events: list[Event] = []
        while not env.done:
            tool, args = random_call(env.valid_calls(), rng)
            events.append(Event(step=len(events) + 1, call=ToolCall(tool=tool, args=args), result=env.call(tool, args)))
        target, slots = str(task.params["target"]), slots_of(task)
        verdict = recompute(recipe_book(), target, slots, suite.condition(condition), 3, events)
        assert verdict.model_dump() == json_safe(env.outcome()), task.id


def random_call(valid: list[ToolCall], rng: np.random.Generator) -> tuple[str, Any]:
    """A valid call, or now and then a refused, unreadable or malformed one."""
    roll = rng.random()
    if roll < 0.1:
        return "move", {"slot_from": "[Z9]", "slot_to": "[A1]", "quantity": 1}
    if roll < 0.15:
        return "search", {"item": "stick"}
    if roll < 0.2:
        return UNREADABLE_TOOL, {"reply": "I do not understand"}
    if roll < 0.25 or not valid:
        return "smelt", "not json"
    call = valid[int(rng.integers(len(valid)))]
    return call.tool, call.args
