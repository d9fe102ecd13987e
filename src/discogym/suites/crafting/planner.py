"""Plancraft's planner: the shortest sequence of recipe applications, then the moves and smelts that make it.

The recipe-level search is a breadth-first search over item counts (only the target and the items it can
be made from count), so its first plan is a shortest one; smelting counts once per unit, as in Plancraft.
As in Plancraft's planner, an item is not crafted again while 9 or more of it are held, and a recipe whose
cells accept several items uses, cell by cell, the first accepted item still held (in the item list's
order). Both rules are part of what the dataset's ``optimal_path_length`` means. The search is exhaustive
and deterministic; it has a state budget instead of Plancraft's wall-clock timeout.

Each recipe application is then laid out on the table: clear the grid cells the recipe does not want,
put one of each ingredient in place (at the top-left for shaped recipes), and take the output from
``[0]``; a smelt is one ``smelt`` action into a free slot. Every action is checked on a real
:class:`~discogym.suites.crafting.state.Table` as it is made.
"""

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from discogym.suites.crafting.recipes import (
    Recipe,
    RecipeBook,
    ShapedRecipe,
    ShapelessRecipe,
    SmeltingRecipe,
)
from discogym.suites.crafting.state import GRID, INVENTORY, OUTPUT, Stack, Table, slot_name

MAX_HELD_BEFORE_SKIPPING = 9
STATE_BUDGET = 200_000


class PlanError(Exception):
    """The planner could not lay a recipe out on the table (a bug, or a table too full to work in)."""


@dataclass(frozen=True)
class PlannedAction:
    """One environment action of a plan."""

    action: str  # "move" or "smelt"
    source: int
    target: int
    quantity: int

    def args(self) -> dict[str, object]:
        """The tool arguments of this action."""
        return {"slot_from": slot_name(self.source), "slot_to": slot_name(self.target), "quantity": self.quantity}

    def text(self) -> str:
        """The action in Plancraft's syntax."""
        return f"{self.action}: from {slot_name(self.source)} to {slot_name(self.target)} with quantity {self.quantity}"


@dataclass(frozen=True)
class Plan:
    """The recipes applied, in order, and the environment actions that apply them."""

    recipes: tuple[Recipe, ...]
    actions: tuple[PlannedAction, ...]

    @property
    def path(self) -> list[str]:
        """The items made, one per recipe application (the dataset's ``optimal_path``)."""
        return [recipe.result for recipe in self.recipes]


class RecipeGraph:
    """Which items each item can be made from, for restricting the search to what matters."""

    def __init__(self, book: RecipeBook) -> None:
        self.book = book
        self.made_from: dict[str, set[str]] = {}
        for recipe in book.recipes:
            self.made_from.setdefault(recipe.result, set()).update(recipe.inputs)

    @cache  # noqa: B019 - one graph per process, kept for its lifetime
    def ancestors(self, target: str) -> frozenset[str]:
        """Every item that can take part in making ``target``."""
        seen: set[str] = set()
        todo = [target]
        while todo:
            for item in self.made_from.get(todo.pop(), ()):
                if item not in seen:
                    seen.add(item)
                    todo.append(item)
        seen.discard(target)
        return frozenset(seen)


@cache
def recipe_graph(book: RecipeBook) -> RecipeGraph:
    """The graph of a recipe book, built once."""
    return RecipeGraph(book)


def consumption(recipe: Recipe, held: Mapping[str, int], order: Mapping[str, int]) -> list[str] | None:
    """The items one application of ``recipe`` uses (one per filled cell, row-major), or None if not held."""
    remaining = Counter(held)
    if isinstance(recipe, ShapelessRecipe):
        for variant in recipe.variants:
            if all(remaining[item] >= n for item, n in variant):
                return [item for item, n in variant for _ in range(n)]
        return None
    cells: Iterable[frozenset[str]]
    if isinstance(recipe, SmeltingRecipe):
        cells = [recipe.ingredients]
    else:
        cells = [cell for row in recipe.kernel for cell in row if cell is not None]
    used: list[str] = []
    for cell in cells:
        choice = next((item for item in sorted(cell, key=order.__getitem__) if remaining[item] > 0), None)
        if choice is None:
            return None
        remaining[choice] -= 1
        used.append(choice)
    return used


