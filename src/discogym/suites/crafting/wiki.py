"""Realistic retrieval: a recipe wiki generated from the pinned recipe data, searched with BM25 (``bm25s``).

One page per item of the item list: what it is (in plain text generated from the data), every crafting recipe
that makes it with its grid in text (shaped or shapeless), the smelting recipes that make it, and what it is
used in. The ``wiki`` condition's ``search`` returns the text of the top :data:`TOP_K` pages for a query, so a
model must read and pick; nothing else is on the pages (no task, no answer, no impossibility flag).

:func:`parse_page` reads a page's recipes back; the ``wiki-planner`` agent uses it on the text it was given.
"""

import re
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

from discogym.suites.crafting.recipes import (
    Recipe,
    RecipeBook,
    ShapedRecipe,
    ShapelessRecipe,
    SmeltingRecipe,
    recipe_book,
)

TOP_K = 3
K1, B = 1.5, 0.5  # BM25's parameters; b below the usual 0.75 so long pages (common ingredients) still rank
PAGE_SEPARATOR = "\n\n"
NO_MATCH = "No wiki page matches that search."
_KEYS = "abcdefghi"


def _title(item: str) -> str:
    return item.replace("_", " ").title()


def _alternatives(cell: frozenset[str], order: dict[str, int]) -> str:
    return " or ".join(sorted(cell, key=lambda item: (order.get(item, len(order)), item)))


def _shaped_lines(recipe: ShapedRecipe, order: dict[str, int]) -> list[str]:
    keys: dict[frozenset[str], str] = {}
    for row in recipe.kernel:
        for cell in row:
            if cell is not None and cell not in keys:
                keys[cell] = _KEYS[len(keys)]
    lines = [
        f"shaped, {recipe.height} rows by {recipe.width} columns, placed anywhere in the grid; makes {recipe.count}"
    ]
    lines += ["  | " + " | ".join("." if cell is None else keys[cell] for cell in row) + " |" for row in recipe.kernel]
    lines += [f"  {key} = {_alternatives(cell, order)}" for cell, key in keys.items()]
    return lines


def _shapeless_lines(recipe: ShapelessRecipe) -> list[str]:
    lines = [f"shapeless, ingredients in any cells; makes {recipe.count}"]
    lines += ["  any of:"] if len(recipe.variants) > 1 else []
    lines += ["  - " + ", ".join(f"{n} {item}" for item, n in variant) for variant in recipe.variants]
    return lines


def page(book: RecipeBook, item: str) -> str:
    """The wiki page of ``item``."""
    order = {name: i for i, name in enumerate(book.items)}
    made = book.by_result.get(item, ())
    crafting = [r for r in made if not isinstance(r, SmeltingRecipe)]
    smelting = [r for r in made if isinstance(r, SmeltingRecipe)]
    used_in = sorted(
        {r.result for r in book.recipes if item in r.inputs and r.result != item},
        key=lambda name: (order.get(name, len(order)), name),
    )
    ways = []
    if crafting:
        ways.append(f"crafted ({len(crafting)} recipe{'s' * (len(crafting) != 1)})")
    if smelting:
        ways.append(f"smelted ({len(smelting)} recipe{'s' * (len(smelting) != 1)})")
    how = f"It can be {' or '.join(ways)}." if ways else "It cannot be crafted or smelted; it is found or gathered."
    lines = [
        f"# {item}",
        f"{_title(item)} ({item}) is a Minecraft item. Up to {book.stack_size(item)} fit in one slot. {how} "
        f"It is an ingredient of {len(used_in)} other item{'s' * (len(used_in) != 1)}.",
    ]
    number = {id(recipe): n for n, recipe in enumerate(made, start=1)}  # the data's order, across sections
    if crafting:
        lines += ["", "## Crafting"]
        for recipe in crafting:
            body = _shaped_lines(recipe, order) if isinstance(recipe, ShapedRecipe) else _shapeless_lines(recipe)
            lines += [f"recipe {number[id(recipe)]}: {body[0]}", *body[1:]]
    if smelting:
        lines += ["", "## Smelting"]
        lines += [
            f"recipe {number[id(r)]}: smelt one {_alternatives(r.ingredients, order)} to get 1 {item}" for r in smelting
        ]
    lines += ["", "## Used in", ", ".join(used_in) if used_in else "nothing"]
    return "\n".join(lines)


@dataclass(frozen=True)
class Wiki:
    """Every item's page and their BM25 index (ids are positions in :attr:`items`, sorted by name)."""

    items: tuple[str, ...]
    pages: tuple[str, ...]
    retriever: Any
    build_seconds: float

    def search(self, query: str, k: int = TOP_K) -> list[str]:
        """The items of the ``k`` best pages for ``query``, best first; ties go to the lower page id (pages are
        sorted by item name). Underscores also count as spaces, so ``iron_ingot`` matches the name and its words."""
        import bm25s

        words = f"{query} {query.replace('_', ' ')}"  # an item name matches as a name and as its words
        tokens = bm25s.tokenize([words], stopwords=None, show_progress=False, return_ids=False)
        if not tokens or not tokens[0]:
            return []
        scores = self.retriever.get_scores(tokens[0])
        ranked = sorted(range(len(self.items)), key=lambda i: (-float(scores[i]), i))
        return [self.items[i] for i in ranked[:k] if scores[i] > 0]

    def page_of(self, item: str) -> str:
        return self.pages[self.items.index(item)]

    def answer(self, query: str, k: int = TOP_K) -> str:
        """What the ``search`` tool returns: the top pages' text, or a no-match sentence."""
        found = self.search(query, k)
        return PAGE_SEPARATOR.join(self.page_of(item) for item in found) if found else NO_MATCH


