"""Conformance: the rules every suite must keep, checked on the suite itself (like Gymnasium's env checker).

:func:`check_suite` runs every check in :data:`CHECKS` and returns what it found; an empty list means the suite
conforms. ``discogym check-suite SUITE`` prints the findings, and tests/core/test_conformance.py runs the
checks on every registered suite. The checks look only through the :class:`~discogym.core.model.suite.Suite`
interface, so they work on any suite, a plugin's included.

A check never stops at the first problem, and an exception raised by the suite becomes a finding of the check
that met it, so one run shows everything that is wrong.
"""

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from discogym.core.model.agent import AgentOptions
from discogym.core.model.episode import Episode, Score
from discogym.core.model.errors import UserError
from discogym.core.model.suite import Suite
from discogym.core.model.task import Condition, Task
from discogym.core.model.tools import MCP_HARNESS_TOOLS, ToolSpec
from discogym.core.running.episode_loop import EpisodeRecorder, EpisodeStopped, score_episode
from discogym.core.running.generic_agents import RandomAgent
from discogym.core.running.planning import plan_episode

_T = TypeVar("_T")

CHECKS: dict[str, str] = {
    "splits": "splits and conditions are listed once each; every split listed gives tasks; an unknown split is a "
    "UserError",
    "task-order": "tasks(split) twice gives the same tasks in the same order",
    "unique-ids": "task ids are unique within a split",
    "task-suite": "every task's suite field is the suite's name",
    "same-env": "make_env twice with the same task, condition and seed gives the same brief, pictures and tool specs",
    "random-episodes": "episodes of the random agent end without an environment error",
    "deterministic-episodes": "random-agent episodes played twice with the same seeds are byte-identical",
    "rescore": "scoring a stored episode again gives the stored score",
    "score-range": "every score lies in the range the suite declares (Suite.score_range)",
    "ground-truth-leak": "no distinctive ground-truth value appears in a brief, a tool spec or a tool result",
    "harness-tools": "no suite tool is named like one of the MCP server's own tools",
    "tool-schemas": "tool names are unique and valid for model APIs; descriptions are set and free of developer "
    "markup; schemas carry no made-up titles or docstrings, and every $ref resolves",
}
"""Every check by name, with the rule it enforces."""

DEFAULT_EPISODES = 3
DEFAULT_MAX_STEPS = 40
RANDOM_AGENT = AgentOptions(name="random")
UNKNOWN_SPLIT = "no-such-split (conformance check)"

# Ground-truth values that count as distinctive: strings this long, integers this large, non-integral floats
# written with this many significant digits. Shorter values (0, 1, "up", "red", a step limit) turn up in
# agent-facing text by chance; these do not.
MIN_SECRET_CHARS = 12
MIN_SECRET_INT = 100_000
MIN_SECRET_DIGITS = 5

API_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what OpenAI's and Anthropic's tool APIs both accept
DEVELOPER_MARKUP = re.compile(r"``|:(?:class|func|meth|attr|mod|data|exc|obj|ref):`")


class Finding(BaseModel):
    """One way a suite breaks a rule: the check's name (a key of :data:`CHECKS`) and what was found."""

    model_config = ConfigDict(frozen=True)

    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


@dataclass
class _EnvView:
    """What an agent is shown when an environment opens."""

    brief: str
    pictures: list[str]
    tools: list[ToolSpec]


@dataclass
class _Findings:
    """Findings gathered so far, each kept once, in the order found."""

    items: list[Finding] = field(default_factory=list)

    def add(self, check: str, message: str) -> None:
        finding = Finding(check=check, message=message)
        if finding not in self.items:
            self.items.append(finding)

    def guarded(self, check: str, what: str, run: Callable[[], _T]) -> _T | None:
        """``run()``, or None with a finding when the suite's code raised."""
        try:
            return run()
        except Exception as err:
            self.add(check, f"{what} raised {type(err).__name__}: {err}")
            return None


def check_suite(
    suite: Suite, *, episodes: int = DEFAULT_EPISODES, max_steps: int = DEFAULT_MAX_STEPS, seed: int = 0
) -> list[Finding]:
    """Run every check of :data:`CHECKS` on ``suite``; an empty list means it conforms.

    The environment checks use the first ``episodes`` tasks of the default split under every condition. Each
    of those tasks is played twice by the generic random agent (under the conditions in turn, from seed
    ``seed``), cut after ``max_steps`` calls if it has not ended by then.
    """
    found = _Findings()
    conditions = found.guarded("splits", "conditions()", suite.conditions) or []
    tasks_by_split = _check_splits(suite, conditions, found)
    splits = list(tasks_by_split)
    if not splits or not conditions:
        return found.items
    sample = tasks_by_split[splits[0]][:episodes]
    views = _check_envs(suite, sample, conditions, seed, found)
    for view in views.values():
        _check_tool_specs(view.tools, found)
    played = _check_episodes(suite, sample, conditions, seed, max_steps, found)
    _check_leaks(sample, views, played, found)
    return found.items


