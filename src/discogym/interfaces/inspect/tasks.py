"""discogym's suites as Inspect tasks (``inspect eval discogym/petri``): one sample per (task, condition), the
suite's tools as Inspect tools, one discogym episode per sample, and the suite's own score.

Each sample plays one episode through the harness's recorder, as ``discogym run`` does: the same brief, tools,
seeds (the sample's epoch is the repeat), step limits and scoring, so the same calls score the same. The live
environment cannot live in Inspect's store (the store is written into the log), so it is kept here by the
sample's uuid while the sample runs; the store holds the episode's progress (:class:`EpisodeState`). With
``-T out=DIR`` every episode is also written to a discogym run directory, for ``discogym report``.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai._util.registry import registry_add, registry_info, set_registry_info
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    Content,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef, ToolError
from inspect_ai.util import LimitExceededError, StoreModel

from discogym.core import Episode, Termination, ToolCall, ToolSpec, all_suites, get_suite
from discogym.core.running.episode_loop import EpisodeRecorder, EpisodeStopped
from discogym.core.running.storage import RunDir
from discogym.interfaces.inspect.episodes import LIMIT_MESSAGE, SCORER, replay_sample, sample_episode
from discogym.llm.engine import contents, tool_info, usage_of
from discogym.llm.prompts import SYSTEM_PROMPT  # the words discogym's own model agent starts from

Names = str | list[str] | None  # one name, several separated by commas, or a list


class EpisodeState(StoreModel):
    """The sample's episode as its store records it (and the log keeps): which it is and how far it got. The
    environment itself is not here: it lives in the process (:data:`RUNNING`) while the sample runs."""

    running: str = ""  # the key of the episode in RUNNING (the sample's uuid) while it runs
    episode: str = ""  # its discogym name (the episode file's stem)
    steps: int = 0
    termination: str | None = None


RUNNING: dict[str, EpisodeRecorder] = {}  # the episodes being played, by sample uuid
FINISHED: dict[str, Episode] = {}  # played and scored, waiting for the scorer, by sample uuid


def suite_task(suite_name: str, split: str | None, condition: Names, tasks: Names, out: str | None) -> Task:
    """The Inspect task of one suite: ``split`` (default the first), ``condition`` (names separated by commas,
    ``all``, default the first), ``tasks`` (ids separated by commas, default all of the split)."""
    suite = get_suite(suite_name)
    split = split or suite.splits()[0]
    every_condition = [c.name for c in suite.conditions()]
    conditions = every_condition if condition == "all" else _names(condition) or every_condition[:1]
    for name in conditions:
        suite.condition(name)  # an unknown name is refused here, naming the valid ones
    wanted = _names(tasks)
    chosen = [t for t in suite.tasks(split) if not wanted or t.id in wanted]
    missing = set(wanted) - {t.id for t in chosen}
    if missing:
        raise ValueError(f"split '{split}' of {suite.name} has no task {', '.join(sorted(missing))}")
    samples = [
        Sample(
            id=f"{suite.name}/{t.id}/{name}",
            input=t.brief,
            metadata={"suite": suite.name, "split": split, "task": t.id, "condition": name, "out": out},
        )
        for t in chosen
        for name in conditions
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"discogym-{suite.name}-{split}"),
        solver=play_episode(),
        scorer=suite_score(),
    )


def _names(given: Names) -> list[str]:
    """Names given as ``a,b`` or as a list (``-T tasks=a,b`` arrives as a list: Inspect reads values as YAML)."""
    items = given.split(",") if isinstance(given, str) else given or []
    return [str(name).strip() for name in items if str(name).strip()]


def suite_tasks() -> dict[str, Callable[..., Task]]:
    """An Inspect task for every suite this process knows, the plugin suites included (``discogym/NAME``), each
    with the options of :func:`suite_task`."""
    return {suite.name: _task_of(suite.name, suite.description) for suite in all_suites()}


def _task_of(suite_name: str, description: str) -> Callable[..., Task]:
    def make(split: str | None = None, condition: Names = None, tasks: Names = None, out: str | None = None) -> Task:
        return suite_task(suite_name, split, condition, tasks, out)

    make.__doc__ = f"{description[:1].upper()}{description[1:]}."
    make.__name__ = make.__qualname__ = suite_name.replace("-", "_")
    return task(name=suite_name)(make)


# The episode


@solver
def play_episode() -> Solver:
    """Play the sample's episode: the model calls the suite's tools until the episode ends (the environment
    ends it, the model answers without a tool call, or an Inspect limit stops the sample)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        recorder = sample_episode(state.metadata, str(state.model), state.epoch)
        key = state.uuid
        RUNNING[key] = recorder
        progress = state.store_as(EpisodeState)
        progress.running, progress.episode = key, recorder.planned.key.file_stem()
        try:
            recorder.open()
            context = recorder.context()
            state.messages = [
                ChatMessageSystem(content=context.system_prompt or SYSTEM_PROMPT),
                ChatMessageUser(content=contents(recorder.brief, recorder.brief_images)),
            ]
            state.tools = [_tool(recorder, spec) for spec in recorder.tools]
            while not recorder.over:
                before = len(recorder.events)
                state = await generate(state, tool_calls="single")
                output = state.output
                message, usage = output.message, usage_of(output.usage) if output.usage is not None else None
                progress.steps = len(recorder.events)
                if len(recorder.events) > before:
                    recorder.credit(before + 1, message.text or None, usage)
                elif not recorder.over:
                    recorder.stop(Termination.AGENT_STOPPED, message.text or None, usage)
        except (EpisodeStopped, LimitExceededError):  # the environment failed (env_error), or an Inspect limit
            pass  # stopped the sample (turn_limit): the episode is recorded and scored either way
        except BaseException:  # the model failed (Inspect marks the sample an error): abandoned, as the runner
            RUNNING.pop(key, None)  # abandons an episode cut by a fault, so a retried sample starts afresh
            recorder.abandon()
            raise
        RUNNING.pop(key, None)
        FINISHED[key] = record_sample(recorder, state.metadata.get("out"))
        progress.running, progress.steps = "", len(recorder.events)
        progress.termination = FINISHED[key].outcome.termination
        return state

    return solve


