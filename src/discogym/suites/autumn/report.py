"""The autumn suite's report tables: scores by task type and by environment, and exploration behaviour
(Appendix D), one row per (agent, model, condition). Episodes that ended in an error are left out."""

from typing import Any

from discogym.core import Episode, ReportTable
from discogym.core.reporting.report_tables import (
    AGENT_KEY_COLUMNS,
    agent_rows,
    by_agent,
    component_mean,
    mean_score,
    scored_episodes,
)
from discogym.suites.autumn.metrics import CATEGORIES

KINDS = ("mfp", "planning", "cd")


def _kind_scores(members: list[Episode]) -> list[float | None]:
    """The mean score of each task type, in the order of ``KINDS``."""
    return [mean_score(e for e in members if e.score.components.get("kind") == kind) for kind in KINDS]


def _type_cells(members: list[Episode]) -> list[Any]:
    scored = scored_episodes(members)
    return [len(scored), *_kind_scores(scored), mean_score(scored)]


def which_tasks(episodes: list[Episode]) -> str:
    """What the scores are of: our AutumnBench-style environments, AutumnBench's published tasks, or both."""
    official = {e.task.ground_truth.get("category") == "official" for e in episodes}
    if official == {True}:
        return "AutumnBench's published tasks"
    return "AutumnBench-style environments" if official != {True, False} else "AutumnBench-style and published tasks"


def type_table(episodes: list[Episode]) -> ReportTable:
    """Mean score per task type and over all."""
    notes = ["mfp and planning score 0 or 1; cd scores the chosen frame by the spec's late-detection formula"]
    if any(e.task.ground_truth.get("category") == "official" for e in episodes):
        notes.append(
            "published tasks score as the official harness rewards them: mfp 1 or -1, planning 1 or 0, cd its "
            "change_reward from -1 to 1 (docs/autumn-official.md)"
        )
    return ReportTable(
        title=f"autumn ({which_tasks(episodes)}): score by task type",
        columns=[*AGENT_KEY_COLUMNS, "episodes", *KINDS, "all"],
        rows=agent_rows(episodes, _type_cells),
        notes=notes,
    )


def environment_table(episodes: list[Episode]) -> ReportTable:
    """Mean score per environment and task type, with the interaction phase's length and perplexity AUC."""
    rows: list[list[Any]] = []
    for key, members in by_agent(episodes):
        scored = scored_episodes(members)
        for env in sorted({str(e.score.components.get("env")) for e in scored}):
            in_env = [e for e in scored if e.score.components.get("env") == env]
            rows.append(
                [
                    *key,
                    env,
                    *_kind_scores(in_env),
                    component_mean(in_env, "actions"),
                    component_mean(in_env, "perplexity_auc"),
                ]
            )
    return ReportTable(
        title=f"autumn ({which_tasks(episodes)}): score by environment",
        columns=[*AGENT_KEY_COLUMNS, "environment", *KINDS, "interaction actions", "perplexity AUC"],
        rows=rows,
    )


EXPLORATION_COMPONENTS = ("actions", "unique_actions", *(f"unique_{c}" for c in CATEGORIES), "resets",
                          "perplexity_auc", "perplexity_final")  # fmt: skip


def _exploration_cells(members: list[Episode]) -> list[Any]:
    scored = scored_episodes(members)
    return [component_mean(scored, name) for name in EXPLORATION_COMPONENTS]


def exploration_table(episodes: list[Episode]) -> ReportTable:
    """Appendix D: unique actions by category, resets, normalized perplexity (AUC and final), per episode means."""
    return ReportTable(
        title="autumn: exploration (interaction phase)",
        columns=[*AGENT_KEY_COLUMNS, "actions", "unique", *(f"unique {c}" for c in CATEGORIES), "resets",
                 "perplexity AUC", "final perplexity"],
        rows=agent_rows(episodes, _exploration_cells),
        notes=[
            "unique: distinct actions (each click position and each direction once); the category columns are "
            "fractions of them; normalized perplexity over a sliding window of 20 actions (docs/autumn-worldtest.md)"
        ],
    )  # fmt: skip


def autumn_tables(episodes: list[Episode]) -> list[ReportTable]:
    """The suite's tables."""
    return [type_table(episodes), environment_table(episodes), exploration_table(episodes)]
