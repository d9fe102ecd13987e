"""discogym episodes and Inspect logs, both ways.

- :func:`export_run`: a run directory's episodes as Inspect logs (one ``.eval`` per agent), which ``inspect view``
  opens: each episode a sample (its epoch the repeat), the brief, each call as a tool call with its result, the
  suite's score.
- :func:`episodes_of_log`: the discogym episodes of an Inspect log of discogym tasks, for ``discogym report``.
  Scores are not read from the log: each sample's tool calls are played again in a fresh environment (the
  sample's task, condition and repeat) and scored by the suite, and a result that differs from the log's is an
  error, so the verdict comes from the logged calls alone. The log is read one sample at a time, within the
  bounds of :mod:`discogym.interfaces.inspect.log_entries`.
"""

import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import BinaryIO
from zipfile import ZipInfo

from inspect_ai.event import CompactionEvent, Event, InfoEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolCallError
from scipy import stats

from discogym.core import Episode, Termination, UserError
from discogym.core.running.storage import RunDir
from discogym.interfaces.inspect.episodes import PROVIDER, SCORER, STORED_TERMINATION, replay_sample
from discogym.interfaces.inspect.log_entries import HEADERS, check_log_archive, is_sample, read_json_entry, validated
from discogym.llm.prompts import SYSTEM_PROMPT

NO_DATE = "1970-01-01T00:00:00+00:00"  # a run whose sidecars are gone: the export's date must not be today's


def export_run(run_dir: Path, out: Path) -> list[Path]:
    """Write the run's episodes as Inspect logs into the folder ``out``, one per agent; return their paths."""
    run = RunDir(run_dir)
    by_agent: dict[str, list[Episode]] = defaultdict(list)
    for episode in sorted(run.iter_episodes(), key=lambda e: e.key.file_stem()):
        by_agent[episode.key.agent_label()].append(episode)
    if not by_agent:
        raise UserError(f"{run_dir} holds no episodes")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for label, episodes in sorted(by_agent.items()):
        suites = {episode.key.suite for episode in episodes}
        name = "_".join(sorted(suites)) + "_" + "".join(c if c.isalnum() or c in "-_" else "-" for c in label)
        path = out / f"{name}.eval"
        write_eval_log(eval_log(episodes, _started(run, episodes)), str(path))
        written.append(path)
    return written


def _started(run: RunDir, episodes: list[Episode]) -> str:
    """When the first of the episodes started, from the sidecars (the log's date), if they are there."""
    times = []
    for episode in episodes:
        path = run.runtime_path(episode.key)
        if path.is_file():
            times.append(json.loads(path.read_text()).get("started_at", NO_DATE))
    return min(times, default=NO_DATE)


def eval_log(episodes: list[Episode], created: str) -> EvalLog:
    """One agent's episodes as an Inspect log."""
    first = episodes[0].key
    model = first.model or f"{PROVIDER}/{first.agent}"
    samples = [_sample(episode, created) for episode in episodes]
    values = [float(sample.scores[SCORER].value) for sample in samples if sample.scores]  # type: ignore[arg-type]
    metrics = {"mean": EvalMetric(name="mean", value=sum(values) / len(values))}
    if len(values) > 1:
        metrics["stderr"] = EvalMetric(name="stderr", value=float(stats.sem(values)))
    return EvalLog(
        status="success",
        eval=EvalSpec(
            created=created,
            task=f"discogym/{first.suite}",
            model=model,
            config=EvalConfig(),
            dataset=EvalDataset(
                name=f"discogym-{first.suite}-{episodes[0].task.split}",
                samples=len(samples),
                sample_ids=sorted({str(sample.id) for sample in samples}),
            ),
            task_args={"split": episodes[0].task.split},
        ),
        results=EvalResults(
            total_samples=len(samples),
            completed_samples=len(samples),
            scores=[EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)],
        ),
        stats=EvalStats(started_at=created, completed_at=created),
        samples=samples,
    )


