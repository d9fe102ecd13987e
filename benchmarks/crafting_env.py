"""Crafting environment and planner against Plancraft: environment steps per second and planner time over an
official split, with a fidelity cross-check when the ``plancraft`` package is importable.

Steps: every possible example's planner actions (discogym's planner) are replayed through (a) the
:class:`Table` directly, (b) :class:`CraftingEnv` through ``Env.call`` with text observations (condition
``mst-se-i``), (c) the same with pictures at each resolution (``image-high``, ``image-medium``, ``image-low``:
a PNG per step), and, if ``plancraft`` imports, (d) ``PlancraftEnvironment`` at each of the three resolutions
with pre-built ``MoveAction``/``SmeltAction`` objects. A new environment is built for every episode and its
start (constructor plus first observation: ``brief``/``brief_images`` here, ``step()`` in Plancraft, as its
evaluator does) is part of the measured rate; it is also shown on its own. Plancraft's ``step`` draws and
returns a picture (a numpy array) after every action in every condition, text included; its returned
inventory is copied after each step for the fidelity check (microseconds against its milliseconds). Each
picture condition is compared with Plancraft at the same resolution; the Table and text rows with Plancraft
at high resolution, its default.

Planner: discogym's ``make_plan`` (search and layout) and Plancraft's ``get_subplans`` (``optimal_planner`` on
the inventory counter, then its layout, as its oracle model calls it) on every example, impossible ones
included. Plancraft's search visits ingredients in set order, so its time changes from run to run with
Python's hash seed (TEST0425 alone takes 0.3 to 11 s; set PYTHONHASHSEED to fix it), and its 30 s wall-clock
timeout per example can make its result depend on the machine. Ratios are ours over Plancraft's, measured
in the same run; times are the best of ``--repeats``.

    python benchmarks/crafting_env.py [--split test] [--repeats 1]
"""

import argparse
import copy
import functools
import importlib
import importlib.metadata
import importlib.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from discogym.suites.crafting import text
from discogym.suites.crafting.data import Example, load_split
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.planner import PlannedAction, make_plan
from discogym.suites.crafting.recipes import RecipeBook, recipe_book
from discogym.suites.crafting.render import RESOLUTIONS, Resolution
from discogym.suites.crafting.state import Stack, Table, slot_name

INSTALL_HINT = (
    "plancraft is not importable here; to compare, install it beside discogym in another venv: "
    "python3 -m venv ../plancraft-venv && ../plancraft-venv/bin/pip install -e . && "
    "../plancraft-venv/bin/pip install --no-deps plancraft==0.4.9 networkx loguru, "
    "then run this script with ../plancraft-venv/bin/python"
)

Slots = dict[int, Stack]


@dataclass(frozen=True)
class Episode:
    """One possible example with everything prepared outside the timed loops."""

    example: Example
    slots: Slots
    actions: tuple[PlannedAction, ...]
    call_args: tuple[dict[str, object], ...]


@dataclass
class Timing:
    """Where one pass over the episodes spent its time."""

    episodes: int = 0
    steps: int = 0
    start_s: float = 0.0
    step_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.start_s + self.step_s


@dataclass
class PlannerRun:
    """One planner over every example: total time, the slowest example, each example's recipe count."""

    seconds: float = 0.0
    slowest: tuple[float, str] = (0.0, "")
    recipes: list[int | None] = field(default_factory=list)
    failures: int = 0


def slots_of(example: Example) -> Slots:
    return example.table()


def plancraft_inventory(example: Example) -> dict[int, dict[str, Any]]:
    """The example's inventory in Plancraft's dataset form."""
    return {
        index: {"type": stack.type, "quantity": stack.quantity} for index, stack in example.slotted_inventory.items()
    }


def best(passes: Sequence[Timing]) -> Timing:
    return min(passes, key=lambda timing: timing.total_s)


def repeat(run: Callable[[], Timing], repeats: int) -> Timing:
    return best([run() for _ in range(repeats)])


# Our environment


def replay_table(book: RecipeBook, episodes: Sequence[Episode]) -> Timing:
    timing = Timing()
    clock = time.perf_counter
    for episode in episodes:
        started = clock()
        table = Table(book, episode.slots)
        built = clock()
        for step in episode.actions:
            run = table.move if step.action == "move" else table.smelt
            run(step.source, step.target, step.quantity)
        finished = clock()
        timing.start_s += built - started
        timing.step_s += finished - built
        timing.steps += len(episode.actions)
        timing.episodes += 1
    return timing


