"""Plancraft's move and smelt semantics on the real recipe data."""

import pytest

from discogym.suites.crafting.recipes import RecipeBook
from discogym.suites.crafting.state import OUTPUT, Table, slot_index

A1, A2, A3, B1, B2, B3, C1, C2, C3 = range(1, 10)
I1, I2, I3 = 10, 11, 12


def table(book: RecipeBook, **slots: tuple[str, int]) -> Table:
    return Table(book, {slot_index(name) or 0: stack for name, stack in slots.items()})


def test_the_data_has_the_counts_of_the_spec(book):
    assert (book.count("shaped"), book.count("shapeless"), book.count("smelting"), len(book.items)) == (
        491,
        143,
        53,
        976,
    )
    assert (
        book.stack_size("ender_pearl") == 16 and book.stack_size("milk_bucket") == 1 and book.stack_size("stone") == 64
    )


def test_slot_names_round_trip():
    assert slot_index("[0]") == 0 and slot_index("[A1]") == 1 and slot_index("[C3]") == 9
    assert slot_index("[I1]") == 10 and slot_index("I36") == 45
    assert slot_index("[I37]") is None and slot_index("[D1]") is None


def test_a_move_moves_exactly_the_quantity_and_merges_same_items(book):
    t = table(book, I1=("stone", 10), I2=("stone", 60))
    assert t.move(I1, I3, 4) is None
    assert t.slots[I1] == ("stone", 6) and t.slots[I3] == ("stone", 4)
    assert t.move(I1, I2, 4) is None and t.slots[I2] == ("stone", 64) and t.slots[I1] == ("stone", 2)


@pytest.mark.parametrize(
    ("slots", "move", "why"),
    [
        ({"I1": ("stone", 10), "I2": ("stone", 60)}, (I1, I2, 5), "at most 64"),  # no partial fill
        ({"I1": ("ender_pearl", 10), "I2": ("ender_pearl", 10)}, (I1, I2, 7), "at most 16"),
        ({"I1": ("milk_bucket", 1), "I2": ("milk_bucket", 1)}, (I1, I2, 1), "at most 1"),
        ({"I1": ("stone", 10), "I2": ("dirt", 1)}, (I1, I2, 1), "holds dirt"),
        ({"I1": ("stone", 3)}, (I1, I2, 4), "fewer than 4"),
        ({"I1": ("stone", 3)}, (I2, I3, 1), "is empty"),
        ({"I1": ("stone", 3)}, (I1, OUTPUT, 1), "into [0]"),
        ({"I1": ("stone", 3)}, (I1, I1, 1), "same slot"),
        ({"I1": ("stone", 3)}, (I1, I2, 0), "at least 1"),
    ],
)
def test_a_move_that_cannot_apply_changes_nothing(book, slots, move, why):
    t = table(book, **slots)
    before = dict(t.slots)
    problem = t.move(*move)
    assert problem is not None and why in problem
    assert t.slots == before


def test_taking_from_the_output_crafts_once_and_stacked_ingredients_allow_more_takes(book):
    t = table(book, A1=("oak_log", 3))
    assert t.slots[OUTPUT] == ("oak_planks", 4)
    assert t.move(OUTPUT, I1, 5) is not None and t.slots[A1] == ("oak_log", 3)  # more than the output: nothing
    assert t.move(OUTPUT, I1, 1) is None  # fewer than the output: the whole stack moves
    assert t.slots[I1] == ("oak_planks", 4) and t.slots[A1] == ("oak_log", 2) and t.slots[OUTPUT] == ("oak_planks", 4)
    assert t.move(OUTPUT, I1, 4) is None and t.slots[I1] == ("oak_planks", 8)
    assert t.move(OUTPUT, I1, 4) is None and A1 not in t.slots and OUTPUT not in t.slots


def test_the_output_can_be_moved_into_the_grid(book):
    t = table(book, A1=("oak_log", 1))
    assert t.move(OUTPUT, B2, 4) is None
    assert t.slots[B2] == ("oak_planks", 4) and A1 not in t.slots
    assert t.slots[OUTPUT] == ("oak_button", 1)  # the grid now holds one plank: the output is recomputed


def test_shaped_recipes_match_at_any_offset_with_tags_per_cell(book):
    for top, bottom in [(A1, B1), (A3, B3), (B2, C2)]:
        t = table(book)
        t.slots = {I1: ("oak_planks", 1), I2: ("birch_planks", 1)}
        assert t.move(I1, top, 1) is None and t.move(I2, bottom, 1) is None
        assert t.slots[OUTPUT] == ("stick", 4)
    t = table(book, A1=("oak_planks", 1), C1=("oak_planks", 1))  # a gap is a different pattern
    assert OUTPUT not in t.slots


def test_shaped_recipes_are_not_mirrored(book):
    axe = {"A1": ("cobblestone", 1), "A2": ("cobblestone", 1), "B1": ("cobblestone", 1)}
    handle = {"B2": ("stick", 1), "C2": ("stick", 1)}
    assert table(book, **axe, **handle).slots[OUTPUT] == ("stone_axe", 1)
    mirrored = {"A2": ("cobblestone", 1), "A3": ("cobblestone", 1), "B3": ("cobblestone", 1)}
    assert OUTPUT not in table(book, **mirrored, **handle).slots


def test_shapeless_recipes_are_exact_multisets_with_alternatives(book):
    charge = {"A1": ("gunpowder", 1), "C3": ("blaze_powder", 1)}
    assert table(book, **charge, B2=("coal", 1)).slots[OUTPUT] == ("fire_charge", 3)
    assert table(book, **charge, B2=("charcoal", 1)).slots[OUTPUT] == ("fire_charge", 3)
    assert OUTPUT not in table(book, **charge, B2=("coal", 1), B3=("coal", 1)).slots
    assert OUTPUT not in table(book, **charge).slots


def test_smelting_turns_n_inputs_into_n_outputs_without_fuel(book):
    t = table(book, I1=("iron_ore", 5), I2=("iron_ingot", 63))
    assert t.smelt(I1, I3, 3) is None
    assert t.slots[I1] == ("iron_ore", 2) and t.slots[I3] == ("iron_ingot", 3)
    assert "at most 64" in (t.smelt(I1, I2, 2) or "")  # 63 + 2 > 64: nothing, no partial fill
    assert t.slots[I1] == ("iron_ore", 2)
    assert t.smelt(I1, I2, 1) is None and t.slots[I2] == ("iron_ingot", 64) and t.slots[I1] == ("iron_ore", 1)


def test_smelting_refusals_change_nothing(book):
    t = table(book, I1=("stick", 2), I2=("iron_ore", 2), I3=("dirt", 1), A1=("oak_log", 1))
    before = dict(t.slots)
    assert "cannot be smelted" in (t.smelt(I1, 20, 1) or "")
    assert "holds dirt" in (t.smelt(I2, I3, 1) or "")
    assert "from [0]" in (t.smelt(OUTPUT, 20, 1) or "")
    assert t.slots == before


def test_smelting_into_the_grid_updates_the_output(book):
    t = table(book, I1=("oak_log", 1))
    assert t.smelt(I1, A1, 1) is None
    assert t.slots[A1] == ("charcoal", 1) and OUTPUT not in t.slots
    t = table(book, I1=("cobblestone", 1))
    assert t.smelt(I1, A1, 1) is None and t.slots[A1] == ("stone", 1) and t.slots[OUTPUT] == ("stone_button", 1)