def _check_splits(suite: Suite, conditions: list[Condition], found: _Findings) -> dict[str, list[Task]]:
    """The tasks of every split that gives some, checking the listing rules on the way."""
    splits = found.guarded("splits", "splits()", suite.splits) or []
    if not splits:
        found.add("splits", "the suite lists no split")
    if not conditions:
        found.add("splits", "the suite lists no condition")
    for kind, names in (("split", splits), ("condition", [c.name for c in conditions])):
        for name in sorted({n for n in names if names.count(n) > 1}):
            found.add("splits", f"{kind} '{name}' is listed more than once")
    _check_unknown_split(suite, found)
    tasks_by_split: dict[str, list[Task]] = {}
    for split in dict.fromkeys(splits):
        tasks = _check_split(suite, split, found)
        if tasks:
            tasks_by_split[split] = tasks
    return tasks_by_split


def _check_unknown_split(suite: Suite, found: _Findings) -> None:
    try:
        suite.tasks(UNKNOWN_SPLIT)
    except UserError:
        return
    except Exception as err:
        found.add("splits", f"an unknown split raised {type(err).__name__}, not UserError: {err}")
        return
    found.add("splits", f"tasks({UNKNOWN_SPLIT!r}) returned instead of raising UserError")


def _not_here(suite: Suite, split: str) -> bool:
    """Whether ``split`` needs data this machine does not have (autumn's official set before it is fetched): it
    cannot be counted offline and asking for its tasks raises a UserError. Such a split is not checked."""
    try:
        if suite.task_count(split) is not None:
            return False
        suite.tasks(split)
    except UserError:
        return True
    except Exception:  # reported by the checks that follow
        return False
    return False


def _check_split(suite: Suite, split: str, found: _Findings) -> list[Task]:
    if _not_here(suite, split):
        return []
    first = found.guarded("splits", f"tasks('{split}')", lambda: suite.tasks(split))
    second = found.guarded("splits", f"tasks('{split}') called again", lambda: suite.tasks(split))
    if first is None or second is None:
        return []
    if not first:
        found.add("splits", f"split '{split}' has no tasks")
    ids = [task.id for task in first]
    if ids != [task.id for task in second]:
        found.add("task-order", f"tasks('{split}') gave the tasks in another order (or others) the second time")
    elif any(a != b for a, b in zip(first, second, strict=True)):
        changed = next(a.id for a, b in zip(first, second, strict=True) if a != b)
        found.add("task-order", f"tasks('{split}') gave task '{changed}' with other content the second time")
    for task_id in sorted({i for i in ids if ids.count(i) > 1}):
        found.add("unique-ids", f"split '{split}' has more than one task '{task_id}'")
    for task in first:
        if task.suite != suite.name:
            found.add("task-suite", f"task '{task.id}' of split '{split}' says suite '{task.suite}'")
    return first


def _open(suite: Suite, task: Task, condition: Condition, seed: int) -> _EnvView:
    env = suite.make_env(task, condition, seed)
    return _EnvView(env.brief(), [image.data_base64 for image in env.brief_images()], env.tool_specs())


def _check_envs(
    suite: Suite, sample: list[Task], conditions: list[Condition], seed: int, found: _Findings
) -> dict[tuple[str, str], _EnvView]:
    """The view of every (task, condition) of the sample, checking that a second environment shows the same."""
    views: dict[tuple[str, str], _EnvView] = {}
    for task in sample:
        for condition in conditions:
            where = f"make_env('{task.id}', '{condition.name}')"
            opening = partial(_open, suite, task, condition, seed)
            first = found.guarded("same-env", where, opening)
            second = found.guarded("same-env", where, opening)
            if first is None or second is None:
                continue
            views[(task.id, condition.name)] = first
            for part in ("brief", "pictures", "tools"):
                if getattr(first, part) != getattr(second, part):
                    found.add("same-env", f"{where} twice with seed {seed} gave different {part}")
    return views


def _check_tool_specs(specs: list[ToolSpec], found: _Findings) -> None:
    names = [spec.name for spec in specs]
    for name in sorted({n for n in names if names.count(n) > 1}):
        found.add("tool-schemas", f"more than one tool is named '{name}'")
    for spec in specs:
        if spec.name in MCP_HARNESS_TOOLS:
            found.add("harness-tools", f"tool '{spec.name}' has the name of an MCP server tool")
        for problem in tool_spec_problems(spec):
            found.add("tool-schemas", f"tool '{spec.name}': {problem}")


