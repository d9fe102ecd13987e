"""The autumn suite's report tables: scores by task type and by environment, and exploration behaviour
(Appendix D), one row per (agent, model, condition). Episodes that ended in an error are left out."""

from statistics import fmean
from typing import Any

from discogym.core.episode import Episode
from discogym.core.report import AGENT_KEY_COLUMNS, ReportTable, by_agent, with_components
from discogym.suites.autumn.metrics import CATEGORIES

KINDS = ("mfp", "planning", "cd")


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _score(members: list[Episode], kind: str | None = None) -> float | None:
    chosen = [e for e in members if kind is None or e.score.components.get("kind") == kind]
    return _mean([float(e.score.value or 0.0) for e in chosen])


def _component(members: list[Episode], name: str) -> float | None:
    values = [float(v) for e in members if (v := e.score.components.get(name)) is not None]
    return _mean(values)


def type_table(episodes: list[Episode]) -> ReportTable:
    """Mean score per task type and over all."""
    rows = []
    for key, members in by_agent(episodes):
        scored = with_components(members)
        rows.append([*key, len(scored), *(_score(scored, kind) for kind in KINDS), _score(scored)])
    return ReportTable(
        title="autumn: score by task type",
        columns=[*AGENT_KEY_COLUMNS, "episodes", *KINDS, "all"],
        rows=rows,
        notes=["mfp and planning score 0 or 1; cd scores the chosen frame by the spec's late-detection formula"],
    )


def environment_table(episodes: list[Episode]) -> ReportTable:
    """Mean score per environment and task type, with the interaction phase's length and perplexity AUC."""
    rows: list[list[Any]] = []
    for key, members in by_agent(episodes):
        scored = with_components(members)
        for env in sorted({str(e.score.components.get("env")) for e in scored}):
            in_env = [e for e in scored if e.score.components.get("env") == env]
            rows.append(
                [
                    *key,
                    env,
                    *(_score(in_env, kind) for kind in KINDS),
                    _component(in_env, "actions"),
                    _component(in_env, "perplexity_auc"),
                ]
            )
    return ReportTable(
        title="autumn: score by environment",
        columns=[*AGENT_KEY_COLUMNS, "environment", *KINDS, "interaction actions", "perplexity AUC"],
        rows=rows,
    )


def exploration_table(episodes: list[Episode]) -> ReportTable:
    """Appendix D: unique actions by category, resets, normalized perplexity (AUC and final), per episode means."""
    rows = []
    for key, members in by_agent(episodes):
        scored = with_components(members)
        rows.append(
            [
                *key,
                _component(scored, "actions"),
                _component(scored, "unique_actions"),
                *(_component(scored, f"unique_{name}") for name in CATEGORIES),
                _component(scored, "resets"),
                _component(scored, "perplexity_auc"),
                _component(scored, "perplexity_final"),
            ]
        )
    return ReportTable(
        title="autumn: exploration (interaction phase)",
        columns=[*AGENT_KEY_COLUMNS, "actions", "unique", *(f"unique {c}" for c in CATEGORIES), "resets",
                 "perplexity AUC", "final perplexity"],
        rows=rows,
        notes=[
            "unique: distinct actions (each click position and each direction once); the category columns are "
            "fractions of them; normalized perplexity over a sliding window of 20 actions (docs/autumn-worldtest.md)"
        ],
    )  # fmt: skip


def autumn_tables(episodes: list[Episode]) -> list[ReportTable]:
    """The suite's tables."""
    return [type_table(episodes), environment_table(episodes), exploration_table(episodes)]