def build_wiki(book: RecipeBook) -> Wiki:
    """Generate every page and index them (BM25, bm25s' default Lucene variant, with :data:`K1` and :data:`B`)."""
    import bm25s

    start = time.perf_counter()
    items = tuple(sorted(set(book.items) - {"air"}))
    pages = tuple(page(book, item) for item in items)
    retriever = bm25s.BM25(k1=K1, b=B)
    retriever.index(bm25s.tokenize(list(pages), stopwords=None, show_progress=False), show_progress=False)
    return Wiki(items, pages, retriever, time.perf_counter() - start)


@cache
def wiki() -> Wiki:
    """The wiki of the pinned data, built once per process."""
    return build_wiki(recipe_book())


# Reading pages back (what the wiki-planner agent does with the text it was given)

_HEADER = re.compile(r"^# (\w+)$")
_RECIPE = re.compile(r"^recipe (\d+): (shaped|shapeless)\b.*; makes (\d+)$")
_ROW = re.compile(r"^  \|(.*)\|$")
_KEY = re.compile(r"^  ([a-i]) = (.+)$")
_VARIANT = re.compile(r"^  - (.+)$")
_SMELT = re.compile(r"^recipe (\d+): smelt one (.+) to get 1 (\w+)$")
_STACK = re.compile(r"Up to (\d+) fit in one slot")


@dataclass(frozen=True)
class ReadPage:
    """What a page says: its item, how many fit in a slot, and the recipes that make it."""

    item: str
    stack_size: int
    recipes: tuple[Recipe, ...]


def split_pages(text: str) -> list[str]:
    """The pages in a search result (each starts with its ``# item`` line)."""
    starts = [m.start() for m in re.finditer(r"^# \w+$", text, flags=re.MULTILINE)]
    return [text[a:b].strip() for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def parse_page(text: str) -> ReadPage:
    """The recipes a page shows, as recipe objects in the page's numbering (named ``wiki:<item>:<n>``)."""
    lines = text.splitlines()
    header = _HEADER.match(lines[0]) if lines else None
    if header is None:
        raise ValueError("not a wiki page: it must start with '# <item>'")
    item = header.group(1)
    stack = _STACK.search(text)
    recipes: list[tuple[int, Recipe]] = []
    current: dict[str, Any] | None = None

    def close() -> None:
        if current is None:
            return
        name = f"wiki:{item}:{current['number']}"
        if current["kind"] == "shaped":
            keys: dict[str, frozenset[str]] = current["keys"]
            kernel = tuple(tuple(None if c == "." else keys[c] for c in row) for row in current["rows"])
            recipes.append((current["number"], ShapedRecipe(name, item, current["count"], kernel)))
        else:
            variants = tuple(current["variants"])
            recipes.append((current["number"], ShapelessRecipe(name, item, current["count"], variants)))

    for line in lines[1:]:
        if (found := _RECIPE.match(line)) is not None:
            close()
            number, kind, count = int(found.group(1)), found.group(2), int(found.group(3))
            current = {"number": number, "kind": kind, "count": count, "rows": [], "keys": {}, "variants": []}
        elif current is not None and (row := _ROW.match(line)) is not None:
            current["rows"].append([cell.strip() for cell in row.group(1).split("|")])
        elif current is not None and (key := _KEY.match(line)) is not None:
            current["keys"][key.group(1)] = frozenset(key.group(2).split(" or "))
        elif current is not None and (variant := _VARIANT.match(line)) is not None:
            parts = [part.split(" ", 1) for part in variant.group(1).split(", ")]
            current["variants"].append(tuple(sorted((name, int(n)) for n, name in parts)))
        elif (smelt := _SMELT.match(line)) is not None:
            close()
            current = None
            number, ingredients = int(smelt.group(1)), frozenset(smelt.group(2).split(" or "))
            recipes.append((number, SmeltingRecipe(f"wiki:{item}:{number}", smelt.group(3), ingredients)))
        elif line.startswith("## "):
            close()
            current = None
    close()
    ordered = tuple(recipe for _, recipe in sorted(recipes, key=lambda pair: pair[0]))
    return ReadPage(item, int(stack.group(1)) if stack else 64, ordered)


def timing(queries: int = 200) -> dict[str, float]:
    """Seconds to build the index (pages included) and mean seconds per query, over item-name queries."""
    built = build_wiki(recipe_book())
    names = built.items[:: max(1, len(built.items) // queries)][:queries]
    start = time.perf_counter()
    for name in names:
        built.answer(name)
    return {"build_s": built.build_seconds, "query_s": (time.perf_counter() - start) / len(names)}
