"""The seeded task generator: determinism, tasks the planner verifies, the dataset's bins, and task files."""

import json
import os
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from discogym.core import UserError
from discogym.suites.crafting import data
from discogym.suites.crafting.generate import (
    BIN_UPPER_EDGES,
    DISTRACTOR_COUNTS,
    IMPOSSIBLE_BIN,
    MAX_PLAN_ACTIONS,
    bin_quotas,
    complexity_bin,
    complexity_split,
    generate_examples,
    read_task_file,
    usage,
    write_task_file,
)
from discogym.suites.crafting.planner import make_plan, recipe_graph
from discogym.suites.crafting.state import INVENTORY, OUTPUT, Table

SEED, COUNT = 7, 60


@pytest.fixture(scope="module")
def generated():
    return generate_examples(SEED, COUNT)


def slots_of(example: data.Example) -> dict[int, tuple[str, int]]:
    return example.table()


def official_rows(split: str) -> list[dict[str, Any]]:
    with zipfile.ZipFile(data.ensure_wheel()) as archive:
        rows: list[dict[str, Any]] = json.loads(archive.read(f"{data.DATA_PREFIX}{split}.json"))
    return rows


def test_the_same_seed_gives_the_same_file_and_other_seeds_differ(tmp_path):
    write_task_file(tmp_path / "a.json", generate_examples(3, 25))
    write_task_file(tmp_path / "b.json", generate_examples(3, 25))
    write_task_file(tmp_path / "c.json", generate_examples(4, 25))
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "c.json").read_bytes()
    first, other = read_task_file(tmp_path / "a.json"), read_task_file(tmp_path / "c.json")
    assert [e.target for e in first] != [e.target for e in other]


