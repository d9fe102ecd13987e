"""The planner reproduces the dataset's optimal path lengths, and its actions solve every example."""

import pytest

from discogym.suites.crafting import data
from discogym.suites.crafting.planner import make_plan, plan_recipes
from discogym.suites.crafting.state import Table


@pytest.mark.parametrize("split", ["test", "val", "train"])
def test_the_planner_matches_every_official_example(book, split):
    checked = 0
    for example in data.load_split(split):
        slots = example.table()
        plan = make_plan(book, example.target, slots)
        if example.impossible:
            assert plan is None, example.id
            continue
        assert plan is not None, example.id
        assert len(plan.recipes) == example.optimal_path_length, example.id
        table = Table(book, slots)
        for step in plan.actions:
            run = table.move if step.action == "move" else table.smelt
            assert run(step.source, step.target, step.quantity) is None, (example.id, step.text())
        assert table.has_item(example.target), example.id
        checked += 1
    assert checked == sum(not e.impossible for e in data.load_split(split)) > 400


def test_plans_are_shortest_and_smelting_counts_per_unit(book):
    assert [r.result for r in plan_recipes(book, "oak_planks", {"oak_log": 1}) or []] == ["oak_planks"]
    assert [r.result for r in plan_recipes(book, "stick", {"oak_log": 1}) or []] == ["oak_planks", "stick"]
    smelted = plan_recipes(book, "iron_block", {"iron_ore": 9}) or []
    assert [r.result for r in smelted] == ["iron_ingot"] * 9 + ["iron_block"]
    assert plan_recipes(book, "iron_block", {"iron_ore": 8}) is None


def test_the_planner_reuses_and_clears_the_grid(book):
    slots = {1: ("dirt", 1), 5: ("oak_log", 1), 10: ("cobblestone", 8)}
    plan = make_plan(book, "furnace", slots)
    assert plan is not None and [r.result for r in plan.recipes] == ["furnace"]
    texts = [a.text() for a in plan.actions]
    assert texts[0] == "move: from [A1] to [I2] with quantity 1" and texts[1].startswith("move: from [B2] to ")
    assert texts[-1].startswith("move: from [0] to ")
