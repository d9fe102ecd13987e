"""A sample of a discogym Inspect task and the discogym episode it plays: how the episode is planned (as
``discogym run`` plans it) and how it is played again from a sample's messages, so that a score always comes
from the logged calls, in the process that played them or in any other (``inspect score``, ``discogym report``).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discogym.core import AgentOptions, Episode, Suite, Termination, ToolCall, UserError, get_suite
from discogym.core.running.agent_lookup import resolve_agent_name
from discogym.core.running.episode_loop import EpisodeRecorder, EpisodeStopped
from discogym.core.running.planning import MAX_PLANNED_EPISODES, plan_episode

PROVIDER = "discogym"  # the offline model provider: --model discogym/reference, discogym/random, ...
INSPECT_AGENT = "inspect"  # the agent name of episodes played by an Inspect model of another provider
LIMIT_MESSAGE = "an Inspect limit ended the sample"
STORED_TERMINATION = "EpisodeState:termination"  # where a sample's store keeps how its episode ended
# The scorer's name as logs record it. Inspect records a scorer without its package, and ``inspect score LOG`` in a
# new process finds a package's scorer only under a name that starts with the package: hence the prefix, which the
# scorer's own name carries (registered as discogym/discogym/suite_score, recorded as discogym/suite_score).
SCORER = "discogym/suite_score"


def agent_of(suite: Suite, model: str) -> AgentOptions:
    """The discogym agent a sample's episode is keyed under: ``discogym/NAME`` plays the suite's agent NAME
    (keyed as ``discogym run --agent NAME`` keys it, so the two give the same episode); any other model is
    agent ``inspect`` with that model."""
    provider, _, name = model.partition("/")
    if provider == PROVIDER:
        return AgentOptions(name=resolve_agent_name(suite, name))
    return AgentOptions(name=INSPECT_AGENT, model=model)


class SampleIdentity(BaseModel):
    """What a sample says of its episode: the metadata's suite, split, task and condition (strings) and its epoch
    (the repeat plus one, within what a run may plan)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    suite: str
    split: str
    task: str
    condition: str
    epoch: int = Field(ge=1, le=MAX_PLANNED_EPISODES)


def sample_identity(metadata: Mapping[str, Any], epoch: int, where: str) -> SampleIdentity:
    """The sample's identity, or a one-line UserError naming the sample (``where``) and its first bad field."""
    fields = ("suite", "split", "task", "condition")
    if not set(fields) <= set(metadata):
        raise UserError(f"{where} is not a discogym sample (its metadata names no suite, split, task, condition)")
    try:
        return SampleIdentity.model_validate({**{name: metadata[name] for name in fields}, "epoch": epoch})
    except ValidationError as err:
        error = err.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else "metadata"
        field = name if name == "epoch" else f"metadata.{name}"
        shown = repr(error["input"])
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise UserError(f"{where}: {field} {shown} is not valid ({error['msg'].lower()})") from None


def sample_episode(metadata: Mapping[str, Any], model: str, epoch: int, where: str = "the sample") -> EpisodeRecorder:
    """The driver of a sample's episode, planned as ``discogym run`` plans it (the epoch is the repeat)."""
    identity = sample_identity(metadata, epoch, where)
    try:
        suite = get_suite(identity.suite)
        tasks = {task.id: task for task in suite.tasks(identity.split)}
        if identity.task not in tasks:
            raise UserError(f"split '{identity.split}' has no task {identity.task!r}")
        condition = suite.condition(identity.condition)
    except UserError as err:
        raise UserError(f"{where}: {err}") from None
    planned = plan_episode(
        suite.name, tasks[identity.task], condition, agent_of(suite, model), repeat=identity.epoch - 1, run_seed=0
    )
    return EpisodeRecorder(suite, planned)


def replay_sample(
    messages: Sequence[ChatMessage],
    metadata: Mapping[str, Any],
    *,
    model: str,
    epoch: int,
    last_words: str | None,
    limited: bool,
    where: str,
) -> Episode:
    """The episode of a sample, played again from its messages: each tool call the model made is made again in a
    fresh environment, and a result that differs from the logged one is a UserError. ``limited`` says that an
    Inspect limit ended the sample; ``last_words`` are the model's final answer."""
    recorder = sample_episode(metadata, model, epoch, where)
    recorder.open()
    results = {m.tool_call_id: m for m in messages if isinstance(m, ChatMessageTool)}
    try:
        try:
            for message in messages:
                if isinstance(message, ChatMessageAssistant):
                    _replay_turn(recorder, message, results, where)
            if not recorder.over:
                if limited:
                    recorder.stop(Termination.TURN_LIMIT, LIMIT_MESSAGE)
                else:
                    recorder.stop(Termination.AGENT_STOPPED, last_words or None)
        except EpisodeStopped:  # the environment failed again where it failed when the sample was played
            pass
        episode, _ = recorder.record()
    except BaseException:
        recorder.abandon()
        raise
    return episode


def _replay_turn(
    recorder: EpisodeRecorder, message: ChatMessageAssistant, results: dict[str | None, ChatMessageTool], where: str
) -> None:
    for number, call in enumerate(message.tool_calls or []):
        logged = results.get(call.id)
        if logged is not None and logged.error is not None and logged.error.type == "parsing":
            continue  # Inspect refused the arguments: the call never reached the environment
        text = message.text or None if number == 0 else None
        result = recorder.call(ToolCall(tool=call.function, args=call.arguments), message=text)
        if logged is not None and (logged.error.message if logged.error else logged.text) != result.text:
            raise UserError(f"{where}: call {call.id} gave another result than the log's")
