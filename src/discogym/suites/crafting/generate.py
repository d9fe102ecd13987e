"""Seeded generation of new crafting tasks, made the way Plancraft made its dataset.

A task is built from a target item: pick one of its recipes and concrete ingredients for it, and expand
each ingredient into its own recipe with probability one half (recursively), which gives a recipe tree
whose leaves are the raw materials to hand over. Then come 4, 8 or 16 distractor stacks (items that take no
part in making the target), and everything is put in random inventory slots. Our planner then solves the
table; a task is kept only if the plan has at most 30 environment actions (trees whose own recipes already
take more are dropped before planning), and its optimal path, items used and complexity (= items used x
recipe applications) come from that plan. An impossible task is a kept task
with some of its materials taken away until the planner finds no plan.

Tasks are drawn until every complexity bin (0-4) holds its share of the possible tasks, so a generated set
is spread over the bins like the official splits. Everything random comes from one
``numpy.random.default_rng(seed)``, and sets are only iterated in sorted order, so a seed always gives the
same tasks, whatever the hash seed.
"""

import itertools
import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from discogym.core import UserError, derive_seed
from discogym.suites.crafting.data import Example, SlotItem
from discogym.suites.crafting.planner import Plan, PlanError, consumption, make_plan, recipe_graph
from discogym.suites.crafting.recipes import Recipe, RecipeBook, ShapelessRecipe, SmeltingRecipe, recipe_book
from discogym.suites.crafting.state import ALL_SLOTS, INVENTORY, OUTPUT, Stack

DISTRACTOR_COUNTS = (4, 8, 16)
MAX_PLAN_ACTIONS = 30
EXPAND_PROBABILITY = 0.5  # the chance that an ingredient is made rather than handed over, as in Plancraft
MAX_TREE_DEPTH = 8  # recipe levels below the target; deeper trees never fit in 30 actions anyway
MIN_FREE_SLOTS = 2  # inventory slots left empty, so the plan has room for what it makes

# Complexity bins, read off the official splits (train, val, test and the small sets): every possible row
# has complexity = items_used * optimal_path_length, and per bin the complexities span exactly
#   bin 0: 1-3, bin 1: 4-6, bin 2: 7-10, bin 3: 12-30, bin 4: 32-299,
# in every split. 11 and 31 never occur and cannot: both are prime, so they would need one recipe using
# 11 or 31 items, and a recipe uses at most 9. A complexity belongs to the first bin whose edge it does
# not exceed; anything above the last edge is bin 4. Impossible rows are bin 5.
BIN_UPPER_EDGES = (3, 6, 10, 30)
POSSIBLE_BINS = len(BIN_UPPER_EDGES) + 1
IMPOSSIBLE_BIN = 5
# The dataset's complexity_split of each bin: easy = bins 0-1, medium = 2, hard = 3-4, then impossible.
SPLIT_OF_BIN = ("easy", "easy", "medium", "hard", "hard", "impossible")

# How many candidate tables may be drawn per requested task before the bin quotas are relaxed.
ATTEMPTS_PER_TASK = 400


def complexity_bin(complexity: int) -> int:
    """The dataset's complexity bin (0-4) of a possible task's complexity."""
    for index, edge in enumerate(BIN_UPPER_EDGES):
        if complexity <= edge:
            return index
    return len(BIN_UPPER_EDGES)


def complexity_split(bin_index: int) -> str:
    """The dataset's difficulty name of a bin: easy, medium, hard or impossible."""
    return SPLIT_OF_BIN[bin_index]


@dataclass(frozen=True)
class Tree:
    """The raw materials of a sampled recipe tree, and the environment actions its recipes take when
    applied one by one the planner's way (one move per filled cell and one out of [0] per craft, one smelt
    per smelted item)."""

    materials: Counter[str]
    actions: int


@dataclass(frozen=True)
class Candidate:
    """A sampled table the planner solves within the action limit, with its statistics."""

    target: str
    materials: tuple[tuple[str, int], ...]
    distractors: tuple[tuple[str, int], ...]
    slots: dict[int, Stack]
    plan: Plan
    items_used: int
    unique_items_used: int

    @property
    def complexity(self) -> int:
        return self.items_used * len(self.plan.recipes)

    @property
    def bin(self) -> int:
        return complexity_bin(self.complexity)


