"""Training tasks: every suite's training source, and the guard that keeps evaluation tasks out of it."""

import json
from collections.abc import Iterator

import pytest

from discogym.core import Task, UserError, get_suite
from discogym.core.running.training import (
    EvaluationDigests,
    guarded_training_tasks,
    parse_training_split,
    problem_digest,
)
from discogym.core.running.versions import set_digest
from tests.conftest import run_discogym

# petri's worlds are verified by simulation as they are made (seconds each): fewer of them
COUNTS = {"crafting": 200, "redstone": 200, "autumn": 2, "petri": 2}


@pytest.mark.parametrize("suite_name", sorted(COUNTS))
def test_each_suites_training_tasks_are_no_evaluation_task_and_come_back_with_their_seed(suite_name):
    suite = get_suite(suite_name)
    count = COUNTS[suite_name]
    made = guarded_training_tasks(suite, 11, count)
    assert len(made.tasks) == count and len({task.id for task in made.tasks}) == count
    assert all(task.split == f"training:11:{count}" and task.suite == suite_name for task in made.tasks)
    evaluation = EvaluationDigests(suite)
    assert [task.id for task in made.tasks if evaluation.match(task)] == []
    compared = {entry.split for entry in made.compared if entry.unavailable is None}
    assert compared, made.compared
    assert sum(entry.tasks for entry in made.compared) == sum(len(suite.tasks(split)) for split in compared)
    # the split plays through the suite's own tasks(), and a smaller count is the same source's first tasks
    assert set_digest(suite.tasks(f"training:11:{count}")) == set_digest(made.tasks)
    first = guarded_training_tasks(suite, 11, 2).tasks
    assert [task.id for task in first] == [task.id for task in made.tasks[:2]]
    other = guarded_training_tasks(suite, 12, 2).tasks
    assert {problem_digest(suite, t) for t in other}.isdisjoint({problem_digest(suite, t) for t in first})


def test_the_same_seed_gives_byte_identical_tasks_in_a_new_process_under_another_hash_seed():
    documents = []
    for hash_seed in ("1", "2"):
        done = run_discogym("training", "crafting", "--seed", "4", "--count", "150", "--json", PYTHONHASHSEED=hash_seed)
        assert done.returncode == 0, done.stderr
        documents.append(done.stdout)
    assert documents[0] == documents[1] and json.loads(documents[0])["tasks"] == 150
    assert json.loads(documents[0])["digest"] == set_digest(guarded_training_tasks(get_suite("crafting"), 4, 150).tasks)


@pytest.mark.parametrize("suite_name", ["crafting", "redstone"])
def test_an_evaluation_task_from_the_source_is_left_out_even_renamed_and_reseeded(suite_name, monkeypatch):
    suite = get_suite(suite_name)
    evaluation_task = suite.tasks(suite.evaluation_splits()[0])[3]
    disguised = evaluation_task.model_copy(update={"id": "looks-new", "split": "training"})
    real_source = type(suite).training_source

    def leaky_source(self: object, seed: int) -> Iterator[Task]:
        yield disguised
        yield from real_source(suite, seed)

    monkeypatch.setattr(type(suite), "training_source", leaky_source)
    made = guarded_training_tasks(suite, 987_654, 3)
    assert made.left_out[0].startswith("looks-new = ") and made.left_out[0].endswith(f"/{evaluation_task.id}")
    assert "looks-new" not in {task.id for task in made.tasks} and len(made.tasks) == 3


def test_crafting_tasks_with_the_same_items_in_other_slots_are_the_same_problem():
    suite = get_suite("crafting")
    task = suite.tasks("test")[0]
    slots = list(task.params["slots"])
    moved = {
        **task.ground_truth,
        "id": "moved",
        "slotted_inventory": dict(reversed(task.ground_truth["slotted_inventory"].items())),
    }
    shuffled = task.model_copy(
        update={"id": "moved", "params": {**task.params, "slots": slots[::-1]}, "ground_truth": moved}
    )
    assert problem_digest(suite, shuffled) == problem_digest(suite, task)
    fewer = {**moved, "slotted_inventory": dict(list(moved["slotted_inventory"].items())[1:])}
    assert problem_digest(suite, shuffled.model_copy(update={"ground_truth": fewer})) != problem_digest(suite, task)


def test_the_cli_says_what_it_compared_and_fails_on_a_split_of_evaluation_tasks():
    done = run_discogym("training", "redstone", "--count", "60")
    assert done.returncode == 0, done.stderr
    assert "redstone training:0:60: 60 tasks; none is an evaluation task of official (25), A (5)" in done.stdout
    assert "left out as evaluation tasks: 4 (" in done.stdout  # the paper's own levels, drawn again
    clean = run_discogym("training", "crafting", "--check", "train")
    assert clean.returncode == 0 and "1,145 tasks; none is an evaluation task of test (580), val (570)" in clean.stdout
    leaked = run_discogym("training", "crafting", "--check", "val.small")
    assert leaked.returncode == 2 and "110 tasks of val.small are evaluation tasks: VAL" in leaked.stderr


@pytest.mark.parametrize("split", ["training:1", "training:x:3", "training:1:0", "training:1:2000000"])
def test_a_malformed_training_split_is_refused_with_its_form(split):
    with pytest.raises(UserError, match="training"):
        parse_training_split(split)
    with pytest.raises(UserError, match="training"):
        get_suite("redstone").tasks(split)


def test_the_reference_agents_play_training_tasks_through_run(tmp_path):
    for suite_name, count in (("redstone", 10), ("crafting", 10), ("autumn", 3)):
        out = tmp_path / suite_name
        done = run_discogym(
            "run", suite_name, "--split", f"training:5:{count}", "--agent", "reference", "--out", str(out)
        )
        assert done.returncode == 0, done.stderr
        episodes = [json.loads(path.read_text()) for path in sorted((out / "episodes").glob("*.json"))]
        assert len(episodes) == count and {e["task"]["split"] for e in episodes} == {f"training:5:{count}"}
        assert all(e["score"]["success"] for e in episodes), [
            e["task"]["id"] for e in episodes if not e["score"]["success"]
        ]
