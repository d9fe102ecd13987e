"""The redstone suite's report tables: success by family and level, and how agents worked (verification trials,
rebuilds, edits), one row per (agent, model, condition). Episodes that ended in an error carry no score
components; they are counted in ``errors`` and left out of every rate and mean."""

from collections.abc import Callable
from contextlib import suppress
from statistics import fmean
from typing import Any

from scipy import special  # stdtrit: scipy.stats alone takes half a second to import

from discogym.core import Episode, ReportTable
from discogym.core.reporting.report_tables import (
    AGENT_KEY_COLUMNS,
    agent_rows,
    by_agent,
    component_mean,
    component_value,
    group_by,
    present_mean,
    scored_episodes,
    standard_error,
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
        component_mean(scored, "scientist_trials", missing=0.0),
        component_mean(scored, "questions", missing=0.0),
        present_mean(float(e.usage().input_tokens + e.usage().output_tokens) for e in scored),
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
            "scientist trials",
            "questions",
            "tokens",
        ],
        rows=agent_rows(episodes, _work_cells),
        notes=[
            "trials: the engineer's button presses (activate_button), 50 allowed per task with the scientist's; "
            "rebuilds: build-revise cycles, i.e. trials followed by more edits (the paper's Trials_eng); "
            "scientist trials and questions: ask_scientist sessions; tokens: per attempt; means per episode"
        ],
    )


# SciCrafter's gap decomposition (section 5.1, appendix A.3): success rates under the four conditions, the gains
# between them, and each gain's ratio to the baseline rate.
GAPS: tuple[tuple[str, Callable[[dict[str, float]], float]], ...] = (
    ("baseline", lambda p: p["baseline"]),
    ("w/ hint", lambda p: p["hint"]),
    ("identification gap (hint - baseline)", lambda p: p["hint"] - p["baseline"]),
    ("w/ hint + scientist", lambda p: p["hint+scientist"]),
    ("discovery gap (hint+scientist - hint)", lambda p: p["hint+scientist"] - p["hint"]),
    ("application gap (1 - hint+scientist)", lambda p: 1 - p["hint+scientist"]),
    ("w/ scientist alone", lambda p: p["scientist"]),
    ("consolidation gap (claim - summary book)", lambda p: p["hint+scientist"] - p["hint+scientist-summary"]),
    ("finding-explanation-example book", lambda p: p["hint+scientist-finding"]),
)


def _rates(episodes: list[Episode]) -> dict[str, float]:
    """Success rate per condition."""
    rates = {}
    for condition in sorted({e.key.condition for e in episodes}):
        rate = success_rate(e for e in episodes if e.key.condition == condition)
        if rate is not None:
            rates[condition] = rate
    return rates


def _gap_rows(key: tuple[str, ...], members: list[Episode]) -> list[list[Any]]:
    scored = scored_episodes(members)
    overall = _rates(scored)
    repeats = sorted({e.key.repeat for e in scored})
    per_repeat = [_rates([e for e in scored if e.key.repeat == r]) for r in repeats]
    rows = []
    for name, gap in GAPS:
        try:
            value = gap(overall)
        except KeyError:  # a condition this quantity needs was not run
            continue
        samples = []
        for rates in per_repeat:
            with suppress(KeyError):
                samples.append(gap(rates))
        baseline = overall.get("baseline")
        ratio = value / baseline if baseline and "gap" in name else None
        rows.append([*key, name, value, ratio, _t_interval(samples), len(samples)])
    return rows


def _t_interval(samples: list[float], confidence: float = 0.95) -> list[float] | None:
    """The t interval of the mean of per-repeat values; None for fewer than two repeats."""
    if len(samples) < 2:
        return None
    quantile = float(special.stdtrit(len(samples) - 1, 0.5 + confidence / 2))  # Student's t, as stats.t.ppf
    half = quantile * standard_error(samples)  # type: ignore[operator]
    centre = fmean(samples)
    return [centre - half, centre + half]


def gap_table(episodes: list[Episode]) -> ReportTable:
    """The paper's Table 1 (and its consolidation ablation), per agent, model and setting."""
    groups = group_by(episodes, lambda e: (e.key.agent_label(), e.key.model or "-", e.key.setting or "independent"))
    rows = [row for key, members in groups for row in _gap_rows(key, members)]
    return ReportTable(
        title="redstone: gap decomposition (SciCrafter Table 1)",
        columns=["agent", "model", "setting", "quantity", "value", "x baseline", "95% CI over repeats", "repeats"],
        rows=rows,
        notes=[
            "success rates over all tasks run under each condition; gaps are differences of them (the paper's "
            "sequential attribution: baseline + identification + discovery + application = 1); x baseline: the "
            "gap over the baseline rate; CI: t interval over the per-repeat values (two repeats at least); a "
            "quantity is left out when a condition it needs was not run"
        ],
    )


def trials_by_family_table(episodes: list[Episode]) -> ReportTable:
    """Trials spent per family: the engineer's and the scientist's, per episode and per pass over the family (a
    curriculum chain, or the family's tasks played independently), and the questions asked."""
    rows: list[list[Any]] = []
    for key, members in by_agent(episodes):
        scored = scored_episodes(members)
        for family in FAMILIES:
            in_family = [e for e in scored if e.score.components.get("family") == family]
            if not in_family:
                continue
            passes = len({e.key.repeat for e in in_family})
            spent = [component_value(e, "trials", 0.0) + component_value(e, "scientist_trials", 0.0) for e in in_family]
            rows.append(
                [
                    *key,
                    family,
                    len(in_family),
                    component_mean(in_family, "trials", missing=0.0),
                    component_mean(in_family, "scientist_trials", missing=0.0),
                    sum(spent) / passes,
                    int(max(spent)),
                    component_mean(in_family, "questions", missing=0.0),
                ]
            )
    return ReportTable(
        title="redstone: trials by family",
        columns=[
            *AGENT_KEY_COLUMNS,
            "family",
            "episodes",
            "engineer trials",
            "scientist trials",
            "trials per pass",
            "max per task",
            "questions",
        ],
        rows=rows,
        notes=[
            "engineer and scientist trials: means per episode; trials per pass: all trials of the family's tasks "
            "over one repeat (a curriculum chain L1-L5); max per task: the most one task used of its 50"
        ],
    )


def redstone_tables(episodes: list[Episode]) -> list[ReportTable]:
    """The suite's tables."""
    tables = [success_table(episodes), work_table(episodes), trials_by_family_table(episodes)]
    if any(e.key.condition != "baseline" for e in episodes) and len({e.key.condition for e in episodes}) > 1:
        tables.append(gap_table(episodes))
    return tables
