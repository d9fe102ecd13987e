"""The instructions a language model gets in ``mode=suite``: Plancraft's system prompt and its two worked
examples, in our own words, with the same information, for the actions the condition offers."""

from discogym.suites.crafting import text

_INTRODUCTION = """You are crafting in Minecraft and choose one action at a time.

The crafting grid has 3x3 slots, named by row letter and column number:
    top row [A1] [A2] [A3], middle row [B1] [B2] [B3], bottom row [C1] [C2] [C3].
When the items in the grid form a recipe, its result appears in the output slot [0]. Nothing can be moved
or smelted into [0].

Inventory slots, outside the grid, hold the other items; they are named [I1] to [I36]."""

_RULES = """Examples of actions:
    - `move: from [I2] to [A1] with quantity 3`
    - `smelt: from [I5] to [I6] with quantity 1`

Rules:
    - You cannot move or smelt items into [0].
    - If nothing appears in [0], the items in the grid are not a recipe.
    - Crafting is only complete once you move the result from [0] to a free inventory slot.

Answer with exactly one action per message, in the format above."""

_IMAGE_NOTE = """
You see the crafting table as a picture: the grid on the left, [0] to its right, the inventory below, with
item counts drawn on the stacks."""

_PERCEPTION_NOTE = """ With each picture comes the inventory as a perception module reads it from the
picture, in the text form of the examples below; the module can misread an item that looks like another."""


def _introduction(images: bool, perception: bool) -> str:
    if not images:
        return _INTRODUCTION
    return _INTRODUCTION + _IMAGE_NOTE + (_PERCEPTION_NOTE if perception else "")


# The two worked examples: observations and the answers that solve them (andesite by hand, iron by smelting).
_OBSERVATIONS = (
    "Craft an item of type: andesite\ninventory:\n - diorite [I18] quantity 1\n - cobblestone [I30] quantity 1",
    "Craft an item of type: andesite\ninventory:\n - diorite [B1] quantity 1\n - cobblestone [I30] quantity 1",
    "Craft an item of type: andesite\ninventory:\n - andesite [0] quantity 1\n - diorite [B1] quantity 1\n"
    " - cobblestone [B2] quantity 1",
    "Craft an item of type: iron_ingot\ninventory:\n - iron_ore [I36] quantity 1\n - cobblestone [I30] quantity 1",
)
_ACTIONS = (
    "move: from [I18] to [B1] with quantity 1",
    "move: from [I30] to [B2] with quantity 1",
    "move: from [0] to [I6] with quantity 1",
    "smelt: from [I36] to [I35] with quantity 1",
)
_THOUGHTS = (
    "think: Andesite takes one diorite and one cobblestone side by side; I start with the diorite.",
    "think: The cobblestone goes to [B2], to the right of the diorite.",
    "think: The andesite is in [0]; moving it to a free inventory slot crafts it.",
    "think: Iron ingots come from smelting iron ore into an empty slot.",
)
_EXAMPLE_STARTS = (0, 3)
_SEARCHES = ("search: andesite", None, None, "search: iron_ingot")
_SEARCH_RESULTS = {
    "search: andesite": "Recipes to craft andesite:\nrecipe 1:\ndiorite at [B1]\ncobblestone at [B2]",
    "search: iron_ingot": "Recipes to craft iron_ingot:\nrecipe 1:\nsmelt iron_ore",
}


def _worked_examples(actions: tuple[str, ...]) -> str:
    lines: list[str] = []
    for step in range(len(_OBSERVATIONS)):
        if step in _EXAMPLE_STARTS:
            lines.append(f"\nExample {_EXAMPLE_STARTS.index(step) + 1}:")
        lines.append(f"[you see]\n{_OBSERVATIONS[step]}")
        search = _SEARCHES[step]
        if "search" in actions and search is not None:
            lines += [f"[you answer] {search}", f"[you see]\n{_SEARCH_RESULTS[search]}"]
        if "think" in actions:
            lines += [f"[you answer] {_THOUGHTS[step]}", "[you see]\nOk"]
        lines.append(f"[you answer] {_ACTIONS[step]}")
    return "\n".join(lines)


def example_dialogue(actions: tuple[str, ...]) -> list[tuple[str, str]]:
    """The worked examples as a dialogue: (what the agent sees, what it answers) pairs, searching and thinking
    where the condition offers those actions (with both, the 10 pairs of Plancraft's few-shot demonstration)."""
    pairs: list[tuple[str, str]] = []
    for step in range(len(_OBSERVATIONS)):
        seen = _OBSERVATIONS[step]
        search = _SEARCHES[step]
        if "search" in actions and search is not None:
            pairs.append((seen, search))
            seen = _SEARCH_RESULTS[search]
        if "think" in actions:
            pairs.append((seen, _THOUGHTS[step]))
            seen = "Ok"
        pairs.append((seen, _ACTIONS[step]))
    return pairs


def system_prompt(
    actions: tuple[str, ...], *, images: bool = False, perception: bool = False, examples: bool = True
) -> str:
    """The system prompt for the actions a condition offers; ``examples=False`` leaves the worked examples out
    (for a scaffold that shows them as a dialogue instead, :func:`example_dialogue`)."""
    described = "\n".join(f"    - {name}: {text.DESCRIPTIONS[name]}" for name in actions)
    formats = "\n".join(f"    - {text.FORMATS[name]}" for name in actions)
    parts = [
        _introduction(images, perception),
        f"Actions:\n{described}",
        f"Format:\n{formats}",
        _RULES,
    ]
    if examples:
        parts.append(
            "Two worked examples (each [you answer] line is one whole message of yours):" + _worked_examples(actions)
        )
    return "\n\n".join(parts)


_TOOL_RULES = """Act by calling the tools, one call at a time. Slots are written as above, e.g. slot_from="[I2]".

Rules:
    - [0] is the output slot: you cannot move or smelt items into it.
    - If nothing appears in [0], the items in the grid are not a recipe.
    - Crafting is only complete once you move the result out of [0] to a free inventory slot, e.g.
      move(slot_from="[0]", slot_to="[I6]", quantity=1)."""


def tool_prompt(*, images: bool = False, perception: bool = False) -> str:
    """Plancraft's introduction and rules for a model that acts through the tools (native tool calling, MCP)."""
    return "\n\n".join([_introduction(images, perception), _TOOL_RULES])