def replay_env(book: RecipeBook, episodes: Sequence[Episode], presentation: Presentation) -> Timing:
    timing = Timing()
    clock = time.perf_counter
    for episode in episodes:
        started = clock()
        env = CraftingEnv(book, episode.example.target, episode.slots, presentation, seed=0)
        env.brief()
        env.brief_images()
        built = clock()
        for step, args in zip(episode.actions, episode.call_args, strict=True):
            env.call(step.action, args)
        finished = clock()
        if env.termination != "crafted":
            raise RuntimeError(f"{episode.example.id}: the plan did not craft the target ({env.termination})")
        timing.start_s += built - started
        timing.step_s += finished - built
        timing.steps += len(episode.actions)
        timing.episodes += 1
    return timing


def our_trace(book: RecipeBook, episode: Episode) -> list[Slots]:
    """The table's slots after every step (untimed; for the fidelity check)."""
    table = Table(book, episode.slots)
    trace = []
    for step in episode.actions:
        run = table.move if step.action == "move" else table.smelt
        run(step.source, step.target, step.quantity)
        trace.append(dict(table.slots))
    return trace


def our_planner(book: RecipeBook, examples: Sequence[Example]) -> PlannerRun:
    result = PlannerRun()
    for example in examples:
        started = time.perf_counter()
        plan = make_plan(book, example.target, slots_of(example))
        spent = time.perf_counter() - started
        result.seconds += spent
        result.slowest = max(result.slowest, (spent, example.id))
        result.recipes.append(None if plan is None else len(plan.recipes))
    return result


# Plancraft


@dataclass
class Plancraft:
    """The parts of the plancraft package used here (typed loosely: it ships no annotations)."""

    env: ModuleType
    actions: ModuleType
    planner: ModuleType
    version: str

    @classmethod
    def load(cls) -> "Plancraft | None":
        if importlib.util.find_spec("plancraft") is None:
            return None
        return cls(
            env=importlib.import_module("plancraft.environment.env"),
            actions=importlib.import_module("plancraft.environment.actions"),
            planner=importlib.import_module("plancraft.environment.planner"),
            version=importlib.metadata.version("plancraft"),
        )

    def action(self, step: PlannedAction) -> Any:
        kind = self.actions.MoveAction if step.action == "move" else self.actions.SmeltAction
        return kind(slot_from=step.source, slot_to=step.target, quantity=step.quantity)


def snapshot(inventory: dict[int, dict[str, Any]]) -> Slots:
    """Plancraft's inventory as discogym's slots (its dictionaries change in place, so copy now)."""
    return {index: (entry["type"], entry["quantity"]) for index, entry in inventory.items() if entry["quantity"] > 0}


def replay_plancraft(
    pc: Plancraft, episodes: Sequence[Episode], traces: dict[str, list[Slots]], resolution: Resolution = "high"
) -> Timing:
    prepared = [(plancraft_inventory(e.example), [pc.action(step) for step in e.actions]) for e in episodes]
    timing = Timing()
    clock = time.perf_counter
    for episode, (inventory, actions) in zip(episodes, prepared, strict=True):
        started = clock()
        env = pc.env.PlancraftEnvironment(inventory=copy.deepcopy(inventory), resolution=resolution)
        env.step()
        built = clock()
        trace = []
        for action in actions:
            observation = env.step(action)
            trace.append(snapshot(observation["inventory"]))
        finished = clock()
        traces[episode.example.id] = trace
        timing.start_s += built - started
        timing.step_s += finished - built
        timing.steps += len(actions)
        timing.episodes += 1
    return timing


def plancraft_planner(pc: Plancraft, examples: Sequence[Example]) -> PlannerRun:
    result = PlannerRun()
    for example in examples:
        observation = {"inventory": plancraft_inventory(example), "target": example.target}
        started = time.perf_counter()
        try:
            _, plan = pc.planner.get_subplans(observation)
        except Exception:  # its layout asserts on tables it cannot handle; count them, do not stop
            plan = None
            result.failures += 1
        spent = time.perf_counter() - started
        result.seconds += spent
        result.slowest = max(result.slowest, (spent, example.id))
        # get_subplans gives an empty plan both for "no plan" and for "the target is already held"
        held = any(stack.type == example.target for i, stack in example.slotted_inventory.items() if i != 0)
        result.recipes.append(len(plan) if plan else (0 if held else None))
    return result