def record_sample(recorder: EpisodeRecorder, out: str | None) -> Episode:
    """End the episode if it is still going (an Inspect limit stopped it), score it, and write it to ``out``."""
    if not recorder.over:
        recorder.stop(Termination.TURN_LIMIT, LIMIT_MESSAGE)
    episode, runtime = recorder.record()
    if out:
        RunDir(Path(out)).write_episode(episode, runtime)
    return episode


def _tool(recorder: EpisodeRecorder, spec: ToolSpec) -> ToolDef:
    async def execute(**arguments: Any) -> str | list[Content]:
        try:
            result = recorder.call(ToolCall(tool=spec.name, args=arguments))
        except EpisodeStopped as err:
            raise ToolError(f"the environment failed: {err}") from None
        if not result.ok:
            raise ToolError(result.text)
        return contents(result.text, result.images)

    return ToolDef(
        execute,
        name=spec.name,
        description=spec.description,
        parameters=tool_info(spec).parameters,
    )


@scorer(metrics=[mean(), stderr()], name=SCORER)
def suite_score() -> Scorer:
    """The suite's score of the sample's episode (0 when the suite gave none), with its components."""

    async def score(state: TaskState, target: Target) -> Score:
        episode = FINISHED.pop(state.uuid, None) or _replayed(state)
        value = episode.score.value
        return Score(
            value=0.0 if value is None else value,
            answer=episode.outcome.termination,
            explanation=episode.outcome.error or episode.outcome.agent_message or None,
            metadata={
                "episode": episode.key.file_stem(),
                "success": episode.score.success,
                "scored": value is not None,
                "components": episode.score.components,
                "steps": len(episode.events),
            },
        )

    return score


def _replayed(state: TaskState) -> Episode:
    """The sample's episode played again from its messages: a sample scored in another process than the one that
    played it (``inspect score LOG``)."""
    progress = state.store_as(EpisodeState)
    return replay_sample(
        state.messages,
        state.metadata,
        model=str(state.model),
        epoch=state.epoch,
        last_words=state.output.message.text if state.output and state.output.choices else None,
        limited=progress.termination == Termination.TURN_LIMIT,
        where=f"sample {state.sample_id} (epoch {state.epoch})",
    )


def _findable_under_its_recorded_name(factory: Callable[[], Scorer]) -> None:
    """Index the scorer also under the name logs record (``discogym/suite_score``, see :data:`SCORER`), where
    ``inspect score LOG`` looks for it, while its scores keep that name. Inspect has no public way to do this."""
    info = registry_info(factory)
    registry_add(factory, info.model_copy(update={"name": SCORER}))
    set_registry_info(factory, info)


_findable_under_its_recorded_name(suite_score)