class Sampler:
    """Draws recipe trees, distractors and slot layouts for one recipe book from one random generator."""

    def __init__(self, book: RecipeBook, rng: np.random.Generator) -> None:
        self.book = book
        self.rng = rng
        known = set(book.items)
        self.targets = sorted(item for item in book.by_result if item in known and item != "air")
        self.graph = recipe_graph(book)

    def pick(self, options: Sequence[str]) -> str:
        """One of ``options``, uniformly."""
        return options[int(self.rng.integers(len(options)))]

    def inputs(self, recipe: Recipe, avoid: frozenset[str]) -> Counter[str] | None:
        """Concrete ingredients for one application of ``recipe`` (one accepted item per cell, chosen at
        random), none of them in ``avoid``; None if the recipe needs an item of ``avoid``."""
        if isinstance(recipe, SmeltingRecipe):
            options = sorted(recipe.ingredients - avoid)
            return Counter({self.pick(options): 1}) if options else None
        if isinstance(recipe, ShapelessRecipe):
            variants = [v for v in recipe.variants if all(item not in avoid for item, _ in v)]
            if not variants:
                return None
            return Counter(dict(variants[int(self.rng.integers(len(variants)))]))
        chosen: Counter[str] = Counter()
        for row in recipe.kernel:
            for cell in row:
                if cell is None:
                    continue
                options = sorted(cell - avoid)
                if not options:
                    return None
                chosen[self.pick(options)] += 1
        return chosen

    def tree(self, item: str, need: int, path: frozenset[str], depth: int) -> Tree | None:
        """A random recipe tree that makes ``need`` of ``item``; None if no recipe of ``item`` avoids the
        items being made above it (``path``), which would be a cycle."""
        recipes = self.book.by_result.get(item, ())
        avoid = path | {item}
        for index in self.rng.permutation(len(recipes)):
            recipe = recipes[int(index)]
            ingredients = self.inputs(recipe, avoid)
            if ingredients is not None:
                break
        else:
            return None
        times = math.ceil(need / recipe.count)
        per_application = 1 if isinstance(recipe, SmeltingRecipe) else recipe.filled_cells + 1
        materials: Counter[str] = Counter()
        actions = times * per_application
        for ingredient in sorted(ingredients):
            amount = ingredients[ingredient] * times
            below = None
            if depth < MAX_TREE_DEPTH and ingredient in self.book.by_result and self.rng.random() < EXPAND_PROBABILITY:
                below = self.tree(ingredient, amount, avoid, depth + 1)
            if below is None:
                materials[ingredient] += amount
            else:
                materials.update(below.materials)
                actions += below.actions
        return Tree(materials, actions)

    def distractors(self, target: str, count: int) -> tuple[tuple[str, int], ...]:
        """``count`` stacks of distinct items that take no part in making ``target``, random quantities."""
        excluded = self.graph.ancestors(target) | {target, "air"}
        pool = [item for item in self.book.items if item not in excluded]
        picks = self.rng.choice(len(pool), size=count, replace=False)
        stacks = []
        for index in picks:
            item = pool[int(index)]
            stacks.append((item, int(self.rng.integers(1, self.book.stack_size(item) + 1))))
        return tuple(stacks)

    def place(self, stacks: Iterable[tuple[str, int]]) -> dict[int, Stack] | None:
        """Put the stacks in random inventory slots, splitting any above the stack size; None if they do
        not fit with room to spare."""
        pieces: list[Stack] = []
        for item, total in stacks:
            size = self.book.stack_size(item)
            while total > 0:
                pieces.append((item, min(total, size)))
                total -= size
        if len(pieces) > len(INVENTORY) - MIN_FREE_SLOTS:
            return None
        order = self.rng.permutation(len(INVENTORY))
        return {INVENTORY[int(order[i])]: piece for i, piece in enumerate(pieces)}

    def candidate(self) -> Candidate | None:
        """One random possible task, or None when the draw is rejected."""
        target = self.pick(self.targets)
        tree = self.tree(target, 1, frozenset(), 0)
        if tree is None or tree.actions > MAX_PLAN_ACTIONS:
            return None  # the tree's own route is too long (and the planner slow on such tables)
        materials = tuple(sorted(tree.materials.items()))
        distractors = self.distractors(target, int(self.rng.choice(DISTRACTOR_COUNTS)))
        slots = self.place(materials + distractors)
        if slots is None:
            return None
        plan = solve(self.book, target, slots)
        if plan is None or not plan.recipes or len(plan.actions) > MAX_PLAN_ACTIONS:
            return None
        items_used, unique_items_used = usage(self.book, slots, plan.recipes)
        return Candidate(target, materials, distractors, slots, plan, items_used, unique_items_used)

    def impossible(self, base: Candidate) -> dict[int, Stack] | None:
        """The base task's table with materials taken away (some of each of one or more materials, again
        until the planner finds no plan); None if the planner cannot decide."""
        left = dict(base.materials)
        while True:
            names = sorted(left)
            if names:
                chosen = self.rng.choice(len(names), size=int(self.rng.integers(1, len(names) + 1)), replace=False)
                for index in chosen:
                    item = names[int(index)]
                    left[item] -= int(self.rng.integers(1, left[item] + 1))
                    if left[item] == 0:
                        del left[item]
            slots = self.place(tuple(sorted(left.items())) + base.distractors)
            if slots is None:  # cannot happen: the table only shrank
                return None
            try:
                if make_plan(self.book, base.target, slots) is None:
                    return slots
            except PlanError:
                return None
            if not names:  # nothing left to take, yet still solvable: cannot happen with these distractors
                return None