def test_the_file_does_not_depend_on_the_hash_seed(tmp_path):
    script = (
        "import sys; from pathlib import Path; "
        "from discogym.suites.crafting.generate import generate_examples, write_task_file; "
        "write_task_file(Path(sys.argv[1]), generate_examples(11, 15))"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"hash{hash_seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script, str(out)], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_bytes())
    write_task_file(tmp_path / "here.json", generate_examples(11, 15))
    assert outputs[0] == outputs[1] == (tmp_path / "here.json").read_bytes()


def test_every_possible_task_is_solved_by_the_planner_within_the_action_limit(book, generated):
    possible = [e for e in generated if not e.impossible]
    assert len(possible) == COUNT - round(COUNT * 0.2)
    for example in possible:
        slots = slots_of(example)
        plan = make_plan(book, example.target, slots)
        assert plan is not None, example.id
        assert len(plan.recipes) == example.optimal_path_length >= 1, example.id
        assert plan.path == example.optimal_path, example.id
        assert len(plan.actions) <= MAX_PLAN_ACTIONS, example.id
        table = Table(book, slots)
        assert not table.has_item(example.target), example.id
        for step in plan.actions:
            run = table.move if step.action == "move" else table.smelt
            assert run(step.source, step.target, step.quantity) is None, (example.id, step.text())
        assert any(slot != OUTPUT and item == example.target for slot, (item, _) in table.slots.items()), example.id
        assert (example.items_used, example.unique_items_used) == usage(book, slots, plan.recipes), example.id
        assert example.complexity == example.items_used * example.optimal_path_length, example.id


def test_every_impossible_task_has_no_plan_and_the_dataset_conventions(book, generated):
    impossible = [e for e in generated if e.impossible]
    assert len(impossible) == round(COUNT * 0.2)
    for example in impossible:
        assert make_plan(book, example.target, slots_of(example)) is None, example.id
        assert (example.complexity_bin, example.complexity_split) == (IMPOSSIBLE_BIN, "impossible")
        nulls = (example.optimal_path_length, example.optimal_path, example.items_used, example.unique_items_used)
        assert nulls == (None, None, None, None) and example.complexity is None


def test_distractors_slots_and_ids(book, generated):
    graph = recipe_graph(book)
    assert [e.id for e in generated] == [f"GEN{SEED}-{i:04d}" for i in range(COUNT)]
    assert {e.split for e in generated} == {"generated"}
    assert {e.num_distractors for e in generated} == set(DISTRACTOR_COUNTS)
    for example in generated:
        assert set(example.slotted_inventory) <= set(INVENTORY), example.id
        unrelated = {
            s.type for s in example.slotted_inventory.values() if s.type not in graph.ancestors(example.target)
        }
        assert example.target not in unrelated, example.id
        assert len(unrelated) == example.num_distractors, example.id  # distractors: distinct, never an ingredient
        for stack in example.slotted_inventory.values():
            assert 1 <= stack.quantity <= book.stack_size(stack.type), example.id


def test_bins_follow_the_edges_and_are_balanced(generated):
    possible = [e for e in generated if not e.impossible]
    for example in possible:
        assert example.complexity is not None
        assert example.complexity_bin == complexity_bin(example.complexity), example.id
        assert example.complexity_split == complexity_split(example.complexity_bin), example.id
    counts = Counter(e.complexity_bin for e in possible)
    assert [counts[b] for b in range(5)] == bin_quotas(len(possible)) == [10, 10, 10, 9, 9]


def test_the_bin_edges_reproduce_every_official_row():
    assert [complexity_bin(c) for c in (1, 3, 4, 6, 7, 10, 12, 30, 32, 299)] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert BIN_UPPER_EDGES == (3, 6, 10, 30)
    for split in data.SPLITS:
        for example in data.load_split(split):
            if example.impossible:
                assert (example.complexity_bin, example.complexity_split) == (IMPOSSIBLE_BIN, "impossible")
                continue
            assert example.complexity is not None
            assert complexity_bin(example.complexity) == example.complexity_bin, example.id
            assert complexity_split(example.complexity_bin) == example.complexity_split, example.id


def test_items_used_is_computed_like_the_dataset(book):
    checked = 0
    for example in data.load_split("test"):
        if example.impossible:
            continue
        slots = slots_of(example)
        plan = make_plan(book, example.target, slots)
        assert plan is not None
        assert usage(book, slots, plan.recipes)[0] == example.items_used, example.id
        checked += 1
    assert checked == 480


def test_the_impossible_fraction_and_count_are_honoured():
    assert all(not e.impossible for e in generate_examples(1, 6, impossible_fraction=0.0))
    assert all(e.impossible for e in generate_examples(1, 4, impossible_fraction=1.0))
    assert generate_examples(1, 0) == []
    named = generate_examples(2, 3, split_name="fresh")
    assert {e.split for e in named} == {"fresh"} and [e.id for e in named] == ["GEN2-0000", "GEN2-0001", "GEN2-0002"]
    with pytest.raises(UserError, match="at least 0"):
        generate_examples(1, -1)
    with pytest.raises(UserError, match="between 0 and 1"):
        generate_examples(1, 5, impossible_fraction=1.5)


def test_a_hundred_tasks_take_well_under_ten_seconds(book):
    start = time.perf_counter()
    assert len(generate_examples(2024, 100)) == 100
    assert time.perf_counter() - start < 10


def test_task_files_round_trip_in_the_official_row_format(tmp_path, generated):
    path = tmp_path / "tasks" / "gen.json"
    write_task_file(path, generated)
    assert read_task_file(path) == generated
    rows = json.loads(path.read_text())
    assert [data.Example.model_validate(row) for row in rows] == generated
    assert all(set(row) == set(official_rows("test.small")[0]) for row in rows)
    first = rows[0]
    assert list(first) == sorted(first)
    totals: Counter[str] = Counter()
    for stack in first["slotted_inventory"].values():
        totals[stack["type"]] += stack["quantity"]
    assert first["inventory"] == dict(totals) and first["inventory_trace"] is None
    official = tmp_path / "official.json"
    official.write_text(json.dumps(official_rows("test.small")))
    assert tuple(read_task_file(official)) == data.load_split("test.small")


def bad_file(tmp_path: Path, rows: object) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(rows if isinstance(rows, str) else json.dumps(rows))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows: rows[1]["slotted_inventory"][next(iter(rows[1]["slotted_inventory"]))].update(quantity=0),
         r"row 1 \(id 'GEN7-0001'\): field 'slotted_inventory\.\d+\.quantity': Input should be greater than or equal"),
        (lambda rows: rows[2].pop("target"), r"row 2 \(id 'GEN7-0002'\): field 'target': Field required"),
        (lambda rows: rows[0].update(impossible="perhaps"), r"row 0 \(id 'GEN7-0000'\): field 'impossible'"),
        (lambda rows: rows[3]["slotted_inventory"].update({"0": {"type": "stone", "quantity": 1}}),
         r"row 3 \(id 'GEN7-0003'\): field 'slotted_inventory': slot 0 is not a grid or inventory slot"),
        (lambda rows: rows[4].update(id="GEN7-0000"), r"row 4: field 'id': 'GEN7-0000' is also the id of row 0"),
        (lambda rows: rows.append(5), r"row 60 is a number, not an object"),
    ],
)  # fmt: skip
def test_malformed_rows_are_user_errors_naming_the_row_and_field(tmp_path, generated, change, message):
    write_task_file(tmp_path / "good.json", generated)
    rows = json.loads((tmp_path / "good.json").read_text())
    change(rows)
    with pytest.raises(UserError, match=message):
        read_task_file(bad_file(tmp_path, rows))


def test_missing_and_malformed_files_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="no such task file"):
        read_task_file(tmp_path / "absent.json")
    with pytest.raises(UserError, match=r"not valid JSON: .* at line 1 column 3"):
        read_task_file(bad_file(tmp_path, "[{"))
    with pytest.raises(UserError, match="a JSON list of tasks, not an object"):
        read_task_file(bad_file(tmp_path, {"tasks": []}))
