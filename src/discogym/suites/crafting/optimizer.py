"""An action-level optimizer: the planner's recipes in fewer environment actions.

The planner (:mod:`discogym.suites.crafting.planner`) lays every recipe application out on its own: clear
the grid, put one of each ingredient in place, take the output to the inventory. The optimizer starts from
that decomposition (the same recipes, in the same order) and rewrites it, keeping a rewrite only when the
rewritten sequence, played on a real :class:`~discogym.suites.crafting.state.Table`, applies every action
and holds the target after fewer actions. The rewrites, tried in this order until none helps:

1. **Chain**: an item moved (or smelted, or taken from ``[0]``) into a slot and later moved on from it
   goes straight to its final slot in one action (a crafted output into the grid cell where the next
   recipe wants it, a smelt straight into a grid cell, an ingredient from one cell to another); the later
   actions that took from the skipped slot may take from the final slot instead (a crafted stack put in
   one cell of the next recipe feeds its other cells from there).
2. **Share**: two moves (or smelts) between the same two slots become one with both quantities (a stack
   moved once where it feeds several applications; nine smelts of one stack become one smelt of nine).
3. **Drop**: an action the rest of the sequence does not need is left out (a cell cleared that the next
   recipe reuses, a move whose items stay unused).

Since every rewrite is verified and the start is the decomposition itself, the result is never longer
than the decomposition and always crafts the target. Everything is deterministic.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from discogym.suites.crafting.planner import Plan, PlannedAction, make_plan
from discogym.suites.crafting.recipes import RecipeBook
from discogym.suites.crafting.state import OUTPUT, Stack, Table

MAX_PASSES = 200


@dataclass(frozen=True)
class OptimizedPlan:
    """The planner's plan and the optimizer's shorter (or equal) sequence of actions for the same recipes."""

    plan: Plan
    actions: tuple[PlannedAction, ...]

    @property
    def decomposition(self) -> tuple[PlannedAction, ...]:
        """The planner's own actions."""
        return self.plan.actions


def play(book: RecipeBook, target: str, slots: Mapping[int, Stack], actions: Sequence[PlannedAction]) -> int | None:
    """How many of ``actions`` are played before the table holds ``target`` (every one must apply), or None."""
    return _Player(book, target, slots, actions).finish(0, actions)


class _Player:
    """Plays candidate sequences, reusing the tables after each prefix of the current sequence."""

    def __init__(
        self, book: RecipeBook, target: str, slots: Mapping[int, Stack], actions: Sequence[PlannedAction]
    ) -> None:
        self.target = target
        self.prefixes: list[Table] = [Table(book, slots)]
        self.reset(actions)

    def reset(self, actions: Sequence[PlannedAction]) -> None:
        """Record the tables after each prefix of ``actions`` (the sequence rewrites start from)."""
        del self.prefixes[1:]
        table = self.prefixes[0].copy()
        for step in actions:
            if not _apply(table, step):
                break
            self.prefixes.append(table.copy())

    def finish(self, start: int, actions: Sequence[PlannedAction]) -> int | None:
        """Play ``actions`` from index ``start`` on the recorded table before it; the length to the target."""
        table = self.prefixes[start].copy()
        if table.has_item(self.target):
            return start
        for index in range(start, len(actions)):
            if not _apply(table, actions[index]):
                return None
            if table.has_item(self.target):
                return index + 1
        return None


def _apply(table: Table, step: PlannedAction) -> bool:
    run = table.move if step.action == "move" else table.smelt
    return run(step.source, step.target, step.quantity) is None


def _candidates(actions: Sequence[PlannedAction]) -> list[tuple[int, list[PlannedAction]]]:
    """Rewritten sequences one action shorter, each with the first index it changes, in the order tried."""
    chains: list[tuple[int, list[PlannedAction]]] = []
    shares: list[tuple[int, list[PlannedAction]]] = []
    for i, first in enumerate(actions):
        for j in range(i + 1, len(actions)):
            second = actions[j]
            rest = [*actions[i + 1 : j], *actions[j + 1 :]]
            if second.action == "move" and second.source == first.target and second.target != first.source:
                chains.append((i, [*actions[:i], replace(first, target=second.target), *rest]))
                moved = [replace(a, source=second.target) if a.source == first.target else a for a in rest]
                if moved != rest:
                    chains.append((i, [*actions[:i], replace(first, target=second.target), *moved]))
            if (
                second.action == first.action
                and second.source == first.source != OUTPUT
                and second.target == first.target
            ):
                merged = replace(first, quantity=first.quantity + second.quantity)
                shares.append((i, [*actions[:i], merged, *rest]))
    drops = [(k, [*actions[:k], *actions[k + 1 :]]) for k in range(len(actions))]
    return [*chains, *shares, *drops]


def optimize_actions(
    book: RecipeBook, target: str, slots: Mapping[int, Stack], actions: Sequence[PlannedAction]
) -> tuple[PlannedAction, ...]:
    """The shortest verified rewrite of ``actions`` the rewrites find (``actions`` itself if none helps)."""
    player = _Player(book, target, slots, actions)
    length = player.finish(0, actions)
    if length is None:
        return tuple(actions)
    best = list(actions[:length])
    for _ in range(MAX_PASSES):
        player.reset(best)
        improved = False
        for start, candidate in _candidates(best):
            reached = player.finish(start, candidate)
            if reached is not None and reached < len(best):
                best = candidate[:reached]
                improved = True
                break
        if not improved:
            break
    if play(book, target, slots, best) != len(best):  # the final check, on a fresh table
        return tuple(actions)
    return tuple(best)


def optimize(book: RecipeBook, target: str, slots: Mapping[int, Stack]) -> OptimizedPlan | None:
    """The planner's plan for a table and the optimizer's actions for it, or None when there is no plan."""
    plan = make_plan(book, target, slots)
    if plan is None:
        return None
    return OptimizedPlan(plan, optimize_actions(book, target, slots, plan.actions))
