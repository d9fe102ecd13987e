"""The crafting suite's report tables (Plancraft's metrics), one row per (agent, model, condition): an overview
with tokens and cost, success by difficulty and recipe type, plan length and action efficiency against the
planner, impossible-task detection (precision, recall, F1), and tool use per episode.

Episodes that ended in an error (or were not scored) carry no score components: they are counted in the
``errors`` column and left out of every rate and mean except tokens and cost."""

from collections.abc import Callable
from statistics import fmean

from discogym.core.episode import Episode
from discogym.core.report import AGENT_KEY_COLUMNS, ReportTable, by_agent, with_components

DIFFICULTIES = ("easy", "medium", "hard", "impossible")
RECIPE_TYPES = ("smelting", "shapeless", "shaped", "mixed")
COUNTS = ("think", "search", "impossible", "invalid", "no_effect")


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _success_rate(members: list[Episode]) -> float | None:
    return _mean([float(bool(e.score.success)) for e in members])


def overview_table(episodes: list[Episode]) -> ReportTable:
    """Episodes, errors, success rate, and tokens and cost (over every episode, errors included)."""
    rows = []
    for key, members in by_agent(episodes):
        scored = with_components(members)
        usages = [e.usage() for e in members]
        rows.append(
            [
                *key,
                len(members),
                len(members) - len(scored),
                _success_rate(scored),
                _mean([float(u.input_tokens) for u in usages]),
                _mean([float(u.output_tokens) for u in usages]),
                round(sum(u.cost_usd for u in usages), 6),
            ]
        )
    return ReportTable(
        title="crafting: overview",
        columns=[*AGENT_KEY_COLUMNS, "episodes", "errors", "success rate", "input tokens / ep", "output tokens / ep",
                 "cost usd"],
        rows=rows,
        notes=[
            "success as in Plancraft: the target crafted on a possible task, impossible declared on an impossible one",
            "errors: episodes that ended in an error or were not scored, left out of every rate and mean below; "
            "tokens and cost count every episode",
        ],
    )  # fmt: skip


def _rate_cell(members: list[Episode]) -> str:
    """``rate (n=count)``, or ``- (n=0)`` for an empty cell."""
    rate = _success_rate(members)
    return f"{'-' if rate is None else f'{rate:.3f}'} (n={len(members)})"


def _bins(scored: list[Episode], component: str, names: tuple[str, ...]) -> list[str]:
    return [_rate_cell([e for e in scored if e.score.components.get(component) == name]) for name in names]


def success_table(episodes: list[Episode]) -> ReportTable:
    """Success rate overall, by difficulty and by recipe type, each cell with its episode count."""
    rows = []
    for key, members in by_agent(episodes):
        scored = with_components(members)
        rows.append(
            [
                *key,
                _rate_cell(scored),
                *_bins(scored, "difficulty", DIFFICULTIES),
                *_bins(scored, "recipe_type", RECIPE_TYPES),
            ]
        )
    return ReportTable(
        title="crafting: success rate by difficulty and recipe type",
        columns=[*AGENT_KEY_COLUMNS, "all", *DIFFICULTIES, *RECIPE_TYPES],
        rows=rows,
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


def _component_mean(members: list[Episode], read: Callable[[dict[str, object]], float]) -> float | None:
    return _mean([read(dict(e.score.components)) for e in members])


def _number(components: dict[str, object], name: str) -> float:
    value = components.get(name)
    return float(value) if isinstance(value, int | float) else 0.0


def plan_table(episodes: list[Episode]) -> ReportTable:
    """Plan length (environment actions) of the agent and of the planner, and action efficiency, over the
    successful episodes on possible tasks."""
    rows = []
    for key, members in by_agent(episodes):
        solved = _solved_possible(with_components(members))
        rows.append(
            [
                *key,
                len(solved),
                _component_mean(solved, lambda c: _number(c, "actions")),
                _component_mean(solved, lambda c: _number(c, "planner_actions")),
                _component_mean(solved, lambda c: _number(c, "actions") - _number(c, "planner_actions")),
                _component_mean(solved, lambda c: _number(c, "planner_recipes")),
            ]
        )
    return ReportTable(
        title="crafting: plan length and action efficiency",
        columns=[*AGENT_KEY_COLUMNS, "solved possible", "actions", "planner actions", "action efficiency",
                 "planner recipes"],
        rows=rows,
        notes=["over successful episodes on possible tasks only; actions = move + smelt calls; "
               "action efficiency = mean(actions - planner actions), 0 is as short as the planner"],
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
    rows = [[*key, *_detection_row(with_components(members))] for key, members in by_agent(episodes)]
    return ReportTable(
        title="crafting: impossible-task detection",
        columns=[*AGENT_KEY_COLUMNS, *DETECTION_COLUMNS],
        rows=rows,
        notes=["'-' where undefined: precision with no declarations, recall with no impossible task, F1 if either is"],
    )  # fmt: skip


def _count_mean(members: list[Episode], name: str) -> float | None:
    return _mean([_number(dict(e.score.components), f"{name}_count") for e in members])


def tool_table(episodes: list[Episode]) -> ReportTable:
    """Mean steps and mean calls per episode of think, search and impossible, invalid and no-effect actions."""
    rows = []
    for key, members in by_agent(episodes):
        scored = with_components(members)
        rows.append(
            [
                *key,
                len(scored),
                _component_mean(scored, lambda c: _number(c, "steps")),
                *(_count_mean(scored, name) for name in COUNTS),
            ]
        )
    return ReportTable(
        title="crafting: tool use per episode",
        columns=[*AGENT_KEY_COLUMNS, "episodes", "steps", "think", "search", "impossible", "invalid", "no-effect"],
        rows=rows,
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