class RecipeSearch:
    """Breadth-first search for the fewest recipe applications that make one ``target`` item."""

    def __init__(self, book: RecipeBook, target: str, held: Mapping[str, int]) -> None:
        self.book = book
        self.target = target
        self.order = {item: i for i, item in enumerate(book.items)}
        graph = recipe_graph(book)
        relevant = graph.ancestors(target) | {target}
        self.items = sorted(relevant, key=lambda item: (self.order.get(item, len(self.order)), item))
        self.position = {item: i for i, item in enumerate(self.items)}
        self.recipes = [r for item in self.items for r in book.by_result.get(item, ())]
        self.start = tuple(held.get(item, 0) for item in self.items)

    def reachable(self) -> bool:
        """Whether the target can be made at all, ignoring quantities (a cheap test before the search)."""
        available = {item for item, n in zip(self.items, self.start, strict=True) if n > 0}
        grew = True
        while grew and self.target not in available:
            grew = False
            for recipe in self.recipes:
                if recipe.result not in available and self._feasible_ignoring_counts(recipe, available):
                    available.add(recipe.result)
                    grew = True
        return self.target in available

    @staticmethod
    def _feasible_ignoring_counts(recipe: Recipe, available: set[str]) -> bool:
        if isinstance(recipe, ShapelessRecipe):
            return any(all(item in available for item, _ in variant) for variant in recipe.variants)
        if isinstance(recipe, SmeltingRecipe):
            return bool(recipe.ingredients & available)
        return all(cell & available for row in recipe.kernel for cell in row if cell is not None)

    def run(self) -> list[Recipe] | None:
        """The recipes of a shortest plan, or None when the target cannot be made."""
        goal = self.position[self.target]
        if self.start[goal] > 0:
            return []
        if not self.reachable():
            return None
        parents: dict[tuple[int, ...], tuple[tuple[int, ...], Recipe] | None] = {self.start: None}
        frontier = deque([self.start])
        while frontier:
            state = frontier.popleft()
            for recipe, after in self._successors(state):
                if after in parents:
                    continue
                parents[after] = (state, recipe)
                if after[goal] > 0:
                    return self._path(parents, after)
                if len(parents) > STATE_BUDGET:
                    raise PlanError(f"the search for {self.target} exceeded {STATE_BUDGET} states")
                frontier.append(after)
        return None

    def _successors(self, state: tuple[int, ...]) -> Iterable[tuple[Recipe, tuple[int, ...]]]:
        held = {item: n for item, n in zip(self.items, state, strict=True) if n > 0}
        for recipe in self.recipes:
            if held.get(recipe.result, 0) >= MAX_HELD_BEFORE_SKIPPING:
                continue
            used = consumption(recipe, held, self.order)
            if used is None:
                continue
            after = list(state)
            for item in used:
                after[self.position[item]] -= 1
            after[self.position[recipe.result]] += recipe.count
            yield recipe, tuple(after)

    @staticmethod
    def _path(
        parents: Mapping[tuple[int, ...], tuple[tuple[int, ...], Recipe] | None], end: tuple[int, ...]
    ) -> list[Recipe]:
        recipes: list[Recipe] = []
        link = parents[end]
        while link is not None:
            state, recipe = link
            recipes.append(recipe)
            link = parents[state]
        return recipes[::-1]


def plan_recipes(book: RecipeBook, target: str, held: Mapping[str, int]) -> list[Recipe] | None:
    """A shortest list of recipe applications that makes ``target`` from ``held``, or None."""
    return RecipeSearch(book, target, held).run()


