"""Minecraft 1.16 crafting and smelting recipes as Plancraft uses them, and fast matching of a 3x3 grid.

A grid is a tuple of nine item names (``None`` for an empty cell), row-major: A1 A2 A3 B1 ... C3.
Shaped recipes match at any offset, without mirroring, with a set of accepted items per cell; shapeless
recipes match an exact multiset; smelting turns one input into one output. Matching looks only at the
recipes that use the grid's first item with the grid's number of filled cells, never at every recipe.
"""

import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from discogym.suites.crafting.data import RawData, raw_data, strip_namespace

Grid = tuple[str | None, ...]
RecipeKind = Literal["shaped", "shapeless", "smelting"]


@dataclass(frozen=True)
class ShapedRecipe:
    """A pattern of cells, each either empty (``None``) or a set of accepted items, placed anywhere."""

    name: str
    result: str
    count: int
    kernel: tuple[tuple[frozenset[str] | None, ...], ...]
    kind: RecipeKind = "shaped"

    @property
    def height(self) -> int:
        return len(self.kernel)

    @property
    def width(self) -> int:
        return len(self.kernel[0])

    @property
    def filled_cells(self) -> int:
        return sum(cell is not None for row in self.kernel for cell in row)

    @property
    def inputs(self) -> frozenset[str]:
        return frozenset(item for row in self.kernel for cell in row if cell for item in cell)

    def match(self, grid: Grid) -> tuple[int, ...] | None:
        """The grid cells the recipe consumes, or None if the grid is not this recipe at any offset."""
        for top in range(4 - self.height):
            for left in range(4 - self.width):
                used = self._match_at(grid, top, left)
                if used is not None:
                    return used
        return None

    def _match_at(self, grid: Grid, top: int, left: int) -> tuple[int, ...] | None:
        used: list[int] = []
        for index, item in enumerate(grid):
            row, col = divmod(index, 3)
            inside = top <= row < top + self.height and left <= col < left + self.width
            cell = self.kernel[row - top][col - left] if inside else None
            if cell is None:
                if item is not None:
                    return None
            elif item not in cell:
                return None
            else:
                used.append(index)
        return tuple(used)


@dataclass(frozen=True)
class ShapelessRecipe:
    """Ingredients in any cells: one of ``variants`` (sorted item-count pairs) exactly."""

    name: str
    result: str
    count: int
    variants: tuple[tuple[tuple[str, int], ...], ...]
    kind: RecipeKind = "shapeless"

    @property
    def filled_cells(self) -> int:
        return sum(n for _, n in self.variants[0])

    @property
    def inputs(self) -> frozenset[str]:
        return frozenset(item for variant in self.variants for item, _ in variant)

    def match(self, grid: Grid) -> tuple[int, ...] | None:
        counts = tuple(sorted(Counter(item for item in grid if item is not None).items()))
        if counts in self.variants:
            return tuple(i for i, item in enumerate(grid) if item is not None)
        return None


@dataclass(frozen=True)
class SmeltingRecipe:
    """One of ``ingredients`` in a furnace gives one ``result`` (no fuel in Plancraft)."""

    name: str
    result: str
    ingredients: frozenset[str]
    count: int = 1
    kind: RecipeKind = "smelting"

    @property
    def inputs(self) -> frozenset[str]:
        return self.ingredients


CraftingRecipe = ShapedRecipe | ShapelessRecipe
Recipe = ShapedRecipe | ShapelessRecipe | SmeltingRecipe


def _resolve(value: Any, tags: dict[str, tuple[str, ...]]) -> Iterator[str]:
    """The items an ingredient entry accepts, in the file's order (tags expanded recursively)."""
    if isinstance(value, list):
        for part in value:
            yield from _resolve(part, tags)
    elif isinstance(value, dict):
        if "item" in value:
            yield strip_namespace(value["item"])
        else:
            yield from _resolve("#" + value["tag"], tags)
    elif isinstance(value, str):
        if value.startswith("#"):
            yield from _resolve(list(tags[strip_namespace(value[1:])]), tags)
        else:
            yield strip_namespace(value)


