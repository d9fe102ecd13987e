"""The ``wiki-planner`` agent: the planner, but it learns recipes only by calling the wiki ``search`` tool.

It knows the table (target and slots, as the observation shows them) and the game's item list and stack sizes
(the item registry, no recipes). Recipes come only from the text of the pages its searches returned, read back
with :func:`~discogym.suites.crafting.wiki.parse_page`. Each turn it tries the planner's search over the recipes
read so far. While there is no plan it searches one more item, breadth first from the target over the recipes
read, in this order: an ingredient it lacks (a cell none of whose accepted items is held or makeable from what is
held with the recipes read), then a held ingredient whose page it has not read, then another accepted item of a
cell it can fill (what is held may be too few), then what a held ingredient is made of; within each, items
sharing more distinguishing words with held items first (acacia_planks beside acacia_log), then shallower, then
in the item list's order. With nothing left to search,
or the step budget spent, it calls ``impossible``.
"""

from collections.abc import Iterator, Sequence

from discogym.core import Agent, AgentContext, AgentDecision, ToolCall, Turn, UserError
from discogym.suites.crafting.data import raw_data
from discogym.suites.crafting.env import MAX_STEPS
from discogym.suites.crafting.planner import PlanError, PlannedAction, make_plan
from discogym.suites.crafting.recipes import Recipe, ShapedRecipe, ShapelessRecipe, book_of
from discogym.suites.crafting.state import Stack, slots_from_entries
from discogym.suites.crafting.wiki import parse_page, split_pages

SPARE_STEPS = 1  # keep a step for ``impossible``


def _groups(recipe: Recipe) -> Iterator[tuple[str, ...]]:
    """The ingredient choices of a recipe: one group of accepted items per cell; for a shapeless recipe, each
    item every variant needs, and one group of the items the variants differ in."""
    if isinstance(recipe, ShapedRecipe):
        for row in recipe.kernel:
            for cell in row:
                if cell is not None:
                    yield tuple(sorted(cell))
    elif isinstance(recipe, ShapelessRecipe):
        sets = [{item for item, _ in variant} for variant in recipe.variants]
        common = set.intersection(*sets)
        yield from ((item,) for item in sorted(common))
        varying = set.union(*sets) - common
        if varying:
            yield tuple(sorted(varying))
    else:
        yield tuple(sorted(recipe.ingredients))


class WikiPlannerAgent(Agent):
    """Searches the wiki for what it needs, then plays the planner's plan over the recipes it read."""

    def __init__(self) -> None:
        self.target = ""
        self.slots: dict[int, Stack] = {}
        self.read: dict[str, tuple[Recipe, ...]] = {}
        self.searched: set[str] = set()
        self.actions: list[PlannedAction] = []
        self.planned = False
        self.absorbed = 0
        self.can_give_up = False

    def start(self, context: AgentContext) -> None:
        hints = context.hints
        if "target" not in hints or "slots" not in hints:
            raise UserError("the wiki-planner agent plays only the crafting suite's own tasks")
        if not any(spec.name == "search" and "wiki" in spec.description for spec in context.tools):
            raise UserError("the wiki-planner agent needs the wiki's search tool: use --condition wiki")
        self.target = str(hints["target"])
        self.slots = slots_from_entries(hints["slots"])
        self.can_give_up = any(spec.name == "impossible" for spec in context.tools)
        registry = raw_data()  # the item list and stack sizes only
        self.items, self.stack_sizes = registry.items, registry.stack_sizes

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        for turn in history[self.absorbed :]:
            if turn.call.tool == "search" and turn.result.ok:
                for text in split_pages(turn.result.text):
                    page = parse_page(text)
                    self.read[page.item] = page.recipes
        self.absorbed = len(history)
        if not self.planned:
            plan = self._plan()
            if plan is not None:
                self.planned, self.actions = True, plan
            else:
                wanted = self._next_search() if len(history) < MAX_STEPS - SPARE_STEPS else None
                if wanted is not None:
                    self.searched.add(wanted)
                    return AgentDecision(call=ToolCall(tool="search", args={"item": wanted}))
                if self.can_give_up:
                    self.planned = True
                    return AgentDecision(
                        call=ToolCall(tool="impossible", args={"reason": "no recipe found reaches it"})
                    )
                return AgentDecision(message="no plan reaches the target from the recipes found")
        if not self.actions:
            return AgentDecision(message="the plan is finished")
        step = self.actions.pop(0)
        return AgentDecision(call=ToolCall(tool=step.action, args=step.args()))

    def _plan(self) -> list[PlannedAction] | None:
        if self.target not in self.read:
            return None
        recipes = [recipe for item in sorted(self.read) for recipe in self.read[item]]
        book = book_of(self.items, self.stack_sizes, recipes)
        try:
            plan = make_plan(book, self.target, self.slots)
        except PlanError:
            return None
        return None if plan is None else list(plan.actions)

    def _available(self, held: set[str]) -> set[str]:
        """The items held or makeable from them with the recipes read, quantities ignored."""
        available = set(held)
        grew = True
        while grew:
            grew = False
            for item, recipes in self.read.items():
                if item in available:
                    continue
                if any(all(set(group) & available for group in _groups(recipe)) for recipe in recipes):
                    available.add(item)
                    grew = True
        return available

    def _next_search(self) -> str | None:
        """The next item to look up, or None when every lead is spent."""
        if self.target not in self.read:
            return None if self.target in self.searched else self.target
        held = {item for item, _ in self.slots.values()}
        available = self._available(held)
        words = {word for item in held for word in item.split("_")}
        order = {item: i for i, item in enumerate(self.items)}
        # (kind, -words shared with held items, depth, item order, item); kinds: 0 lacking, 1 held but unread,
        # 2 another accepted item of a cell that can be filled, 3 a lacking item under a held one. Shared words
        # leave out those every accepted item of the cell has ("planks" of any planks).
        candidates: list[tuple[int, int, int, int, str]] = []
        seen = {self.target}
        frontier = [self.target]
        depth = 0
        while frontier:
            following: list[str] = []
            for item in frontier:
                for recipe in self.read.get(item, ()):
                    for group in _groups(recipe):
                        covered = any(choice in available for choice in group)
                        common = set.intersection(*(set(choice.split("_")) for choice in group))
                        for choice in group:
                            if choice not in self.read and choice not in self.searched:
                                kind = 1 if choice in held else 2 if covered else 3 if item in held else 0
                                shared = len((set(choice.split("_")) - common) & words)
                                candidates.append((kind, -shared, depth, order.get(choice, len(order)), choice))
                            if choice in self.read and choice not in seen:
                                seen.add(choice)
                                following.append(choice)
            frontier = following
            depth += 1
        return min(candidates)[-1] if candidates else None
