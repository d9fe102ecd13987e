"""Plancraft's text interface: observations, the action syntax, its error messages and the oracle search.

Syntax (as in Plancraft's prompt): ``move: from [I18] to [B1] with quantity 1``, ``smelt: from [I5] to [I6]
with quantity 1``, ``think: ...``, ``search: <item>``, ``impossible: <reason>``. A message is read as the
action whose ``name:`` comes first in it. Messages that are no action, or an action whose parts cannot be
read, are answered with Plancraft's messages and count as a step, as in Plancraft; unlike Plancraft, a
move whose slots cannot be found gets the correct-format message rather than a Python error.
"""

import re
from collections.abc import Mapping

import numpy as np

from discogym.core import ToolCall
from discogym.core.model.tools import unreadable
from discogym.suites.crafting.recipes import RecipeBook, ShapedRecipe, ShapelessRecipe
from discogym.suites.crafting.state import GRID_NAMES, Stack, Table, slot_index, slot_name

ACTION_ORDER = ("move", "smelt", "think", "search", "impossible")
SLOT_ACTIONS = ("move", "smelt")
FORMATS = {
    "move": "`move: from [Source] to [Target] with quantity N`",
    "smelt": "`smelt: from [Source] to [Target] with quantity N`",
    "think": "`think: <thought message>`",
    "search": "`search: <recipe name>`",
    "impossible": "`impossible: <reason>`",
}
DESCRIPTIONS = {
    "move": "Transfer a specific quantity of an item from one slot to another",
    "smelt": "Smelt an item in a furnace and move the output to a specific slot",
    "think": "Generate thoughts to help you decide on the next action",
    "search": "Search for recipes to craft a specific item",
    "impossible": "Stop the task if it is certain that it is impossible with the given inventory",
}
SLOTS_MESSAGE = "[Source] and [Target] must be [0] or [A1] to [C3] or [I1] to [I36]"
NOT_FOUND = "Could not find a recipe by that name."

_GRID_INDEX = {f"[{name}]": i for i, name in enumerate(GRID_NAMES, start=1)} | {"[0]": 0}
_INVENTORY_SLOT = re.compile(r"\[I([1-9][0-9]?)\]")
_SOURCE = re.compile(r" from (\[[ABCI]?\d+\])")
_TARGET = re.compile(r" to (\[[ABCI]?\d+\])")
_QUANTITY = re.compile(r"with quantity (\d+)")
_SEARCH = re.compile(r"search:\s*(\w+)")


def objective(target: str) -> str:
    """The first line of every observation."""
    return f"Craft an item of type: {target}"


def observation(target: str, table: Table | Mapping[int, Stack]) -> str:
    """Plancraft's text observation: the objective, then one line per occupied slot in slot order (of a
    table, or of slots read from its picture)."""
    slots = table.slots if isinstance(table, Table) else table
    lines = [objective(target), "inventory:"]
    lines += [f" - {slots[index][0]} {slot_name(index)} quantity {slots[index][1]}" for index in sorted(slots)]
    return "\n".join(lines)


_INVENTORY_LINE = re.compile(r"^ - (\S+) (\[[^\]]+\]) quantity (\d+)$")


def read_observation(shown: str) -> dict[int, Stack] | None:
    """The slots an :func:`observation` lists, or None when the text has no inventory (image conditions)."""
    lines = shown.splitlines()
    if "inventory:" not in lines:
        return None
    slots: dict[int, Stack] = {}
    for line in lines[lines.index("inventory:") + 1 :]:
        match = _INVENTORY_LINE.match(line)
        index = slot_index(match.group(2)) if match else None
        if match is None or index is None:
            raise ValueError(f"not an inventory line: {line!r}")
        slots[index] = (match.group(1), int(match.group(3)))
    return slots


def format_error(action: str, reason: str) -> str:
    """Plancraft's message for an action that was recognised but malformed."""
    return f"Format Error: {reason}. Correct format: {FORMATS[action]}"


def only_select(actions: tuple[str, ...]) -> str:
    """Plancraft's answer to a message that is no action."""
    return f"Only select actions from the following: {', '.join(actions)}"


def _slot_number(text: str) -> int | None:
    """Plancraft's reading of a slot: grid names, [0], or [I<n>] for any n from 1 to 99 (checked later)."""
    name = text.strip()
    if not name.startswith("["):
        name = f"[{name}]"
    if name in _GRID_INDEX:
        return _GRID_INDEX[name]
    found = _INVENTORY_SLOT.fullmatch(name)
    return int(found.group(1)) + 9 if found else None


_SOURCE_SLOTS = "[0] or [A1] to [C3] or [I1] to [I36]"
_TARGET_SLOTS = "[A1] to [C3] or [I1] to [I36]"


