"""Rescoring from the log: what the suites' verdict replays share, and the cross-checks of a stored episode.

Every suite recomputes its verdict from an episode's events (the logged calls and results) and the task;
the environment's own summary, ``outcome.env``, is only a cached copy. The scorer compares the two and lists
the fields on which they disagree in the score component :data:`CACHE_MISMATCH`; the score itself always
comes from the events. ``discogym report`` prints one warning line per such episode, one per episode whose
stored score is not the one recomputed from its log, and one per episode its run did not plan.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from discogym.core.model.episode import Episode, Score
from discogym.core.model.jsonsafe import json_safe
from discogym.core.model.tools import Tool, ToolCall, parse_args_object

if TYPE_CHECKING:  # the suites import this module; planning imports the suite registry
    from discogym.core.running.episode_loop import PlannedEpisode

CACHE_MISMATCH = "cache_mismatch"


def cache_mismatch(recomputed: Mapping[str, Any], cached: Mapping[str, Any]) -> list[str]:
    """The names of the recomputed fields whose cached copy (an episode's ``outcome.env``) is missing or
    differs, sorted. Values are compared in their stored JSON form."""
    return sorted(name for name, value in recomputed.items() if name not in cached or json_safe(value) != cached[name])


def mismatched_fields(episode: Episode) -> list[str]:
    """The fields its scorer found to disagree with the cached outcome, or [] (none, or not cross-checked)."""
    fields = episode.score.components.get(CACHE_MISMATCH)
    return [str(name) for name in fields] if isinstance(fields, list) else []


def mismatch_warning(episode: Episode) -> str | None:
    """One line saying that the episode's cached outcome disagrees with its log (``discogym report`` prints it as
    a warning), or None when it agrees."""
    fields = mismatched_fields(episode)
    if not fields:
        return None
    return (
        f"episode {episode.key.file_stem()}: its cached outcome (outcome.env) disagrees with its log on "
        f"{', '.join(fields)}; the score comes from the log"
    )


def _verdict(score: Score) -> str:
    if score.value is None:
        return "no score" + (f" ({score.error})" if score.error else "")
    return f"{score.value:g} ({'success' if score.success else 'no success'})"


def score_warning(stored: Episode, recomputed: Episode) -> str | None:
    """One line saying that the stored score (value or success) is not the one recomputed from the episode's
    log, or None when they agree."""
    if (stored.score.value, stored.score.success) == (recomputed.score.value, recomputed.score.success):
        return None
    return (
        f"episode {stored.key.file_stem()}: its stored score {_verdict(stored.score)} is not the score "
        f"recomputed from its log, {_verdict(recomputed.score)}; the report uses the recomputed one"
    )


def made_as_planned(episode: Episode, planned: "PlannedEpisode") -> bool:
    """True when the stored episode is the planned one: the same key, played with the seeds the plan derives
    for it (an episode copied from a run with another seed, or whose key was edited, is not)."""
    recorded = episode.provenance
    return episode.key == planned.key and (recorded.run_seed, recorded.env_seed, recorded.agent_seed) == (
        planned.run_seed,
        planned.env_seed,
        planned.agent_seed,
    )


def accepted_args(tools: Sequence[Tool], call: ToolCall) -> BaseModel | None:
    """A logged call's arguments validated as :meth:`discogym.core.model.env.Env.call` validates them before it runs
    a tool, or None when the environment refused the call (an unknown tool, malformed arguments)."""
    chosen = next((tool for tool in tools if tool.name == call.tool), None)
    if chosen is None:
        return None
    try:
        return chosen.args_model.model_validate(parse_args_object(call.args))
    except ValueError:
        return None
