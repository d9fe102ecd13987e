"""The redstone suite's report tables: success by family and level, and how agents worked (verification trials,
rebuilds, edits), one row per (agent, model, condition). Episodes that ended in an error carry no score
components; they are counted in ``errors`` and left out of every rate and mean."""

from typing import Any

from discogym.core.episode import Episode
from discogym.core.report_tables import (
    AGENT_KEY_COLUMNS,
    ReportTable,
    agent_rows,
    by_agent,
    component_mean,
    component_value,
    scored_episodes,
    success_rate,
)
from discogym.suites.redstone.tasks import FAMILIES, LEVELS


def _level_rates(members: list[Episode]) -> list[float | None]:
    """Success per level L1-L5, for generated levels (``other``) and over all."""
    by_level = [success_rate([e for e in members if e.score.components.get("level") == level]) for level in LEVELS]
    other = [e for e in members if e.score.components.get("level") not in LEVELS]
    return [*by_level, success_rate(other), success_rate(members)]


def success_table(episodes: list[Episode]) -> ReportTable:
    """Success rate per family and level (``other`` for generated levels) for each agent and condition."""
    rows: list[list[Any]] = []
    for key, members in by_agent(episodes):
        scored = scored_episodes(members)
        for family in FAMILIES:
            in_family = [e for e in scored if e.score.components.get("family") == family]
            if in_family:
                rows.append([*key, family, *_level_rates(in_family)])
        rows.append([*key, "all", *_level_rates(scored)])
    return ReportTable(
        title="redstone: success by family and level",
        columns=[*AGENT_KEY_COLUMNS, "family", *LEVELS, "other", "all"],
        rows=rows,
        notes=["success: the submitted device passes the task's checker; a dash where no episode ran"],
    )


def _work_cells(members: list[Episode]) -> list[Any]:
    """A work-table row after its key: counts, success, then means per scored episode (a missing count is 0)."""
    scored = scored_episodes(members)
    return [
        len(members),
        len(members) - len(scored),
        sum(bool(e.score.components.get("submitted")) for e in scored),
        success_rate(scored),
        component_mean(scored, "trials", missing=0.0),
        max((int(component_value(e, "trials", 0.0)) for e in scored), default=None),
        component_mean(scored, "rebuilds", missing=0.0),
        component_mean(scored, "edits", missing=0.0),
        component_mean(scored, "blocks", missing=0.0),
    ]


def work_table(episodes: list[Episode]) -> ReportTable:
    """Verification trials, rebuilds (build-revise cycles: edits after a trial), edits and device size."""
    return ReportTable(
        title="redstone: verification trials and rebuilds",
        columns=[
            *AGENT_KEY_COLUMNS,
            "episodes",
            "errors",
            "submitted",
            "success",
            "trials",
            "max trials",
            "rebuilds",
            "edits",
            "blocks",
        ],
        rows=agent_rows(episodes, _work_cells),
        notes=[
            "trials: button presses (activate_button), 50 allowed per task; rebuilds: build-revise cycles, i.e. "
            "trials followed by more edits; means per episode"
        ],
    )


def redstone_tables(episodes: list[Episode]) -> list[ReportTable]:
    """The suite's tables."""
    return [success_table(episodes), work_table(episodes)]