def _slot_problem(action: str, source: int | None, target: int | None, quantity: int) -> tuple[str, str] | None:
    """What is wrong with a move or smelt, as (Plancraft's format error, the same for a tool call), or None."""
    if source is None or target is None:
        argument = "slot_from" if source is None else "slot_to"
        accepted = _SOURCE_SLOTS if source is None else _TARGET_SLOTS
        return SLOTS_MESSAGE, f"argument '{argument}' is not a slot: use {accepted}"
    if source == target:
        return "[Source] and [Target] must be different", "arguments 'slot_from' and 'slot_to' are the same slot"
    if source > 45:
        return f"[Source] must be {_SOURCE_SLOTS}", f"argument 'slot_from' must be {_SOURCE_SLOTS}"
    if target == 0:
        return f"You cannot {action} items into [0]", "argument 'slot_to' cannot be [0], the output slot"
    if target > 45:
        return f"[Target] must be {_TARGET_SLOTS}", f"argument 'slot_to' must be {_TARGET_SLOTS}"
    if not 1 <= quantity <= 64:
        return "quantity must be between 1 and 64", "argument 'quantity' must be between 1 and 64"
    return None


def check_slot_action(
    action: str, source_text: str, target_text: str, quantity: int, *, tool_call: bool = False
) -> tuple[int, int] | str:
    """The slot indices of a move or smelt, or what is wrong with it: Plancraft's format error (for its text
    syntax), or with ``tool_call`` a message that names the tool's argument."""
    source, target = _slot_number(source_text), _slot_number(target_text)
    problem = _slot_problem(action, source, target, quantity)
    if problem is None and source is not None and target is not None:
        return source, target
    assert problem is not None
    text_message, tool_message = problem
    return f"{action}: {tool_message}" if tool_call else format_error(action, text_message)


def format_action(call: ToolCall) -> str:
    """A call in Plancraft's syntax (what :func:`parse_action` reads back): move, smelt, think, search or
    impossible."""
    args = call.args if isinstance(call.args, dict) else {}
    if call.tool == "think":
        return f"think: {args.get('thought', '')}"
    if call.tool == "search":
        return f"search: {args.get('item', '')}"
    if call.tool == "impossible":
        return f"impossible: {args.get('reason', '')}"
    return f"{call.tool}: from {args.get('slot_from')} to {args.get('slot_to')} with quantity {args.get('quantity')}"


def parse_action(text: str, actions: tuple[str, ...]) -> ToolCall:
    """A message in Plancraft's syntax as a tool call (or an unreadable-message call carrying the reply)."""
    found = [(hit.start(), name) for name in actions if (hit := re.search(f"{name}:", text))]
    if not found:
        return unreadable(only_select(actions))
    start, name = min(found)
    rest = text[start:]
    if name in SLOT_ACTIONS:
        parts = [pattern.search(rest) for pattern in (_SOURCE, _TARGET, _QUANTITY)]
        if any(part is None for part in parts):
            return unreadable(format_error(name, "the action needs a [Source], a [Target] and a quantity"))
        source, target, quantity = (part.group(1) for part in parts if part is not None)
        checked = check_slot_action(name, source, target, int(quantity))
        if isinstance(checked, str):  # Plancraft's format error, answered as a step
            return unreadable(checked)
        return ToolCall(tool=name, args={"slot_from": source, "slot_to": target, "quantity": int(quantity)})
    if name == "search":
        wanted = _SEARCH.search(rest)
        if wanted is None:
            return unreadable(format_error(name, "the action needs an item name"))
        return ToolCall(tool="search", args={"item": wanted.group(1)})
    body = rest[len(name) + 1 :].strip()
    if name == "think":
        return ToolCall(tool="think", args={"thought": body})
    return ToolCall(tool="impossible", args={"reason": body})


def search_recipes(book: RecipeBook, item: str, rng: np.random.Generator) -> str:
    """The oracle retriever: every recipe for ``item``, each with one concrete layout drawn from ``rng``."""
    recipes = book.by_result.get(item)
    if not recipes:
        return NOT_FOUND
    lines = [f"Recipes to craft {item}:"]
    for number, recipe in enumerate(recipes, start=1):
        lines.append(f"recipe {number}:")
        if isinstance(recipe, ShapedRecipe):
            lines += [f"{name} at {slot_name(cell)}" for cell, name in _shaped_layout(recipe, rng)]
        elif isinstance(recipe, ShapelessRecipe):
            lines += [f"{name} at {slot_name(cell)}" for cell, name in _shapeless_layout(recipe, rng)]
        else:
            lines.append(f"smelt {' or '.join(sorted(recipe.ingredients))}")
    return "\n".join(lines)


def _shaped_layout(recipe: ShapedRecipe, rng: np.random.Generator) -> list[tuple[int, str]]:
    offsets = [(top, left) for top in range(4 - recipe.height) for left in range(4 - recipe.width)]
    top, left = offsets[int(rng.integers(len(offsets)))]
    layout = []
    for row, cells in enumerate(recipe.kernel):
        for col, accepted in enumerate(cells):
            if accepted is not None:
                choices = sorted(accepted)
                layout.append(((top + row) * 3 + left + col + 1, choices[int(rng.integers(len(choices)))]))
    return layout


def _shapeless_layout(recipe: ShapelessRecipe, rng: np.random.Generator) -> list[tuple[int, str]]:
    variant = recipe.variants[int(rng.integers(len(recipe.variants)))]
    items = [item for item, n in variant for _ in range(n)]
    cells = sorted(int(c) + 1 for c in rng.choice(9, size=len(items), replace=False))
    return list(zip(cells, items, strict=True))
