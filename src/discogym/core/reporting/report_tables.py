"""Report building blocks: tables that render as markdown, HTML or JSON, and the statistics every suite's
tables share (means of present values, success rates, score components, intervals, grouping).

The statistics use the standard library only: this module is imported whenever a suite is, and scipy's
import alone takes about a second. The tests check them against scipy."""

import html
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from statistics import NormalDist, fmean, stdev
from typing import Any, TypeVar, overload

from discogym.core.model.episode import Episode
from discogym.core.model.report_table import ReportTable

AGENT_KEY_COLUMNS = ["agent", "model", "condition"]
AgentKey = tuple[str, str, str]
GroupKey = TypeVar("GroupKey", bound=tuple[str, ...])


def group_by(episodes: Iterable[Episode], key: Callable[[Episode], GroupKey]) -> list[tuple[GroupKey, list[Episode]]]:
    """The episodes grouped by ``key`` (a tuple of strings), groups in sorted key order, each group in the
    order the episodes came in."""
    groups: dict[GroupKey, list[Episode]] = defaultdict(list)
    for episode in episodes:
        groups[key(episode)].append(episode)
    return sorted(groups.items(), key=lambda item: item[0])


def agent_key(episode: Episode) -> AgentKey:
    """(agent label, model or ``-``, condition with its setting): the key of a row in a suite's own tables."""
    return (episode.key.agent_label(), episode.key.model or "-", episode.key.condition_label())


def by_agent(episodes: Iterable[Episode]) -> list[tuple[AgentKey, list[Episode]]]:
    """Episodes by (agent label, model, condition), in sorted order: the rows of a suite's own tables."""
    return group_by(episodes, agent_key)


def agent_rows(episodes: Iterable[Episode], cells: Callable[[list[Episode]], list[Any]]) -> list[list[Any]]:
    """One row per (agent, model, condition): the key's three cells, then ``cells`` of that group's episodes."""
    return [[*key, *cells(members)] for key, members in by_agent(episodes)]


def scored_episodes(episodes: Iterable[Episode]) -> list[Episode]:
    """The episodes that ran to an end and were scored: not an error, with a score value, a success verdict
    and the suite's score components. Episodes that ended in an error carry none of these."""
    return [
        e
        for e in episodes
        if e.outcome.status != "error"
        and e.score.value is not None
        and e.score.success is not None
        and e.score.components
    ]


def present_mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None; None when no value is present."""
    present = [value for value in values if value is not None]
    return fmean(present) if present else None


def mean_score(episodes: Iterable[Episode]) -> float | None:
    """The mean score over the episodes that have one; None when none has."""
    return present_mean(e.score.value for e in episodes)


def success_rate(episodes: Iterable[Episode]) -> float | None:
    """The fraction of successes among the episodes with a success verdict; None when none has one."""
    return present_mean(None if e.score.success is None else float(e.score.success) for e in episodes)


@overload
def component_value(episode: Episode, name: str, missing: float) -> float: ...
@overload
def component_value(episode: Episode, name: str, missing: None = None) -> float | None: ...
def component_value(episode: Episode, name: str, missing: float | None = None) -> float | None:
    """Score component ``name`` as a number (booleans as 0 or 1); ``missing`` where it is absent, null or not
    a number."""
    value = episode.score.components.get(name)
    return float(value) if isinstance(value, int | float) else missing


def component_mean(episodes: Iterable[Episode], name: str, *, missing: float | None = None) -> float | None:
    """The mean of score component ``name`` over the episodes. With ``missing=None`` episodes without it are
    left out; with a number they count as that number. None when nothing is left to average."""
    return present_mean(component_value(e, name, missing) for e in episodes)


def standard_error(values: Sequence[float]) -> float | None:
    """The standard error of the mean (sample standard deviation over the square root of n); None for fewer
    than two values, where it is undefined."""
    if len(values) < 2:
        return None
    return stdev(values) / math.sqrt(len(values))


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval for a success rate (no continuity correction); None for no trials.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or n successes:
    0 of 10 gives (0, 0.278) at 95%."""
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must lie between 0 and trials, got {successes} of {trials}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if trials == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    rate, z2 = successes / trials, z * z
    centre = (rate + z2 / (2 * trials)) / (1 + z2 / trials)
    half_width = z / (1 + z2 / trials) * math.sqrt(rate * (1 - rate) / trials + z2 / (4 * trials * trials))
    return max(0.0, centre - half_width), min(1.0, centre + half_width)


def success_interval(episodes: Iterable[Episode], confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson interval of the success rate over the episodes with a success verdict; None when none has."""
    verdicts = [e.score.success for e in episodes if e.score.success is not None]
    return wilson_interval(sum(verdicts), len(verdicts), confidence)


def format_cell(value: Any) -> str:
    """How a cell reads in a table: floats to 3 decimals, None as a dash, an interval (a list of two numbers)
    as ``[low, high]``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    return str(value)


def table_markdown(table: ReportTable) -> str:
    """A GitHub-flavoured markdown table with its title and notes."""
    lines = [f"## {table.title}", ""]
    if table.rows:
        lines.append("| " + " | ".join(table.columns) + " |")
        lines.append("|" + "|".join(" --- " for _ in table.columns) + "|")
        for row in table.rows:
            cells = [format_cell(cell).replace("|", "\\|") for cell in row]
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("(no rows)")
    lines.extend(["", *(f"- {note}" for note in table.notes)])
    return "\n".join(lines).rstrip() + "\n"


def table_html(table: ReportTable) -> str:
    """The same table as an HTML fragment."""
    head = "".join(f"<th>{html.escape(col)}</th>" for col in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(format_cell(cell))}</td>" for cell in row) + "</tr>" for row in table.rows
    )
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in table.notes)
    return (
        f"<h2>{html.escape(table.title)}</h2>\n<table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>\n" + (f"<ul>{notes}</ul>\n" if notes else "")
    )