def _ordered_unique(items: Iterator[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _shaped(name: str, spec: dict[str, Any], tags: dict[str, tuple[str, ...]]) -> ShapedRecipe:
    keys = {symbol: frozenset(_resolve(entry, tags)) for symbol, entry in spec["key"].items()}
    kernel = tuple(tuple(None if symbol == " " else keys[symbol] for symbol in row) for row in spec["pattern"])
    result = spec["result"]
    return ShapedRecipe(name, strip_namespace(result["item"]), result.get("count", 1), kernel)


def _shapeless(name: str, spec: dict[str, Any], tags: dict[str, tuple[str, ...]]) -> ShapelessRecipe:
    choices = [_ordered_unique(_resolve(entry, tags)) for entry in spec["ingredients"]]
    variants = _ordered_unique_variants(tuple(sorted(Counter(pick).items())) for pick in itertools.product(*choices))
    result = spec["result"]
    return ShapelessRecipe(name, strip_namespace(result["item"]), result.get("count", 1), variants)


def _ordered_unique_variants(
    variants: Iterator[tuple[tuple[str, int], ...]],
) -> tuple[tuple[tuple[str, int], ...], ...]:
    return tuple(dict.fromkeys(variants))


def _smelting(name: str, spec: dict[str, Any], tags: dict[str, tuple[str, ...]]) -> SmeltingRecipe:
    return SmeltingRecipe(name, strip_namespace(spec["result"]), frozenset(_resolve(spec["ingredient"], tags)))


_FACTORIES: dict[str, Callable[[str, dict[str, Any], dict[str, tuple[str, ...]]], Recipe]] = {
    "minecraft:crafting_shaped": _shaped,
    "minecraft:crafting_shapeless": _shapeless,
    "minecraft:smelting": _smelting,
}


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one book per process
class RecipeBook:
    """Every recipe Plancraft uses, indexed for matching, smelting and planning."""

    items: tuple[str, ...]
    stack_sizes: dict[str, int]
    recipes: tuple[Recipe, ...]
    by_result: dict[str, tuple[Recipe, ...]]
    smelting_by_input: dict[str, SmeltingRecipe]
    _crafting_index: dict[tuple[str, int], tuple[CraftingRecipe, ...]] = field(repr=False)

    def stack_size(self, item: str) -> int:
        """How many of ``item`` fit in one slot (64, 16 or 1); unknown items stack to 64."""
        return self.stack_sizes.get(item, 64)

    def craft(self, grid: Grid) -> tuple[CraftingRecipe, tuple[int, ...]] | None:
        """The recipe the grid makes and the cells it consumes, or None."""
        filled = [item for item in grid if item is not None]
        if not filled:
            return None
        for recipe in self._crafting_index.get((filled[0], len(filled)), ()):
            used = recipe.match(grid)
            if used is not None:
                return recipe, used
        return None

    def smelt(self, item: str) -> SmeltingRecipe | None:
        """The smelting recipe for ``item``, or None."""
        return self.smelting_by_input.get(item)

    def count(self, kind: RecipeKind) -> int:
        """How many recipes of one kind were loaded."""
        return sum(recipe.kind == kind for recipe in self.recipes)


def build_book(data: RawData) -> RecipeBook:
    """Parse every supported recipe file (others, e.g. stonecutting, are skipped as in Plancraft)."""
    recipes: list[Recipe] = []
    for name, spec in data.recipes:
        factory = _FACTORIES.get(spec.get("type", ""))
        if factory is not None:
            recipes.append(factory(name, spec, data.tags))
    return book_of(data.items, data.stack_sizes, recipes)


def book_of(items: tuple[str, ...], stack_sizes: dict[str, int], recipes: Sequence[Recipe]) -> RecipeBook:
    """A recipe book holding ``recipes``, indexed by result, smelting input and crafting ingredients."""
    by_result: dict[str, list[Recipe]] = {}
    smelting: dict[str, SmeltingRecipe] = {}
    index: dict[tuple[str, int], list[CraftingRecipe]] = {}
    for recipe in recipes:
        by_result.setdefault(recipe.result, []).append(recipe)
        if isinstance(recipe, SmeltingRecipe):
            for item in sorted(recipe.ingredients):
                smelting.setdefault(item, recipe)
            continue
        for item in sorted(recipe.inputs):
            index.setdefault((item, recipe.filled_cells), []).append(recipe)
    return RecipeBook(
        items=items,
        stack_sizes=stack_sizes,
        recipes=tuple(recipes),
        by_result={k: tuple(v) for k, v in by_result.items()},
        smelting_by_input=smelting,
        _crafting_index={k: tuple(v) for k, v in index.items()},
    )


@cache
def recipe_book() -> RecipeBook:
    """The recipe book of the pinned wheel, built once per process."""
    return build_book(raw_data())