def solve(book: RecipeBook, target: str, slots: Mapping[int, Stack]) -> Plan | None:
    """The planner's plan, or None when there is none or the planner gives up."""
    try:
        return make_plan(book, target, slots)
    except PlanError:
        return None


def usage(book: RecipeBook, slots: Mapping[int, Stack], recipes: Sequence[Recipe]) -> tuple[int, int]:
    """The dataset's items_used and unique_items_used of a plan: over the recipe applications, how many
    items, and how many distinct item types per application, the held inventory loses."""
    order = {item: i for i, item in enumerate(book.items)}
    held: Counter[str] = Counter()
    for item, quantity in slots.values():
        held[item] += quantity
    items_used = unique_items_used = 0
    for recipe in recipes:
        used = consumption(recipe, held, order)
        if used is None:
            raise PlanError(f"the plan applies {recipe.name} without its ingredients")
        spent = Counter(used)
        items_used += sum(spent.values())
        unique_items_used += len(spent)
        held -= spent
        held[recipe.result] += recipe.count
    return items_used, unique_items_used


def bin_quotas(count: int) -> list[int]:
    """How many possible tasks each bin gets: equal shares, the remainder to the lowest bins."""
    share, extra = divmod(count, POSSIBLE_BINS)
    return [share + (1 if index < extra else 0) for index in range(POSSIBLE_BINS)]


def _slotted(slots: Mapping[int, Stack]) -> dict[int, SlotItem]:
    return {slot: SlotItem(type=item, quantity=n) for slot, (item, n) in sorted(slots.items())}


def generate_examples(
    seed: int, count: int, *, split_name: str = "generated", impossible_fraction: float = 0.2
) -> list[Example]:
    """``count`` new tasks, the same for the same arguments: round(count * impossible_fraction) impossible
    ones and the rest spread evenly over complexity bins 0-4, in random order, ids ``GEN<seed>-<i>``."""
    if count < 0:
        raise UserError(f"the number of tasks must be at least 0, not {count}")
    if not 0.0 <= impossible_fraction <= 1.0:
        raise UserError(f"the impossible fraction must be between 0 and 1, not {impossible_fraction}")
    book = recipe_book()
    sampler = Sampler(book, np.random.default_rng(seed))
    impossible_wanted = math.floor(count * impossible_fraction + 0.5)
    quotas = bin_quotas(count - impossible_wanted)
    possible: list[Candidate] = []
    impossible: list[tuple[Candidate, dict[int, Stack]]] = []
    attempts = 0
    while sum(quotas) > 0 or len(impossible) < impossible_wanted:
        attempts += 1
        drawn = sampler.candidate()
        if drawn is None:
            continue
        if quotas[drawn.bin] > 0:
            quotas[drawn.bin] -= 1
            possible.append(drawn)
        elif sum(quotas) > 0 and attempts > ATTEMPTS_PER_TASK * count:
            # A bin this seed cannot fill in reasonable time: let the task stand in for another bin's.
            quotas[max(range(POSSIBLE_BINS), key=quotas.__getitem__)] -= 1
            possible.append(drawn)
        elif len(impossible) < impossible_wanted:
            slots = sampler.impossible(drawn)
            if slots is not None:
                impossible.append((drawn, slots))
    rows: list[Example] = []
    for task in possible:
        rows.append(
            Example(
                id="",
                split=split_name,
                target=task.target,
                slotted_inventory=_slotted(task.slots),
                num_distractors=len(task.distractors),
                impossible=False,
                optimal_path_length=len(task.plan.recipes),
                optimal_path=task.plan.path,
                items_used=task.items_used,
                unique_items_used=task.unique_items_used,
                complexity=task.complexity,
                complexity_bin=task.bin,
                complexity_split=complexity_split(task.bin),
            )
        )
    for base, slots in impossible:
        rows.append(
            Example(
                id="",
                split=split_name,
                target=base.target,
                slotted_inventory=_slotted(slots),
                num_distractors=len(base.distractors),
                impossible=True,
                complexity_bin=IMPOSSIBLE_BIN,
                complexity_split=complexity_split(IMPOSSIBLE_BIN),
            )
        )
    order = sampler.rng.permutation(len(rows))
    return [
        rows[int(index)].model_copy(update={"id": f"GEN{seed}-{position:04d}"}) for position, index in enumerate(order)
    ]


