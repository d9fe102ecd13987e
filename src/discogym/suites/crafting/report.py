"""The crafting suite's report tables (Plancraft's metrics), one row per (agent, model, condition): an overview
with tokens and cost, success by difficulty and recipe type, plan length and extra actions against the
planner, impossible-task detection (precision, recall, F1), and tool use per episode.

Episodes that ended in an error (or were not scored) carry no score components: they are counted in the
``errors`` column and left out of every rate and mean except tokens and cost."""

from typing import Any

from discogym.core import Episode, ReportTable
from discogym.core.reporting.report_tables import (
    AGENT_KEY_COLUMNS,
    agent_rows,
    component_mean,
    component_value,
    present_mean,
    scored_episodes,
    success_rate,
)

DIFFICULTIES = ("easy", "medium", "hard", "impossible")
RECIPE_TYPES = ("smelting", "shapeless", "shaped", "mixed")
COUNTS = ("think", "search", "impossible", "invalid", "no_effect")


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _overview_cells(members: list[Episode]) -> list[Any]:
    scored = scored_episodes(members)
    usages = [e.usage() for e in members]
    return [
        len(members),
        len(members) - len(scored),
        success_rate(scored),
        present_mean(float(u.input_tokens) for u in usages),
        present_mean(float(u.output_tokens) for u in usages),
        round(sum(u.cost_usd for u in usages), 6),
    ]


def overview_table(episodes: list[Episode]) -> ReportTable:
    """Episodes, errors, success rate, and tokens and cost (over every episode, errors included)."""
    return ReportTable(
        title="crafting: overview",
        columns=[*AGENT_KEY_COLUMNS, "episodes", "errors", "success rate", "input tokens / ep", "output tokens / ep",
                 "cost usd"],
        rows=agent_rows(episodes, _overview_cells),
        notes=[
            "success as in Plancraft: the target crafted on a possible task, impossible declared on an impossible one",
            "errors: episodes that ended in an error or were not scored, left out of every rate and mean below; "
            "tokens and cost count every episode",
        ],
    )  # fmt: skip


def _rate_cell(members: list[Episode]) -> str:
    """``rate (n=count)``, or ``- (n=0)`` for an empty cell."""
    rate = success_rate(members)
    return f"{'-' if rate is None else f'{rate:.3f}'} (n={len(members)})"


def _bins(scored: list[Episode], component: str, names: tuple[str, ...]) -> list[str]:
    return [_rate_cell([e for e in scored if e.score.components.get(component) == name]) for name in names]


def _success_cells(members: list[Episode]) -> list[Any]:
    scored = scored_episodes(members)
    return [_rate_cell(scored), *_bins(scored, "difficulty", DIFFICULTIES), *_bins(scored, "recipe_type", RECIPE_TYPES)]


def success_table(episodes: list[Episode]) -> ReportTable:
    """Success rate overall, by difficulty and by recipe type, each cell with its episode count."""
    return ReportTable(
        title="crafting: success rate by difficulty and recipe type",
        columns=[*AGENT_KEY_COLUMNS, "all", *DIFFICULTIES, *RECIPE_TYPES],
        rows=agent_rows(episodes, _success_cells),
        notes=["each cell: success rate (scored episodes); easy = complexity bins 0-1, medium = 2, hard = 3-4; "
               "recipe types cover possible tasks only"],
    )  # fmt: skip


def _solved_possible(scored: list[Episode]) -> list[Episode]:
    """Successful episodes on possible tasks with a planner length to compare against."""
    return [
        e
        for e in scored
        if e.score.success
        and not e.score.components.get("impossible")
        and e.score.components.get("planner_actions") is not None
    ]


def _extra_actions(episode: Episode) -> float:
    """Environment actions beyond the planner's (a missing count is 0)."""
    return component_value(episode, "actions", 0.0) - component_value(episode, "planner_actions", 0.0)


def _plan_cells(members: list[Episode]) -> list[Any]:
    solved = _solved_possible(scored_episodes(members))
    return [
        len(solved),
        component_mean(solved, "actions", missing=0.0),
        component_mean(solved, "planner_actions", missing=0.0),
        present_mean(_extra_actions(e) for e in solved),
        component_mean(solved, "planner_recipes", missing=0.0),
    ]


def plan_table(episodes: list[Episode]) -> ReportTable:
    """Plan length (environment actions) of the agent and of the planner, and extra actions (how many more than
    the planner took), over the successful episodes on possible tasks."""
    return ReportTable(
        title="crafting: plan length and extra actions",
        columns=[*AGENT_KEY_COLUMNS, "solved possible", "actions", "planner actions", "extra actions",
                 "planner recipes"],
        rows=agent_rows(episodes, _plan_cells),
        notes=["over successful episodes on possible tasks only; actions = move + smelt calls; "
               "extra actions = mean(actions - planner actions), 0 is as short as the planner"],
    )  # fmt: skip


def _f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _detection_row(scored: list[Episode]) -> list[object]:
    truth = [bool(e.score.components.get("impossible")) for e in scored]
    declared = [bool(e.score.components.get("declared_impossible")) for e in scored]
    hits = sum(t and d for t, d in zip(truth, declared, strict=True))
    precision, recall = _ratio(hits, sum(declared)), _ratio(hits, sum(truth))
    return [len(scored), sum(truth), sum(declared), hits, precision, recall, _f1(precision, recall)]


DETECTION_COLUMNS = ["episodes", "impossible tasks", "declared", "true positives", "precision", "recall", "F1"]


def impossible_table(episodes: list[Episode]) -> ReportTable:
    """Detection of impossible tasks: positive class = the task is impossible, prediction = the agent
    declared it impossible."""
    return ReportTable(
        title="crafting: impossible-task detection",
        columns=[*AGENT_KEY_COLUMNS, *DETECTION_COLUMNS],
        rows=agent_rows(episodes, lambda members: _detection_row(scored_episodes(members))),
        notes=["'-' where undefined: precision with no declarations, recall with no impossible task, F1 if either is"],
    )  # fmt: skip


def _tool_cells(members: list[Episode]) -> list[Any]:
    scored = scored_episodes(members)
    counts = [component_mean(scored, f"{name}_count", missing=0.0) for name in COUNTS]
    return [len(scored), component_mean(scored, "steps", missing=0.0), *counts]


def tool_table(episodes: list[Episode]) -> ReportTable:
    """Mean steps and mean calls per episode of think, search and impossible, invalid and no-effect actions."""
    return ReportTable(
        title="crafting: tool use per episode",
        columns=[*AGENT_KEY_COLUMNS, "episodes", "steps", "think", "search", "impossible", "invalid", "no-effect"],
        rows=agent_rows(episodes, _tool_cells),
        notes=["means per scored episode; invalid: rejected calls; no-effect: actions that parse but change nothing"],
    )


def crafting_tables(episodes: list[Episode]) -> list[ReportTable]:
    """Every crafting table."""
    return [
        overview_table(episodes),
        success_table(episodes),
        plan_table(episodes),
        impossible_table(episodes),
        tool_table(episodes),
    ]
