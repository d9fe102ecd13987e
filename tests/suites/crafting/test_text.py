"""Plancraft's action syntax, its error messages, observations and the oracle search."""

import numpy as np
import pytest

from discogym.core import ToolCall
from discogym.core.model.tools import UNREADABLE_TOOL
from discogym.suites.crafting import text
from discogym.suites.crafting.state import Table

ALL = text.ACTION_ORDER
MOVE_FORMAT = "Correct format: `move: from [Source] to [Target] with quantity N`"


def test_well_formed_actions_become_tool_calls():
    assert text.parse_action("move: from [I18] to [B1] with quantity 1", ALL) == ToolCall(
        tool="move", args={"slot_from": "[I18]", "slot_to": "[B1]", "quantity": 1}
    )
    assert text.parse_action("smelt: from [I5] to [I6] with quantity 3", ALL).args == {
        "slot_from": "[I5]",
        "slot_to": "[I6]",
        "quantity": 3,
    }
    assert text.parse_action("think: planks first", ALL) == ToolCall(tool="think", args={"thought": "planks first"})
    assert text.parse_action("search: oak_planks", ALL) == ToolCall(tool="search", args={"item": "oak_planks"})
    assert text.parse_action("impossible: no logs", ALL) == ToolCall(tool="impossible", args={"reason": "no logs"})


def test_the_first_action_named_in_a_message_is_the_one_read():
    assert text.parse_action("think: I will move: from [I1] to [A1] with quantity 1", ALL).tool == "think"
    assert text.parse_action("Sure. move: from [I1] to [A1] with quantity 1", ALL).tool == "move"


def reply(message: str, actions: tuple[str, ...] = ALL) -> str:
    call = text.parse_action(message, actions)
    assert call.tool == UNREADABLE_TOOL and isinstance(call.args, dict)
    return str(call.args["reply"])


def test_messages_that_are_no_action_get_plancrafts_answer_for_the_condition():
    assert reply("I would like to craft a table") == (
        "Only select actions from the following: move, smelt, think, search, impossible"
    )
    assert reply("think: hmm", ("move", "smelt")) == "Only select actions from the following: move, smelt"


def test_an_action_whose_parts_cannot_be_read_gets_the_correct_format():
    assert reply("move: [I1] -> [A1]") == (
        f"Format Error: the action needs a [Source], a [Target] and a quantity. {MOVE_FORMAT}"
    )
    assert reply("search:").endswith("Correct format: `search: <recipe name>`")


@pytest.mark.parametrize(
    ("action", "source", "target", "quantity", "reason"),
    [
        ("move", "[A4]", "[A1]", 1, "[Source] and [Target] must be [0] or [A1] to [C3] or [I1] to [I36]"),
        ("move", "[I0]", "[A1]", 1, "[Source] and [Target] must be [0] or [A1] to [C3] or [I1] to [I36]"),
        ("move", "[I3]", "[I3]", 1, "[Source] and [Target] must be different"),
        ("move", "[I40]", "[A1]", 1, "[Source] must be [0] or [A1] to [C3] or [I1] to [I36]"),
        ("move", "[I1]", "[0]", 1, "You cannot move items into [0]"),
        ("smelt", "[I1]", "[0]", 1, "You cannot smelt items into [0]"),
        ("move", "[I1]", "[I37]", 1, "[Target] must be [A1] to [C3] or [I1] to [I36]"),
        ("move", "[I1]", "[A1]", 0, "quantity must be between 1 and 64"),
        ("smelt", "[I1]", "[A1]", 65, "quantity must be between 1 and 64"),
    ],
)
def test_every_slot_error_message(action, source, target, quantity, reason):
    checked = text.check_slot_action(action, source, target, quantity)
    assert checked == f"Format Error: {reason}. Correct format: `{action}: from [Source] to [Target] with quantity N`"


def test_slots_without_brackets_are_accepted_from_tool_calls():
    assert text.check_slot_action("move", "I1", "A1", 1) == (10, 1)
    assert text.check_slot_action("move", "[0]", "[I36]", 64) == (0, 45)


def test_the_observation_lists_occupied_slots_in_slot_order(book):
    table = Table(book, {45: ("stone", 3), 1: ("oak_log", 2), 12: ("dirt", 1)})
    assert text.observation("oak_planks", table) == (
        "Craft an item of type: oak_planks\ninventory:\n - oak_planks [0] quantity 4\n - oak_log [A1] quantity 2\n"
        " - dirt [I3] quantity 1\n - stone [I36] quantity 3"
    )


def test_search_lists_every_recipe_with_a_valid_layout_deterministically(book):
    first = text.search_recipes(book, "stick", np.random.default_rng(5))
    assert first == text.search_recipes(book, "stick", np.random.default_rng(5))
    assert first.startswith("Recipes to craft stick:\nrecipe 1:\n")
    recipes = first.split("\nrecipe ")
    assert len(recipes) == 3  # sticks from planks, and from bamboo
    lines = [line for line in recipes[1].splitlines() if " at " in line]
    cells = {line.split(" at ")[1]: line.split(" at ")[0] for line in lines}
    table = Table(book, {int(text._slot_number(c) or 0): (item, 1) for c, item in cells.items()})
    assert table.slots[0] == ("stick", 4)  # the layout the search shows really crafts the item
    assert text.search_recipes(book, "iron_ingot", np.random.default_rng(0)).splitlines()[2].startswith("smelt ")
    assert text.search_recipes(book, "bedrock", np.random.default_rng(0)) == "Could not find a recipe by that name."