def _row(example: Example) -> dict[str, Any]:
    """An example as a row of Plancraft's data files (same keys; ``inventory_trace`` is not kept)."""
    row = example.model_dump(mode="json")
    totals: Counter[str] = Counter()
    for stack in example.slotted_inventory.values():
        totals[stack.type] += stack.quantity
    row["inventory"] = dict(totals)
    row["inventory_trace"] = None
    return row


def write_task_file(path: Path, examples: list[Example]) -> None:
    """Write tasks as a JSON list of rows in the official files' format, with sorted keys (stable bytes)."""
    text = json.dumps([_row(example) for example in examples], indent=2, sort_keys=True, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text + "\n", encoding="utf-8")
    os.replace(partial, path)


def _field(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "(row)"


def read_task_file(path: Path) -> list[Example]:
    """The tasks of a task file (generated or official format); a UserError says what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such task file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"{path}: cannot read the task file ({error})") from None
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"{path}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    except RecursionError:
        raise UserError(f"{path}: nested too deeply to be a task file") from None
    if not isinstance(rows, list):
        raise UserError(f"{path}: a task file holds a JSON list of tasks, not {_json_kind(rows)}")
    examples: list[Example] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise UserError(f"{path}: row {index} is {_json_kind(row)}, not an object")
        try:
            example = Example.model_validate(row)
        except ValidationError as error:
            first = error.errors()[0]
            more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
            raise UserError(
                f"{path}: row {index}{_row_name(row)}: field '{_field(first['loc'])}': {first['msg']}{more}"
            ) from None
        bad_slots = [slot for slot in example.slotted_inventory if slot == OUTPUT or slot not in ALL_SLOTS]
        if bad_slots:
            raise UserError(
                f"{path}: row {index}{_row_name(row)}: field 'slotted_inventory': slot {bad_slots[0]} is not a "
                f"grid or inventory slot (1-45)"
            )
        if example.id in seen:
            raise UserError(f"{path}: row {index}: field 'id': '{example.id}' is also the id of row {seen[example.id]}")
        seen[example.id] = index
        examples.append(example)
    return examples


def _row_name(row: Mapping[str, Any]) -> str:
    name = row.get("id")
    return f" (id {name!r})" if isinstance(name, str) else ""


def _json_kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


TRAINING_BATCH = 100  # tasks generated at a time (each batch spread over the bins like a set)
TRAINING_IMPOSSIBLE = 1 / 6  # the official splits' share of impossible tasks


def training_examples(seed: int) -> Iterator[Example]:
    """Endless new tasks for training, generated in batches of :data:`TRAINING_BATCH` from seeds derived from
    ``seed`` (as ``discogym crafting generate`` makes a set), with the official splits' share of impossible tasks;
    ids ``TRAIN{SEED}-{N}``."""
    for batch in itertools.count():
        examples = generate_examples(
            derive_seed("crafting", "training", seed, batch) % 2**32,
            TRAINING_BATCH,
            split_name="training",
            impossible_fraction=TRAINING_IMPOSSIBLE,
        )
        for position, example in enumerate(examples):
            yield example.model_copy(update={"id": f"TRAIN{seed}-{batch * TRAINING_BATCH + position:06d}"})


def problem_of(example: Example) -> dict[str, Any]:
    """What makes a task the problem it is: its target and the items on its table, wherever they lie."""
    items = sorted((stack.type, stack.quantity) for stack in example.slotted_inventory.values())
    return {"target": example.target, "items": items}
