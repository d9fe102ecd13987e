"""The crafting table's state and Plancraft's two environment actions, ``move`` and ``smelt``.

Slots: 0 is the crafting output ``[0]``, 1-9 the grid ``[A1]``..``[C3]`` (row-major, letter = row), 10-45
the inventory ``[I1]``..``[I36]``. An action that cannot apply changes nothing, as in Plancraft; the
methods return why, for the log (and for agents that ask for feedback).

Unlike Plancraft's environment, the state never shares objects with the example it started from: slots
hold immutable ``(item, quantity)`` pairs, so an episode cannot change its task or a past observation.
"""

from collections import Counter
from collections.abc import Iterable, Mapping

from discogym.suites.crafting.recipes import Grid, RecipeBook

OUTPUT = 0
GRID = range(1, 10)
INVENTORY = range(10, 46)
ALL_SLOTS = range(46)
GRID_NAMES = ("A1", "A2", "A3", "B1", "B2", "B3", "C1", "C2", "C3")
SLOT_NAMES: tuple[str, ...] = ("[0]", *(f"[{g}]" for g in GRID_NAMES), *(f"[I{i}]" for i in range(1, 37)))
_INDEX = {name: i for i, name in enumerate(SLOT_NAMES)}

Stack = tuple[str, int]


def slot_name(index: int) -> str:
    """``0`` -> ``[0]``, ``1`` -> ``[A1]``, ``10`` -> ``[I1]``."""
    return SLOT_NAMES[index]


def slots_from_entries(entries: Iterable[Mapping[str, object]]) -> dict[int, Stack]:
    """A table from slot entries ``{"slot": "[I1]", "item": ..., "quantity": ...}`` (a task's ``slots``);
    ValueError for a slot name that is not one."""
    slots: dict[int, Stack] = {}
    for entry in entries:
        index = slot_index(str(entry["slot"]))
        if index is None:
            raise ValueError(f"bad slot {entry['slot']!r}")
        slots[index] = (str(entry["item"]), int(str(entry["quantity"])))
    return slots


def slot_index(name: str) -> int | None:
    """``[A1]`` (or ``A1``) -> 1; None for anything that is not a slot."""
    text = name.strip()
    if not text.startswith("["):
        text = f"[{text}]"
    return _INDEX.get(text)


class Table:
    """The 46 slots of one episode, with Plancraft's move and smelt semantics."""

    def __init__(self, book: RecipeBook, slots: Mapping[int, Stack]) -> None:
        self.book = book
        self.slots: dict[int, Stack] = {i: (item, n) for i, (item, n) in slots.items() if n > 0}
        self._consumed: tuple[int, ...] = ()
        self._recompute_output()

    def copy(self) -> "Table":
        """An independent copy (slots hold immutable pairs, so a shallow copy is enough)."""
        other = Table.__new__(Table)
        other.book = self.book
        other.slots = dict(self.slots)
        other._consumed = self._consumed
        return other

    def grid(self) -> Grid:
        """The nine grid cells' items, row-major."""
        return tuple(self.slots[i][0] if i in self.slots else None for i in GRID)

    def counts(self) -> Counter[str]:
        """How many of each item the table holds outside the output slot."""
        totals: Counter[str] = Counter()
        for index, (item, n) in self.slots.items():
            if index != OUTPUT:
                totals[item] += n
        return totals

    def has_item(self, item: str) -> bool:
        """Plancraft's success test: ``item`` in any slot other than ``[0]``."""
        return any(index != OUTPUT and held == item for index, (held, _) in self.slots.items())

    def move(self, source: int, target: int, quantity: int) -> str | None:
        """Move ``quantity`` items; None when it happened, else why nothing changed."""
        problem = self._check(source, target, quantity)
        if problem is not None:
            return problem
        item, held = self.slots[source]
        if source == OUTPUT:
            quantity = held  # taking from [0] always takes the whole output
        problem = self._put(target, item, quantity)
        if problem is not None:
            return problem
        self._take(source, quantity)
        if source == OUTPUT:
            self._use_ingredients()
        if source in GRID or target in GRID or source == OUTPUT:
            self._recompute_output()
        return None

    def smelt(self, source: int, target: int, quantity: int) -> str | None:
        """Smelt ``quantity`` items into as many outputs (no fuel); None when it happened, else why not."""
        problem = self._check(source, target, quantity)
        if problem is not None:
            return problem
        if source == OUTPUT:
            return "items cannot be smelted from [0]"
        item, _ = self.slots[source]
        recipe = self.book.smelt(item)
        if recipe is None:
            return f"{item} cannot be smelted"
        if target in self.slots:
            # Plancraft checks room in an occupied target only; an empty one takes any quantity.
            problem = self._put(target, recipe.result, quantity)
            if problem is not None:
                return problem
        else:
            self.slots[target] = (recipe.result, quantity)
        self._take(source, quantity)
        if source in GRID or target in GRID:
            self._recompute_output()
        return None

    def _check(self, source: int, target: int, quantity: int) -> str | None:
        if source == target:
            return "source and target are the same slot"
        if quantity < 1:
            return "quantity must be at least 1"
        if source not in ALL_SLOTS or target not in ALL_SLOTS:
            return "no such slot"
        if target == OUTPUT:
            return "nothing can be put into [0]"
        if source not in self.slots:
            return f"{slot_name(source)} is empty"
        item, held = self.slots[source]
        if held < quantity:
            return f"{slot_name(source)} holds {held} {item}, fewer than {quantity}"
        return None

    def _put(self, target: int, item: str, quantity: int) -> str | None:
        if target not in self.slots:
            self.slots[target] = (item, quantity)
            return None
        held_item, held = self.slots[target]
        if held_item != item:
            return f"{slot_name(target)} holds {held_item}, not {item}"
        limit = self.book.stack_size(item)
        if held + quantity > limit:
            return f"{slot_name(target)} would hold {held + quantity} {item}; at most {limit} fit in one slot"
        self.slots[target] = (item, held + quantity)
        return None

    def _take(self, source: int, quantity: int) -> None:
        item, held = self.slots[source]
        if held > quantity:
            self.slots[source] = (item, held - quantity)
        else:
            del self.slots[source]

    def _use_ingredients(self) -> None:
        for cell in self._consumed:
            self._take(cell + 1, 1)
        self._consumed = ()

    def _recompute_output(self) -> None:
        match = self.book.craft(self.grid())
        if match is None:
            self.slots.pop(OUTPUT, None)
            self._consumed = ()
            return
        recipe, used = match
        self.slots[OUTPUT] = (recipe.result, recipe.count)
        self._consumed = used
