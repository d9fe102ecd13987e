"""petri's report tables: per agent and tier (with the range of per-pass means), paired comparisons between
agents over tasks (Wilcoxon signed-rank, Holm across the family), the failure taxonomy, difficulty bands."""

from collections import defaultdict
from itertools import combinations
from statistics import fmean

import numpy as np
from scipy.stats import wilcoxon

from discogym.core.episode import Episode
from discogym.core.report import ReportTable
from discogym.suites.petri.stats import ALPHA, holm


def _scored(episodes: list[Episode]) -> list[Episode]:
    return [e for e in episodes if e.score.value is not None]


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _pass_range(members: list[Episode]) -> str:
    """min-max of the per-pass (repeat) mean scores."""
    by_pass: dict[int, list[float]] = defaultdict(list)
    for episode in members:
        by_pass[episode.key.repeat].append(float(episode.score.value or 0.0))
    means = [fmean(scores) for scores in by_pass.values()]
    return f"{min(means):.1f}-{max(means):.1f}" if means else "-"


def tier_table(episodes: list[Episode]) -> ReportTable:
    """Per agent and tier, then overall: mean score, per-pass range, solve rate, mean calls, behaviour flags."""
    groups: dict[tuple[str, str], list[Episode]] = defaultdict(list)
    for episode in _scored(episodes):
        agent = episode.key.agent_label()
        groups[(agent, str(episode.task.params.get("tier")))].append(episode)
        groups[(agent, "all")].append(episode)
    rows = []
    for (agent, tier), members in sorted(groups.items()):
        rows.append(
            [
                agent,
                tier,
                len(members),
                _mean([float(e.score.value or 0.0) for e in members]),
                _pass_range(members),
                _mean([float(bool(e.score.success)) for e in members]),
                _mean([float(e.score.components.get("calls", 0)) for e in members]),
                sum(any(dict(e.audit.get("flags") or {}).values()) for e in members),
            ]
        )
    return ReportTable(
        title="petri: per agent and tier",
        columns=["agent", "tier", "episodes", "mean score", "per-pass range", "solve rate", "mean calls",
                 "behaviour flags"],
        rows=rows,
        notes=["per-pass range: lowest and highest mean over the episodes of one repeat"],
    )  # fmt: skip


def comparison_table(episodes: list[Episode]) -> ReportTable:
    """Every pair of agents over the tasks both played: Wilcoxon signed-rank on per-task mean scores, two-sided,
    Holm across the pairs."""
    per_task: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for episode in _scored(episodes):
        per_task[episode.key.agent_label()][episode.key.task].append(float(episode.score.value or 0.0))
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
        [first, second, count, difference, f"{p:.3g}", f"{p_holm:.3g}", p_holm < ALPHA]
        for (first, second, count, difference, p), p_holm in zip(pairs, adjusted, strict=True)
    ]
    return ReportTable(
        title="petri: paired comparisons (Wilcoxon signed-rank over tasks, Holm across pairs)",
        columns=["agent A", "agent B", "tasks", "mean A - B", "p", "p (Holm)", "significant"],
        rows=rows,
    )


def taxonomy_table(episodes: list[Episode]) -> ReportTable:
    """Per agent: how many episodes show each failure and behavioural flag."""
    names: list[str] = []
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for episode in _scored(episodes):
        marks = {**dict(episode.audit.get("failures") or {}), **dict(episode.audit.get("flags") or {})}
        for name, value in marks.items():
            if name not in names:
                names.append(name)
            counts[episode.key.agent_label()][name] += bool(value)
    rows = [[agent, *(counts[agent][name] for name in names)] for agent in sorted(counts)]
    return ReportTable(title="petri: failure taxonomy (episodes per flag)", columns=["agent", *names], rows=rows)


def difficulty_table(episodes: list[Episode]) -> ReportTable:
    """Per agent and difficulty band: episodes, solve rate, mean score."""
    groups: dict[tuple[str, str], list[Episode]] = defaultdict(list)
    for episode in _scored(episodes):
        difficulty = episode.task.ground_truth.get("difficulty")
        band = str(difficulty.get("band")) if isinstance(difficulty, dict) else "-"
        groups[(episode.key.agent_label(), band)].append(episode)
    rows = [
        [
            agent,
            band,
            len(members),
            _mean([float(bool(e.score.success)) for e in members]),
            _mean([float(e.score.value or 0.0) for e in members]),
        ]
        for (agent, band), members in sorted(groups.items())
    ]
    return ReportTable(
        title="petri: difficulty band against outcome",
        columns=["agent", "band", "episodes", "solve rate", "mean score"],
        rows=rows,
    )


def petri_tables(episodes: list[Episode]) -> list[ReportTable]:
    """Every petri table, in the paper's order."""
    return [tier_table(episodes), comparison_table(episodes), taxonomy_table(episodes), difficulty_table(episodes)]