class Layout:
    """Turns recipe applications into actions on a simulated table."""

    def __init__(self, book: RecipeBook, slots: Mapping[int, Stack]) -> None:
        self.book = book
        self.table = Table(book, slots)
        self.order = {item: i for i, item in enumerate(book.items)}
        self.actions: list[PlannedAction] = []

    def apply(self, recipe: Recipe) -> None:
        """Append the actions of one application of ``recipe``."""
        used = consumption(recipe, self.table.counts(), self.order)
        if used is None:
            raise PlanError(f"the table does not hold the ingredients of {recipe.name}")
        if isinstance(recipe, SmeltingRecipe):
            source = self._source(used[0], wanted={})
            self._do("smelt", source, self._free_slot(recipe.result, 1), 1)
            return
        wanted = self._cells(recipe, used)
        for cell in GRID:
            held = self.table.slots.get(cell)
            if held is not None and wanted.get(cell) != held[0]:
                self._do("move", cell, self._free_slot(held[0], held[1]), held[1])
        for cell, item in sorted(wanted.items()):
            if cell not in self.table.slots:
                self._do("move", self._source(item, wanted), cell, 1)
        made = self.table.slots.get(OUTPUT)
        if made is None or made[0] != recipe.result:
            raise PlanError(f"the grid laid out for {recipe.name} makes {made[0] if made else 'nothing'}")
        self._do("move", OUTPUT, self._free_slot(made[0], made[1]), made[1])

    def _cells(self, recipe: ShapedRecipe | ShapelessRecipe, used: list[str]) -> dict[int, str]:
        """Which grid slot gets which item: a shaped pattern at the top-left; a shapeless multiset where
        the grid already holds its items, the rest in the first empty cells."""
        if isinstance(recipe, ShapedRecipe):
            filled = [(r, c) for r, row in enumerate(recipe.kernel) for c, cell in enumerate(row) if cell is not None]
            return {r * 3 + c + 1: item for (r, c), item in zip(filled, used, strict=True)}
        needed = Counter(used)
        wanted: dict[int, str] = {}
        for cell in GRID:
            held = self.table.slots.get(cell)
            if held is not None and needed[held[0]] > 0:
                wanted[cell] = held[0]
                needed[held[0]] -= 1
        free = (cell for cell in GRID if cell not in wanted)
        for item in sorted(needed.elements(), key=self.order.__getitem__):
            wanted[next(free)] = item
        return wanted

    def _source(self, item: str, wanted: Mapping[int, str]) -> int:
        """A slot to take one ``item`` from: the inventory first, else a grid cell holding spares."""
        for slot in INVENTORY:
            if self.table.slots.get(slot, ("", 0))[0] == item:
                return slot
        for slot in GRID:
            held = self.table.slots.get(slot)
            if held is not None and held[0] == item and (held[1] > 1 or wanted.get(slot) != item):
                return slot
        raise PlanError(f"no {item} left to take")

    def _free_slot(self, item: str, quantity: int) -> int:
        """An inventory slot that can take ``quantity`` more ``item``: a stack with room, else the first empty."""
        limit = self.book.stack_size(item)
        for slot in INVENTORY:
            held = self.table.slots.get(slot)
            if held is not None and held[0] == item and held[1] + quantity <= limit:
                return slot
        for slot in INVENTORY:
            if slot not in self.table.slots:
                return slot
        raise PlanError("the inventory is full")

    def _do(self, action: str, source: int, target: int, quantity: int) -> None:
        step = PlannedAction(action, source, target, quantity)
        run = self.table.move if action == "move" else self.table.smelt
        problem = run(source, target, quantity)
        if problem is not None:
            raise PlanError(f"{step.text()} failed: {problem}")
        self.actions.append(step)


def make_plan(book: RecipeBook, target: str, slots: Mapping[int, Stack]) -> Plan | None:
    """The planner's plan for a table, or None when the target cannot be made from it."""
    held = Table(book, slots).counts()
    recipes = plan_recipes(book, target, held)
    if recipes is None:
        return None
    layout = Layout(book, slots)
    for recipe in recipes:
        layout.apply(recipe)
    return Plan(tuple(recipes), tuple(layout.actions))