def tool_spec_problems(spec: ToolSpec) -> list[str]:
    """What is wrong with one tool's agent-facing description, in words (none when it is clean)."""
    problems: list[str] = []
    if not API_TOOL_NAME.fullmatch(spec.name):
        problems.append("its name is not 1-64 letters, digits, '_' or '-' (what model APIs accept)")
    if not spec.description.strip():
        problems.append("it has no description")
    elif DEVELOPER_MARKUP.search(spec.description):
        problems.append(f"its description has developer markup: {spec.description!r}")
    schema = spec.parameters
    if schema.get("type") != "object":
        problems.append("its parameters are not a JSON schema of type 'object'")
    definitions = schema.get("$defs", {})
    for where, class_schema in [("the argument model", schema), *((f"$defs/{k}", v) for k, v in definitions.items())]:
        for keyword in ("title", "description"):
            if isinstance(class_schema, dict) and keyword in class_schema:
                problems.append(f"{where} has a class {keyword} (developers' text): {class_schema[keyword]!r}")
    for path, subschema in schema_nodes(schema):
        problems.extend(_node_problems(path, subschema, definitions))
    return problems


def _node_problems(path: str, subschema: dict[str, Any], definitions: dict[str, Any]) -> Iterator[str]:
    parent, _, name = path.rpartition("/")
    if parent.endswith("/properties") and subschema.get("title") == name.title().replace("_", " ").strip():
        yield f"{path} has the title pydantic makes up from its name: {subschema['title']!r}"
    description = subschema.get("description")
    if path and isinstance(description, str) and DEVELOPER_MARKUP.search(description):
        yield f"{path} has developer markup in its description: {description!r}"
    ref = subschema.get("$ref")
    if isinstance(ref, str) and ref != "#" and ref.removeprefix("#/$defs/") not in definitions:
        yield f"{path} refers to {ref!r}, which is not in $defs"


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")


