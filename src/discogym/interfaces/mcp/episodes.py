"""Episodes whose agent acts from outside, through MCP: one running episode per client session, logged,
scored and written exactly as the runner writes its own.

This module knows nothing of MCP; :mod:`discogym.interfaces.mcp.server` maps it onto the protocol.
"""

import threading
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from discogym.core.agent import AgentOptions
from discogym.core.episode import EpisodeKey
from discogym.core.errors import InfrastructureError, UserError
from discogym.core.play import AGENT_STOPPED, EpisodeRecorder, EpisodeStopped, PlannedEpisode
from discogym.core.runner import plan_episode
from discogym.core.storage import RunDir
from discogym.core.suite import Suite
from discogym.core.task import Task
from discogym.core.tools import ToolCall, ToolResult, ToolSpec

MCP_AGENT = "mcp"
UNKNOWN_CLIENT = "unknown"


class ClientMistake(Exception):
    """A request the client should not have made (no task running, unknown task); said back as a tool error."""


class TaskSummary(BaseModel):
    """A task as ``list_tasks`` shows it: what an agent may see, never the ground truth."""

    id: str
    brief: str


class TaskList(BaseModel):
    """What ``list_tasks`` returns."""

    suite: str
    split: str
    conditions: list[str]
    tasks: list[TaskSummary]


class StartedTask(BaseModel):
    """What ``start_task`` returns: the brief to act on and the tools to act with."""

    episode: str
    task: str
    condition: str
    repeat: int
    brief: str
    tools: list[str]


@dataclass
class Session:
    """One MCP client's state: the episode it is playing, if any."""

    client: str = UNKNOWN_CLIENT
    recorder: EpisodeRecorder | None = None

    @property
    def playing(self) -> bool:
        """True while an episode is running."""
        return self.recorder is not None and not self.recorder.over


class ExternalEpisodes:
    """Starts, plays and writes the episodes of every MCP session of one suite into one run directory.

    Each (task, condition, client) gets the next free repeat number, so a client that plays a task again
    makes a new episode, with the world seed ``discogym run`` would use for that repeat.
    """

    def __init__(self, suite: Suite, out: Path, *, split: str | None = None, seed: int = 0) -> None:
        self.suite = suite
        self.run_dir = RunDir(out)
        self.split = split or suite.splits()[0]
        self.seed = seed
        self.tasks = {task.id: task for task in suite.tasks(self.split)}
        self._reserved: set[EpisodeKey] = set()
        self._lock = threading.Lock()
        self._preview: list[ToolSpec] | None = None

    def list_tasks(self) -> TaskList:
        """The tasks of the split being served."""
        return TaskList(
            suite=self.suite.name,
            split=self.split,
            conditions=[c.name for c in self.suite.conditions()],
            tasks=[TaskSummary(id=t.id, brief=t.brief) for t in self.tasks.values()],
        )

    def preview_tools(self) -> list[ToolSpec]:
        """The tools of the split's first task in the default condition, listed before any task starts."""
        if self._preview is None:
            first = next(iter(self.tasks.values()), None)
            env = None if first is None else self.suite.make_env(first, self.suite.conditions()[0], 0)
            self._preview = [] if env is None else env.tool_specs()
        return self._preview

    def tools(self, session: Session) -> list[ToolSpec]:
        """The tools of the session's episode, or the preview when none is running."""
        return session.recorder.tools if session.playing and session.recorder else self.preview_tools()

    def start(self, session: Session, task_id: str, condition: str | None = None) -> StartedTask:
        """Start an episode for ``session``; one it was still playing ends as ``agent_stopped`` and is written."""
        task = self._task(task_id)
        try:
            chosen = self.suite.condition(condition) if condition else self.suite.conditions()[0]
        except UserError as err:
            raise ClientMistake(str(err)) from None
        if session.playing:
            self.end(session, "the client started another task")
        planned = self._plan(task, chosen.name, session.client)
        recorder = EpisodeRecorder(self.suite, planned)
        session.recorder = recorder
        try:
            recorder.open()
        except EpisodeStopped as err:
            self._write(session)
            raise ClientMistake(
                f"the environment failed to start ({err}); the episode was recorded as an error"
            ) from err
        except BaseException:
            self.close(session)
            raise
        return StartedTask(
            episode=planned.key.file_stem(),
            task=task.id,
            condition=chosen.name,
            repeat=planned.key.repeat,
            brief=recorder.brief,
            tools=[spec.name for spec in recorder.tools],
        )

    def call(self, session: Session, tool: str, args: object) -> ToolResult:
        """Make one call in the session's episode; write the episode if the call ended it."""
        recorder = self._running(session)
        try:
            result = recorder.call(ToolCall.model_validate({"tool": tool, "args": args}))
        except EpisodeStopped as err:
            self._write(session)
            raise ClientMistake(
                f"the environment failed ({err}); the episode ended with an error and was recorded"
            ) from err
        except InfrastructureError as err:
            self.close(session)
            raise ClientMistake(f"infrastructure fault ({err}); the episode was abandoned: start it again") from err
        if recorder.over:
            self._write(session)
            result = result.model_copy(update={"text": f"{result.text}\n(The episode is over and has been recorded.)"})
        return result

    def end(self, session: Session, message: str | None) -> str:
        """End the session's episode at the agent's wish (``agent_stopped``), write it, return its file name."""
        recorder = self._running(session)
        recorder.stop(AGENT_STOPPED, message or None)
        return self._write(session)

    def close(self, session: Session) -> None:
        """The client went away: an episode still running is abandoned unwritten, like one cut by Ctrl-C."""
        if session.recorder is not None:
            with self._lock:
                self._reserved.discard(session.recorder.planned.key)
        session.recorder = None

    def _task(self, task_id: str) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            listed = ", ".join(list(self.tasks)[:10]) + (", ..." if len(self.tasks) > 10 else "")
            raise ClientMistake(f"split '{self.split}' has no task {task_id!r}; tasks: {listed} (see list_tasks)")
        return task

    def _running(self, session: Session) -> EpisodeRecorder:
        if session.recorder is None or not session.playing:
            raise ClientMistake("no task is running: call list_tasks, then start_task")
        return session.recorder

    def _plan(self, task: Task, condition: str, client: str) -> PlannedEpisode:
        agent = AgentOptions(name=MCP_AGENT, options={"client": client})
        chosen = self.suite.condition(condition)
        with self._lock:
            repeat = 0
            while True:
                planned = plan_episode(self.suite.name, task, chosen, agent, repeat, self.seed)
                if planned.key not in self._reserved and not self.run_dir.episode_path(planned.key).exists():
                    self._reserved.add(planned.key)
                    return planned
                repeat += 1

    def _write(self, session: Session) -> str:
        recorder = session.recorder
        if recorder is None:
            raise RuntimeError("no episode to write")
        episode, runtime = recorder.finish()
        self.run_dir.write_episode(episode, runtime)
        self.close(session)
        return self.run_dir.episode_path(episode.key).name
