"""Human baselines: people's scores per problem beside every agent's, in one table.

People play through ``discogym play`` or the web app as agent ``human``, each under a participant id (the web
app's and MCP's ``client`` option). Per problem (suite, task, condition), each participant counts once, with the
score of their first episode (lowest repeat: a second try knows the task). A participant whose first episode
was abandoned (they left, or the server stopped) or empty (not one action) is left out, counted apart, and not
replaced by a later try. The baseline is the percentile of the scores counted that the suite defines
(:attr:`Suite.human_percentile`: AutumnBench's 80th; the median where a paper defines none), given only when at
least ``min_people`` people are counted. Every other agent's mean score on the same problem stands beside it,
with its difference to the baseline.
"""

from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np

from discogym.core.model.episode import Episode
from discogym.core.model.report_table import ReportTable
from discogym.core.model.termination import Termination
from discogym.core.reporting.report_tables import group_by, mean_score, scored_episodes
from discogym.core.terminal.console import plural

HUMAN = "human"
DEFAULT_MIN_PEOPLE = 5
Problem = tuple[str, str, str]  # suite, task, condition (with its setting)


def participant(episode: Episode) -> str:
    """Who played a human episode: its ``client`` option, or ``-`` for a terminal game (``discogym play``)."""
    return episode.key.agent_options.get("client", "-")


def _problem(episode: Episode) -> Problem:
    return (episode.key.suite, episode.key.task, episode.key.condition_label())


# a person's episode that ended so leaves them out of the problem: they left, or the server hosting the game stopped
LEFT = (Termination.ABANDONED, Termination.SERVER_STOPPED)


class PeopleScores(NamedTuple):
    """The people of one problem: one score per participant counted, and how many were left out and why."""

    scores: list[float]
    abandoned: int
    empty: int


def people_scores(episodes: Iterable[Episode]) -> PeopleScores:
    """One score per participant, that of their first episode of the problem (lowest repeat), unless that episode
    was abandoned, cut by the server stopping, or empty: then the participant is left out and counted apart. An
    episode that ended in another error is skipped (its next one counts)."""
    first: dict[str, Episode] = {}
    counted = [e for e in episodes if e.outcome.status != "error" or e.outcome.termination in LEFT]
    for episode in sorted(counted, key=lambda e: e.key.repeat):
        first.setdefault(participant(episode), episode)
    people = PeopleScores([], 0, 0)
    for episode in first.values():
        if episode.outcome.termination in LEFT:
            people = people._replace(abandoned=people.abandoned + 1)
        elif not episode.events:
            people = people._replace(empty=people.empty + 1)
        elif episode.score.value is not None:
            people.scores.append(float(episode.score.value))
    return people


def human_baseline_table(
    episodes: Iterable[Episode], percentile_of: Callable[[str], float], min_people: int = DEFAULT_MIN_PEOPLE
) -> ReportTable | None:
    """People's baseline per problem and each agent's mean score beside it; None when no person played."""
    episodes = list(episodes)
    scored = scored_episodes(episodes)
    if not any(e.key.agent == HUMAN for e in scored):
        return None
    rows = []
    people_episodes = dict(group_by((e for e in episodes if e.key.agent == HUMAN), _problem))
    for problem, members in group_by(scored, _problem):
        people = people_scores(people_episodes.get(problem, []))  # all, ended by the server too: first is first
        scores = people.scores
        percentile = percentile_of(problem[0])
        baseline = float(np.percentile(scores, percentile)) if scores and len(scores) >= min_people else None
        human_mean = float(np.mean(scores)) if scores else None
        rows.append(
            [*problem, HUMAN, "-", len(scores), human_mean, percentile, baseline, None, people.abandoned, people.empty]
        )
        others = [e for e in members if e.key.agent != HUMAN]
        for (agent, model), runs in group_by(others, lambda e: (e.key.agent_label(), e.key.model or "-")):
            mean = mean_score(runs)
            gap = None if mean is None or baseline is None else mean - baseline
            rows.append([*problem, agent, model, len(runs), mean, percentile, baseline, gap, None, None])
    return ReportTable(
        title="human baselines",
        columns=[
            "suite",
            "task",
            "condition",
            "agent",
            "model",
            "people or episodes",
            "mean score",
            "percentile",
            "human baseline",
            "vs baseline",
            "left out: abandoned",
            "left out: empty",
        ],
        rows=rows,
        notes=[
            f"human baseline: the suite's percentile of people's scores on the problem (one score per participant, "
            f"their first episode), given when at least {plural(min_people, 'person', 'people')} played it "
            "(report --min-people); "
            "vs baseline: an agent's mean score minus the baseline; left out: people whose first episode of the "
            "problem was abandoned (they left, or the server stopped) or empty (no action), not counted"
        ],
    )