def best_planner(run: Callable[[], PlannerRun], repeats: int) -> PlannerRun:
    return min((run() for _ in range(repeats)), key=lambda result: result.seconds)


# Report


def timing_row(label: str, timing: Timing) -> str:
    start_ms = 1000 * timing.start_s / timing.episodes
    step_us = 1e6 * timing.step_s / timing.steps
    return (
        f"{label:46} {start_ms:>12.3f} {step_us:>10.1f} {timing.steps / timing.step_s:>12,.0f} "
        f"{timing.steps / timing.total_s:>14,.0f} {timing.total_s:>9.3f}"
    )


def planner_row(label: str, run: PlannerRun, examples: int) -> str:
    slowest_ms, slowest_id = run.slowest
    return (
        f"{label:46} {run.seconds:>9.3f} {1000 * run.seconds / examples:>12.3f} {1000 * slowest_ms:>10.1f} {slowest_id}"
    )


def describe(slots: Slots) -> str:
    return ", ".join(f"{slot_name(i)} {item} x{n}" for i, (item, n) in sorted(slots.items())) or "(empty)"


def fidelity(book: RecipeBook, pc: Plancraft, episodes: Sequence[Episode], traces: dict[str, list[Slots]]) -> list[str]:
    """Per-step comparison of both environments' inventories and text observations."""
    same_inventories = same_texts = crafted = 0
    first_mismatch: list[str] = []
    for episode in episodes:
        ours, theirs = our_trace(book, episode), traces[episode.example.id]
        target = episode.example.target
        inventories_ok = texts_ok = True
        for number, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            if mine != other:
                if inventories_ok and not first_mismatch:
                    first_mismatch = [
                        f"  first mismatch: {episode.example.id}, step {number + 1}: {episode.actions[number].text()}",
                        f"    discogym:  {describe(mine)}",
                        f"    Plancraft: {describe(other)}",
                    ]
                inventories_ok = False
            table = Table(book, {})
            table.slots = mine
            as_dicts = {i: {"type": item, "quantity": n} for i, (item, n) in other.items()}
            if text.observation(target, table) != pc.env.target_and_inventory_to_text_obs(target, as_dicts):
                texts_ok = False
        same_inventories += inventories_ok
        same_texts += texts_ok
        crafted += any(item == target for i, (item, _) in theirs[-1].items() if i != 0)
    steps = sum(len(e.actions) for e in episodes)
    return [
        f"inventories identical after every step: {same_inventories}/{len(episodes)} episodes ({steps} steps)",
        *first_mismatch,
        f"text observations identical after every step: {same_texts}/{len(episodes)} episodes",
        f"target crafted by the replayed plan: Plancraft {crafted}/{len(episodes)}, discogym {len(episodes)}/"
        f"{len(episodes)} (checked in every CraftingEnv pass)",
    ]


