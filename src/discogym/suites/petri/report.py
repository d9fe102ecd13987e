"""petri's report tables: per agent and tier (with the range of per-pass means), paired comparisons between
agents over tasks (Wilcoxon signed-rank, Holm across the family), the failure taxonomy, difficulty bands.

Every table keeps agents apart by (agent, model, condition), so two models run into one folder get their own
rows and can be compared."""

from collections import defaultdict
from itertools import combinations
from statistics import fmean

import numpy as np

from discogym.core import Episode, ReportTable
from discogym.core.reporting.report_tables import (
    AGENT_KEY_COLUMNS,
    AgentKey,
    agent_key,
    component_mean,
    group_by,
    mean_score,
    scored_episodes,
    success_rate,
)
from discogym.suites.petri.stats import ALPHA, holm


def _pass_range(members: list[Episode]) -> str:
    """min-max of the per-pass (repeat) mean scores."""
    by_pass: dict[int, list[float]] = defaultdict(list)
    for episode in members:
        by_pass[episode.key.repeat].append(float(episode.score.value or 0.0))
    means = [fmean(scores) for scores in by_pass.values()]
    return f"{min(means):.1f}-{max(means):.1f}" if means else "-"


def _tier_key(episode: Episode) -> tuple[str, str, str, str]:
    return (*agent_key(episode), str(episode.task.params.get("tier")))


def _all_tiers_key(episode: Episode) -> tuple[str, str, str, str]:
    return (*agent_key(episode), "all")


def key_label(key: AgentKey) -> str:
    """An (agent, model, condition) key as one cell: ``llm (openai/gpt-5, L1)``, or ``ofat (L1)`` without a
    model."""
    agent, model, condition = key
    return f"{agent} ({condition})" if model == "-" else f"{agent} ({model}, {condition})"


def tier_table(episodes: list[Episode]) -> ReportTable:
    """Per (agent, model, condition) and tier, then overall: mean score, per-pass range, solve rate, mean calls,
    behaviour flags."""
    scored = scored_episodes(episodes)
    groups = sorted(group_by(scored, _tier_key) + group_by(scored, _all_tiers_key), key=lambda group: group[0])
    rows = [
        [
            *key,
            tier,
            len(members),
            mean_score(members),
            _pass_range(members),
            success_rate(members),
            component_mean(members, "calls", missing=0.0),
            sum(any(dict(e.audit.get("flags") or {}).values()) for e in members),
        ]
        for (*key, tier), members in groups
    ]
    return ReportTable(
        title="petri: per agent and tier",
        columns=[*AGENT_KEY_COLUMNS, "tier", "episodes", "mean score", "per-pass range", "solve rate", "mean calls",
                 "behaviour flags"],
        rows=rows,
        notes=["per-pass range: lowest and highest mean over the episodes of one repeat"],
    )  # fmt: skip