def _memory_events(episode: Episode, created: str) -> list[Event]:
    """The episode's compactions as Inspect's compaction events and its notes as info events, in order, with
    ids and times derived from the episode (not drawn at random nor read from the clock)."""
    when = datetime.fromisoformat(created)
    entries = [(event.step, entry) for event in episode.events for entry in event.memory] + [
        (len(episode.events) + 1, entry) for entry in episode.outcome.final_memory
    ]
    events: list[Event] = []
    for number, (step, entry) in enumerate(entries, start=1):
        data = entry.model_dump(mode="json")
        uuid = f"{episode.key.file_stem()}-memory-{number}"
        common = {"uuid": uuid, "span_id": None, "timestamp": when, "working_start": 0.0}
        if entry.kind == "compaction":
            metadata = {"step": step, **data}
            events.append(CompactionEvent(type="summary", source="discogym", metadata=metadata, **common))
        else:
            events.append(InfoEvent(source="discogym notes", data=data, metadata={"step": step}, **common))
    return events


def _sample(episode: Episode, created: str) -> EvalSample:
    key = episode.key
    messages: list[ChatMessage] = [ChatMessageSystem(content=SYSTEM_PROMPT), ChatMessageUser(content=episode.brief)]
    for event in episode.events:
        call_id = f"call_{event.step}"
        args = event.call.args if isinstance(event.call.args, dict) else {"value": event.call.args}
        call = InspectToolCall(id=call_id, function=event.call.tool, arguments=args)
        messages.append(ChatMessageAssistant(content=event.agent_message or "", tool_calls=[call]))
        error = None if event.result.ok else ToolCallError(type="unknown", message=event.result.text)
        content = "" if error else event.result.text
        messages.append(ChatMessageTool(content=content, tool_call_id=call_id, function=event.call.tool, error=error))
    last = episode.outcome.agent_message or ""
    if last:
        messages.append(ChatMessageAssistant(content=last))
    value = episode.score.value
    return EvalSample(
        id=f"{key.suite}/{key.task}/{key.condition}",
        epoch=key.repeat + 1,
        input=episode.brief,
        target="",
        messages=messages,
        output=ModelOutput.from_content(key.model or key.agent, last),
        scores={
            SCORER: Score(
                value=0.0 if value is None else value,
                answer=episode.outcome.termination,
                metadata={"episode": key.file_stem(), "success": episode.score.success, "scored": value is not None},
            )
        },
        metadata={"suite": key.suite, "split": episode.task.split, "task": key.task, "condition": key.condition},
        events=_memory_events(episode, created),
    )


def episodes_of_log(path: Path) -> list[Episode]:
    """The discogym episodes of an Inspect log of discogym tasks, replayed from its tool calls and scored, in the
    order Inspect reads its samples. The samples are read one at a time, each dropped once replayed, so reading
    takes the memory of one sample, never the log's (bounded in :mod:`discogym.interfaces.inspect.log_entries`)."""
    entries = check_log_archive(path)
    with path.open("rb") as file:
        model = _model_of(file, entries, path)
        replayed = [_replayed(file, entry, model, path) for name, entry in entries.items() if is_sample(name)]
    return [episode for _, episode in sorted(replayed, key=lambda pair: pair[0])]


def _model_of(file: BinaryIO, entries: dict[str, ZipInfo], path: Path) -> str:
    """The model the log's samples were played with: its header's eval spec (a finished log's header.json, an
    unfinished one's journal start), the one part of the header a report needs."""
    name = next((name for name in HEADERS if name in entries), None)
    if name is None:
        raise UserError(f"{path} is not an Inspect log: it holds no {' or '.join(HEADERS)}")
    document = read_json_entry(file, entries[name], path)
    spec = document.get("eval") if isinstance(document, dict) else None
    return validated(EvalSpec, spec, f"{path} entry {name!r} eval").model


def _replayed(file: BinaryIO, entry: ZipInfo, model: str, path: Path) -> tuple[tuple[int, str], Episode]:
    """The episode of one sample entry, and where Inspect puts the sample in order (by epoch, then id, a number
    id padded so that numbers sort as numbers); the sample itself is dropped on return."""
    sample = validated(EvalSample, read_json_entry(file, entry, path), f"{path} entry {entry.filename!r}")
    order = (sample.epoch, sample.id if isinstance(sample.id, str) else str(sample.id).zfill(20))
    return order, _replay(sample, model, path)


def _replay(sample: EvalSample, model: str, path: Path) -> Episode:
    limited = sample.limit is not None or (sample.store or {}).get(STORED_TERMINATION) == Termination.TURN_LIMIT
    last_words = sample.output.message.text if sample.output and sample.output.choices else None
    return replay_sample(
        sample.messages,
        sample.metadata or {},
        model=model,
        epoch=sample.epoch,
        last_words=last_words,
        limited=limited,
        where=f"{path} sample {sample.id} (epoch {sample.epoch})",
    )