def agreement(ours: PlannerRun, theirs: PlannerRun, examples: Sequence[Example]) -> list[str]:
    dataset = [None if e.impossible else e.optimal_path_length for e in examples]
    agree = sum(a == b for a, b in zip(ours.recipes, theirs.recipes, strict=True))
    lines = [
        f"planner recipe counts agree (None = no plan): {agree}/{len(examples)} examples; with the dataset's "
        f"optimal_path_length: discogym {sum(a == d for a, d in zip(ours.recipes, dataset, strict=True))}, "
        f"Plancraft {sum(b == d for b, d in zip(theirs.recipes, dataset, strict=True))}"
    ]
    for example, a, b in zip(examples, ours.recipes, theirs.recipes, strict=True):
        if a != b:
            lines.append(f"  differs: {example.id} ({example.target}): discogym {a}, Plancraft {b}")
    if theirs.failures:
        lines.append(f"  Plancraft's get_subplans raised on {theirs.failures} examples")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="test", help="an official split (default test)")
    parser.add_argument("--repeats", type=int, default=1, help="timed passes per figure; the best is shown")
    options = parser.parse_args()
    repeats = max(1, options.repeats)

    book = recipe_book()
    examples = load_split(options.split)
    episodes = []
    for example in examples:
        plan = make_plan(book, example.target, slots_of(example))
        if plan is not None:
            args = tuple(step.args() for step in plan.actions)
            episodes.append(Episode(example, slots_of(example), plan.actions, args))
    steps = sum(len(e.actions) for e in episodes)
    pc = Plancraft.load()

    print(
        f"crafting split {options.split}: {len(examples)} examples, {len(episodes)} with a plan, {steps} planned "
        f"actions (at most {max(len(e.actions) for e in episodes)} per episode); best of {repeats}"
    )
    print(f"plancraft {pc.version}: compared in this run" if pc else INSTALL_HINT)

    # Warm-up, untimed: first-use loading (pictures and icons, Plancraft's modules and assets).
    warm = episodes[:1]
    replay_env(book, warm, Presentation())
    pictures = {resolution: Presentation(observation="image", resolution=resolution) for resolution in RESOLUTIONS}
    traces: dict[str, list[Slots]] = {}
    for resolution in RESOLUTIONS:
        replay_env(book, warm, pictures[resolution])
        if pc:
            replay_plancraft(pc, warm, traces, resolution)

    # Each row: its label, its timing, and the resolution of the Plancraft figure it is compared with.
    figures: list[tuple[str, Timing, Resolution]] = [
        ("discogym Table (direct)", repeat(lambda: replay_table(book, episodes), repeats), "high"),
        (
            "discogym CraftingEnv.call, text (mst-se-i)",
            repeat(lambda: replay_env(book, episodes, Presentation()), repeats),
            "high",
        ),
    ]
    for resolution, shown in pictures.items():
        label = f"discogym CraftingEnv.call, image-{resolution} (PNG)"
        figures.append((label, repeat(functools.partial(replay_env, book, episodes, shown), repeats), resolution))
    plancraft: dict[Resolution, Timing] = {}
    if pc:
        for resolution in RESOLUTIONS:
            run = functools.partial(replay_plancraft, pc, episodes, traces, resolution)
            plancraft[resolution] = repeat(run, repeats)

    print()
    print(f"environment steps: {len(episodes)} episodes, {steps} steps; a new environment per episode")
    print(f"{'path':46} {'start ms/ep':>12} {'us/step':>10} {'steps/s':>12} {'steps/s+start':>14} {'total s':>9}")
    for label, timing, _ in figures:
        print(timing_row(label, timing))
    for resolution, timing in plancraft.items():
        print(timing_row(f"Plancraft step, {resolution} (a frame per step)", timing))

    # The planner: recipe_graph is built once per process, as Plancraft builds its graph on import.
    make_plan(book, examples[0].target, slots_of(examples[0]))
    ours = best_planner(lambda: our_planner(book, examples), repeats)
    theirs = best_planner(lambda: plancraft_planner(pc, examples), repeats) if pc else None
    print()
    print(f"planner over all {len(examples)} examples ({sum(e.impossible for e in examples)} impossible)")
    print(f"{'planner':46} {'total s':>9} {'ms/example':>12} {'slowest ms':>10} example")
    print(planner_row("discogym make_plan", ours, len(examples)))
    if theirs:
        print(planner_row("Plancraft get_subplans", theirs, len(examples)))

    if pc is None or theirs is None:
        return
    print()
    print("ratios, discogym / Plancraft: step rate (target >= 10x), start time, planner time (target <= 0.2)")
    print("each picture condition against Plancraft at its resolution; Table and text against Plancraft at high")
    print(f"{'path':46} {'vs Plancraft':>12} {'steps/s+start':>14} {'steps/s':>10} {'start':>10}")
    for label, timing, resolution in figures:
        baseline = plancraft[resolution]
        with_start = (timing.steps / timing.total_s) / (baseline.steps / baseline.total_s)
        steps_only = (timing.steps / timing.step_s) / (baseline.steps / baseline.step_s)
        start = f"1/{baseline.start_s / timing.start_s:,.0f}"
        print(f"{label:46} {resolution:>12} {with_start:>13,.1f}x {steps_only:>9,.1f}x {start:>10}")
    planner_ratio = ours.seconds / theirs.seconds
    print(f"{'planner time, make_plan / get_subplans':46} {planner_ratio:>14.4f} ({1 / planner_ratio:,.0f}x faster)")

    print()
    print("fidelity")
    for line in fidelity(book, pc, episodes, traces):
        print(line)
    for line in agreement(ours, theirs, examples):
        print(line)


if __name__ == "__main__":
    main()