def comparison_table(episodes: list[Episode]) -> ReportTable:
    """Every pair of (agent, model, condition) over the tasks both played: Wilcoxon signed-rank on per-task mean
    scores, two-sided, Holm across the pairs."""
    from scipy.stats import wilcoxon  # imported on first use: scipy.stats takes 0.6 s to import

    per_task: dict[AgentKey, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for episode in scored_episodes(episodes):
        per_task[agent_key(episode)][episode.key.task].append(float(episode.score.value or 0.0))
    pairs = []
    for first, second in combinations(sorted(per_task), 2):
        shared = sorted(set(per_task[first]) & set(per_task[second]))
        a = np.array([fmean(per_task[first][task]) for task in shared])
        b = np.array([fmean(per_task[second][task]) for task in shared])
        differences = a - b
        p = 1.0 if not shared or not differences.any() else float(wilcoxon(a, b).pvalue)
        pairs.append((first, second, len(shared), float(differences.mean()) if shared else 0.0, p))
    adjusted = holm([p for *_, p in pairs]) if pairs else []
    rows = [
        [key_label(first), key_label(second), count, difference, f"{p:.3g}", f"{p_holm:.3g}", p_holm < ALPHA]
        for (first, second, count, difference, p), p_holm in zip(pairs, adjusted, strict=True)
    ]
    return ReportTable(
        title="petri: paired comparisons (Wilcoxon signed-rank over tasks, Holm across pairs)",
        columns=["agent A", "agent B", "tasks", "mean A - B", "p", "p (Holm)", "significant"],
        rows=rows,
        notes=["A and B: agent (model, condition); each pair is compared over the tasks both played"],
    )


def taxonomy_table(episodes: list[Episode]) -> ReportTable:
    """Per (agent, model, condition): how many episodes show each failure and behavioural flag."""
    names: list[str] = []
    counts: dict[AgentKey, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for episode in scored_episodes(episodes):
        marks = {**dict(episode.audit.get("failures") or {}), **dict(episode.audit.get("flags") or {})}
        for name, value in marks.items():
            if name not in names:
                names.append(name)
            counts[agent_key(episode)][name] += bool(value)
    rows = [[*key, *(counts[key][name] for name in names)] for key in sorted(counts)]
    return ReportTable(
        title="petri: failure taxonomy (episodes per flag)", columns=[*AGENT_KEY_COLUMNS, *names], rows=rows
    )


def _band_key(episode: Episode) -> tuple[str, str, str, str]:
    difficulty = episode.task.ground_truth.get("difficulty")
    return (*agent_key(episode), str(difficulty.get("band")) if isinstance(difficulty, dict) else "-")


def difficulty_table(episodes: list[Episode]) -> ReportTable:
    """Per (agent, model, condition) and difficulty band: episodes, solve rate, mean score."""
    rows = [
        [*key, band, len(members), success_rate(members), mean_score(members)]
        for (*key, band), members in group_by(scored_episodes(episodes), _band_key)
    ]
    return ReportTable(
        title="petri: difficulty band against outcome",
        columns=[*AGENT_KEY_COLUMNS, "band", "episodes", "solve rate", "mean score"],
        rows=rows,
    )


BANDS = ("easy", "moderate", "hard")


def _oracle_power(episode: Episode) -> float | None:
    difficulty = episode.task.ground_truth.get("difficulty")
    power = difficulty.get("oracle_power") if isinstance(difficulty, dict) else None
    return float(power) if isinstance(power, int | float) else None


def band_prediction_table(episodes: list[Episode]) -> ReportTable:
    """Does the difficulty rating predict failure? Per (agent, model, condition): the solve rate in each band, and
    the rank correlation (Spearman) of each episode's oracle power with its being solved, with its p-value."""
    from scipy.stats import spearmanr  # imported on first use: scipy.stats takes 0.6 s to import

    rows = []
    for key, members in group_by(scored_episodes(episodes), agent_key):
        rated = [(power, bool(e.score.success)) for e in members if (power := _oracle_power(e)) is not None]
        by_band = {band: [e for e in members if _band_key(e)[-1] == band] for band in BANDS}
        rates = [success_rate(by_band[band]) if by_band[band] else "-" for band in BANDS]
        powers, solved = [p for p, _ in rated], [s for _, s in rated]
        if len(set(powers)) > 1 and len(set(solved)) > 1:
            rho, p = spearmanr(powers, solved)
            correlation, p_value = f"{float(rho):.2f}", f"{float(p):.3g}"
        else:
            correlation, p_value = "-", "-"
        rows.append([*key, len(rated), *rates, correlation, p_value])
    return ReportTable(
        title="petri: does the difficulty band predict failure?",
        columns=[*AGENT_KEY_COLUMNS, "episodes", *(f"solve rate {band}" for band in BANDS), "spearman rho", "p"],
        rows=rows,
        notes=[
            "rho: rank correlation of the task's oracle power with the episode being solved; positive when the "
            "harder bands are failed more often ('-' when either is constant)"
        ],
    )


def petri_tables(episodes: list[Episode]) -> list[ReportTable]:
    """Every petri table, in the paper's order."""
    return [
        tier_table(episodes),
        comparison_table(episodes),
        taxonomy_table(episodes),
        difficulty_table(episodes),
        band_prediction_table(episodes),
    ]