def schema_nodes(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (sub)schema of a JSON schema with its JSON-pointer path (``""`` for the root), looking only where
    JSON Schema keeps subschemas: a property named ``title`` is walked as a property, never taken for a title."""
    yield path, schema
    for keyword in _SCHEMA_MAPS:
        members = schema.get(keyword)
        if isinstance(members, dict):
            for name, sub in members.items():
                if isinstance(sub, dict):
                    yield from schema_nodes(sub, f"{path}/{keyword}/{name}")
    for keyword in _SCHEMA_LISTS:
        members = schema.get(keyword)
        if isinstance(members, list):
            for index, sub in enumerate(members):
                if isinstance(sub, dict):
                    yield from schema_nodes(sub, f"{path}/{keyword}/{index}")
    for keyword in _SCHEMA_ONE:
        sub = schema.get(keyword)
        if isinstance(sub, dict):
            yield from schema_nodes(sub, f"{path}/{keyword}")


def play_random_episode(suite: Suite, task: Task, condition: Condition, seed: int, max_steps: int) -> Episode:
    """One scored episode of the generic random agent (not a suite's solver of that name), cut after
    ``max_steps`` calls (termination ``conformance_step_cap``) if it has not ended by then."""
    recorder = EpisodeRecorder(suite, plan_episode(suite.name, task, condition, RANDOM_AGENT, 0, seed))
    try:
        with suppress(EpisodeStopped):
            _random_loop(recorder, max_steps)
        return recorder.record()[0]
    except BaseException:
        recorder.abandon()
        raise


def _random_loop(recorder: EpisodeRecorder, max_steps: int) -> None:
    """The runner's episode driver with the generic random agent, and a cap on the calls."""
    recorder.open()
    recorder.play(recorder.start_agent(recorder.make_agent(RandomAgent())), max_calls=max_steps)


def _check_episodes(
    suite: Suite, sample: list[Task], conditions: list[Condition], seed: int, max_steps: int, found: _Findings
) -> list[Episode]:
    """Play each sampled task twice (conditions in turn) and check the pair; the first of each pair is kept."""
    played: list[Episode] = []
    for index, task in enumerate(sample):
        condition = conditions[index % len(conditions)]
        where = f"task '{task.id}', condition '{condition.name}'"
        playing = partial(play_random_episode, suite, task, condition, seed, max_steps)
        first = found.guarded("random-episodes", f"an episode of {where}", playing)
        second = found.guarded("random-episodes", f"an episode of {where}", playing)
        if first is None or second is None:
            continue
        played.append(first)
        if first.outcome.status == "error":
            found.add(
                "random-episodes", f"the random agent's episode of {where} ended in an error: {first.outcome.error}"
            )
        if first.to_json() != second.to_json():
            found.add("deterministic-episodes", f"two random-agent episodes of {where} with seed {seed} differ")
        _check_rescore(suite, first, where, found)
        _check_score_range(suite, first, where, found)
    return played


def _check_rescore(suite: Suite, episode: Episode, where: str, found: _Findings) -> None:
    stored = Episode.model_validate_json(episode.to_json())
    fresh = stored.model_copy(update={"score": Score(), "audit": {}})
    rescored = found.guarded("rescore", f"scoring the episode of {where} again", lambda: score_episode(suite, fresh))
    if rescored is not None and rescored.score.model_dump(mode="json") != episode.score.model_dump(mode="json"):
        found.add(
            "rescore",
            f"the stored episode of {where} scores {rescored.score.model_dump(mode='json')} again, "
            f"not {episode.score.model_dump(mode='json')}",
        )


def _check_score_range(suite: Suite, episode: Episode, where: str, found: _Findings) -> None:
    low, high = suite.score_range
    value = episode.score.value
    if value is not None and not low <= value <= high:
        found.add("score-range", f"the episode of {where} scores {value:g}, outside the declared {low:g} to {high:g}")


def secret_values(task: Task) -> list[str]:
    """The text forms of the task's distinctive ground-truth values that the agent may not already know.

    A leaf value of ``task.ground_truth`` is distinctive when it is a string of at least
    :data:`MIN_SECRET_CHARS` characters, an integer of magnitude at least :data:`MIN_SECRET_INT`, or a
    non-integral float written with at least :data:`MIN_SECRET_DIGITS` significant digits (booleans, None
    and short values are left out: they turn up in any text by chance). Values that also appear in what the
    agent may see anyway (the task's id, suite, split and ``params``) are left out too.
    """
    public = _haystack([task.id, task.suite, task.split, task.params])
    secrets = {_secret_form(leaf) for leaf in _leaves(task.ground_truth)}
    return sorted(s for s in secrets if s is not None and not occurs(s, public))


def _secret_form(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value.strip() if len(value.strip()) >= MIN_SECRET_CHARS else None
    if isinstance(value, int):
        return str(value) if abs(value) >= MIN_SECRET_INT else None
    if isinstance(value, float) and not value.is_integer():
        text = repr(value)
        digits = text.lower().split("e")[0].replace("-", "").replace(".", "").lstrip("0")
        return text if len(digits) >= MIN_SECRET_DIGITS else None
    return None


def _leaves(value: object) -> Iterator[object]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _haystack(values: Sequence[object]) -> str:
    """Every string, number and dict key in ``values``, one per line: the text a secret is looked for in."""
    lines: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                lines.append(str(key))
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, BaseModel):
            walk(value.model_dump(mode="json"))
        elif value is not None:
            lines.append(repr(value) if isinstance(value, float) else str(value))

    walk(list(values))
    return "\n".join(lines)


def occurs(secret: str, text: str) -> bool:
    """Whether ``secret`` is in ``text``; a number only as a whole number (``0.12345`` is not in ``10.123456``)."""
    if not re.fullmatch(r"-?[0-9.]+(?:e[-+]?[0-9]+)?", secret):
        return secret in text
    return re.search(rf"(?<![0-9.]){re.escape(secret)}(?![0-9])", text) is not None


def _check_leaks(
    sample: list[Task], views: dict[tuple[str, str], _EnvView], played: list[Episode], found: _Findings
) -> None:
    for task in sample:
        secrets = secret_values(task)
        if not secrets:
            continue
        places: list[tuple[str, object]] = [("the task's brief", task.brief)]
        for (task_id, condition), view in views.items():
            if task_id == task.id:
                places += [
                    (f"the brief under '{condition}'", view.brief),
                    (f"the tools under '{condition}'", view.tools),
                ]
        for where, content in places:
            _report_leaks(task, secrets, where, _haystack([content]), found)
        for episode in played:
            if episode.task.id == task.id:
                _check_episode_leaks(episode, secrets, found)


def _check_episode_leaks(episode: Episode, secrets: list[str], found: _Findings) -> None:
    """Results may repeat what the agent itself sent: those values are not leaks."""
    said = _haystack([event.call.args for event in episode.events])
    unsaid = [secret for secret in secrets if not occurs(secret, said)]
    for event in episode.events:
        shown = _haystack([event.result.text, event.result.error, event.result.data])
        _report_leaks(episode.task, unsaid, f"the result of call {event.step} ({event.call.tool})", shown, found)


def _report_leaks(task: Task, secrets: list[str], where: str, text: str, found: _Findings) -> None:
    for secret in secrets:
        if occurs(secret, text):
            shown = secret if len(secret) <= 60 else secret[:57] + "..."
            found.add("ground-truth-leak", f"task '{task.id}': {where} shows the ground-truth value {shown!r}")
