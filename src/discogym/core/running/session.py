"""Episodes whose agent acts from outside the process: an MCP client, a person in a web page, an Inspect
solver. Each client has a :class:`Session` that plays one episode at a time; every episode is logged,
scored and written exactly as the runner writes its own.

Nothing here knows of a protocol: :mod:`discogym.interfaces.mcp.server` maps it onto MCP, and other
interfaces map it onto theirs.
"""

import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from discogym.core.model.agent import AgentOptions
from discogym.core.model.episode import Episode, EpisodeKey, EpisodeRuntime
from discogym.core.model.errors import InfrastructureError, UserError
from discogym.core.model.suite import Suite
from discogym.core.model.task import Condition, Task
from discogym.core.model.termination import Termination
from discogym.core.model.tools import ToolCall, ToolImage, ToolResult, ToolSpec
from discogym.core.running.episode_loop import EpisodeRecorder, EpisodeStopped, PlannedEpisode
from discogym.core.running.planning import plan_next_free
from discogym.core.running.storage import EpisodeClaim, RunDir

UNKNOWN_CLIENT = "unknown"
STARTED_ANOTHER = "the client started another task"
CLIENT_LEFT = "the client went away without ending the episode"


class ClientMistake(Exception):
    """A request the client should not have made (no task running, unknown task), or an episode that ended
    under it; the message is for the client."""


class TaskSummary(BaseModel):
    """A task as a client sees it in the listing: what an agent may see, never the ground truth."""

    id: str
    brief: str


class TaskList(BaseModel):
    """The tasks and conditions on offer."""

    suite: str
    split: str
    conditions: list[str]
    tasks: list[TaskSummary]


class StartedTask(BaseModel):
    """A started episode: the brief to act on and the names of the tools to act with."""

    episode: str
    task: str
    condition: str
    repeat: int
    brief: str
    tools: list[str]
    instructions: str | None = None  # the suite's own instructions for tool-calling models (its system prompt)


class ExternalEpisodes:
    """The episodes of every session of one suite, written into one run directory.

    Each episode is recorded under agent ``agent`` with the option ``client`` (the client's name). Each
    (task, condition, client) gets the next free repeat number, so a client that plays a task again makes
    a new episode, with the world seed ``discogym run`` would use for that repeat. Names are claimed in the
    file system (:class:`~discogym.core.running.storage.EpisodeClaim`), so other processes serving the same
    folder never get the same one.
    """

    def __init__(self, suite: Suite, out: Path, *, agent: str, split: str | None = None, seed: int = 0) -> None:
        self.suite = suite
        self.run_dir = RunDir(out)
        self.agent = agent
        self.split = split or suite.splits()[0]
        self.seed = seed
        self.tasks = {task.id: task for task in suite.tasks(self.split)}
        self._claims: dict[EpisodeKey, EpisodeClaim] = {}
        self._unsaved: dict[str, tuple[Episode, EpisodeRuntime]] = {}  # finished, not yet written (a write error)
        self._retry_turn = 0  # passes of retry_unsaved: each starts one episode further along
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # one writer of the kept episodes at a time
        self._preview: list[ToolSpec] | None = None

    def session(self, client: str = UNKNOWN_CLIENT, options: dict[str, str] | None = None) -> "Session":
        """A new session for the client called ``client``, playing nothing yet; ``options`` are recorded with
        ``client`` as the agent's options (e.g. the web app's ``mode``)."""
        return Session(self, client, options)

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
            self._preview = [] if first is None else self._tools_of(first)
        return self._preview

    def _tools_of(self, task: Task) -> list[ToolSpec]:
        env = self.suite.make_env(task, self.suite.conditions()[0], 0)
        try:
            return env.tool_specs()
        finally:
            env.close()

    def task(self, task_id: str) -> Task:
        """The task called ``task_id``, or a ClientMistake listing some that exist."""
        task = self.tasks.get(task_id)
        if task is None:
            listed = ", ".join(list(self.tasks)[:10]) + (", ..." if len(self.tasks) > 10 else "")
            raise ClientMistake(f"split '{self.split}' has no task {task_id!r}; tasks: {listed}")
        return task

    def condition(self, name: str | None) -> Condition:
        """The condition called ``name`` (the suite's first if None), or a ClientMistake listing the valid ones."""
        if not name:
            return self.suite.conditions()[0]
        try:
            return self.suite.condition(name)
        except UserError as err:
            raise ClientMistake(str(err)) from None

    def reserve(self, task: Task, condition: Condition, options: dict[str, str]) -> PlannedEpisode:
        """Plan the client's next episode of (task, condition) under the agent options ``options`` and hold its
        key's claim until it is written or released, so two sessions of one client, in this process or in
        another one on the same folder, never get the same repeat."""
        agent = AgentOptions(name=self.agent, options=dict(options))
        planned, claim = claim_next_free(self.run_dir, self.suite.name, task, condition, agent, self.seed)
        with self._lock:
            self._claims[planned.key] = claim
        return planned

    def release(self, key: EpisodeKey) -> None:
        """Let the key go (its episode was written or abandoned)."""
        with self._lock:
            claim = self._claims.pop(key, None)
        if claim is not None:
            claim.release()

    def write(self, recorder: EpisodeRecorder, frame_intervals_s: list[float] | None = None) -> str:
        """Finish the episode (closing its environment), write it, release its key; return its file name.

        A finished episode is never lost to a write error (a full disk, no file descriptor left): it is kept,
        with the claim on its name, until :meth:`retry_unsaved` writes it; :meth:`saved` tells whether it is."""
        try:
            episode, runtime = recorder.record()
        except BaseException:
            self.release(recorder.planned.key)
            raise
        if frame_intervals_s is not None:
            runtime = runtime.model_copy(update={"frame_intervals_s": frame_intervals_s})
        name = self.run_dir.episode_path(episode.key).name
        with self._lock:
            self._unsaved[name] = (episode, runtime)
        self.retry_unsaved()
        return name

    def saved(self, name: str) -> bool:
        """False while the episode file ``name`` is kept in memory, waiting to be written."""
        with self._lock:
            return name not in self._unsaved

    def retry_unsaved(self) -> list[str]:
        """Write the episodes kept after a write error, each pass starting one further along the names (so no
        episode is always tried first while the disk has room for one); return those still not written."""
        with self._write_lock:
            with self._lock:
                waiting = sorted(self._unsaved.items())
                self._retry_turn += 1
            if waiting:
                turn = self._retry_turn % len(waiting)
                waiting = waiting[turn:] + waiting[:turn]
            for name, (episode, runtime) in waiting:
                try:
                    self.run_dir.write_episode(episode, runtime)
                except OSError:
                    continue
                with self._lock:
                    del self._unsaved[name]
                self.release(episode.key)
            with self._lock:
                return sorted(self._unsaved)


def claim_next_free(
    run_dir: RunDir, suite_name: str, task: Task, condition: Condition, agent: AgentOptions, run_seed: int
) -> tuple[PlannedEpisode, EpisodeClaim]:
    """The episode of (task, condition, agent) with the lowest repeat that is neither written nor being played,
    with the claim on its name (:func:`~discogym.core.running.planning.plan_next_free`)."""
    claims: list[EpisodeClaim] = []

    def taken(key: EpisodeKey) -> bool:
        claim = run_dir.claim_unwritten(key)
        if claim is not None:
            claims.append(claim)
        return claim is None

    planned = plan_next_free(suite_name, task, condition, agent, run_seed, taken)
    return planned, claims[-1]


class Session:
    """One client's state: the episode it is playing, if any. Not safe for concurrent use by one client."""

    def __init__(
        self, host: ExternalEpisodes, client: str = UNKNOWN_CLIENT, options: dict[str, str] | None = None
    ) -> None:
        self.host = host
        self.client = client
        self.options = {"client": client, **(options or {})}
        self.recorder: EpisodeRecorder | None = None
        self.written: str | None = None  # the file name of the episode written last
        self.keep_views = False  # set by interfaces that draw the environment's view (the web app)
        self.last_view: dict[str, Any] | None = None  # the environment's view after the last start or call
        self.last_ending: Termination | None = None  # how the episode written last ended
        self.frame_intervals_s: list[float] | None = None  # set by the web app for a game at a frame rate

    @property
    def playing(self) -> bool:
        """True while an episode is running."""
        return self.recorder is not None and not self.recorder.over

    def tools(self) -> list[ToolSpec]:
        """The tools of the running episode, or the preview when none is running."""
        if self.recorder is not None and self.playing:
            return self.recorder.tools
        return self.host.preview_tools()

    def brief_images(self) -> list[ToolImage]:
        """The pictures that go with the running episode's brief (none when nothing runs)."""
        return self.recorder.brief_images if self.recorder is not None else []

    def start(self, task_id: str, condition: str | None = None) -> StartedTask:
        """Start an episode; one the session was still playing ends as ``agent_stopped`` and is written."""
        task = self.host.task(task_id)
        chosen = self.host.condition(condition)
        if self.playing:
            self.end(STARTED_ANOTHER)
        planned = self.host.reserve(task, chosen, self.options)
        recorder = self.recorder = EpisodeRecorder(self.host.suite, planned)
        try:
            recorder.open()
            instructions = recorder.context().system_prompt
            self._look()
        except EpisodeStopped as err:
            self._write()
            raise ClientMistake(
                f"the environment failed to start ({err}); the episode was recorded as an error"
            ) from err
        except BaseException:
            self.abandon()
            raise
        return StartedTask(
            episode=planned.key.file_stem(),
            task=task.id,
            condition=chosen.name,
            repeat=planned.key.repeat,
            brief=recorder.brief,
            tools=[spec.name for spec in recorder.tools],
            instructions=instructions,
        )

    def call(self, tool: str, args: object) -> ToolResult:
        """Make one call in the running episode; write the episode if the call ended it."""
        recorder = self._running()
        try:
            result = recorder.call(ToolCall.model_validate({"tool": tool, "args": args}))
        except EpisodeStopped as err:
            self._write()
            raise ClientMistake(
                f"the environment failed ({err}); the episode ended with an error and was recorded"
            ) from err
        except InfrastructureError as err:
            self.abandon()
            raise ClientMistake(_abandoned(err)) from err
        except BaseException:
            self.abandon()
            raise
        self._look()
        if recorder.over:
            self._write()
            result = result.model_copy(update={"text": f"{result.text}\n(The episode is over and has been recorded.)"})
        return result

    def end(self, message: str | None, termination: Termination = Termination.AGENT_STOPPED) -> str:
        """End the running episode at the client's wish (``agent_stopped``), or as ``termination`` (a limit of the
        interface's own), write it, return its file name."""
        self._running().stop(termination, message or None)
        return self._write()

    def leave(self) -> str | None:
        """The client went away: end the running episode as ``abandoned`` and write it (scored from its log,
        like a person's game left by end of input); return its file name, or None when nothing was running
        or an infrastructure fault kept it from being written."""
        if not self.playing:
            self.abandon()  # an episode already over is written; this only drops a stale reference
            return None
        self._running().stop(Termination.ABANDONED, CLIENT_LEFT)
        try:
            return self._write()
        except ClientMistake:  # an infrastructure fault while writing: abandoned unwritten, nothing to tell
            return None

    def abandon(self) -> None:
        """Drop the running episode unwritten (the client went away; like an episode cut by Ctrl-C in a run),
        closing its environment."""
        recorder, self.recorder = self.recorder, None
        if recorder is not None:
            recorder.abandon()
            self.host.release(recorder.planned.key)

    def _look(self) -> None:
        """Keep the environment's view (before the episode is written and its environment closed). A view that
        fails shows its error: a picture is not worth the episode."""
        if not self.keep_views:
            return
        env = self.recorder.env if self.recorder is not None else None
        try:
            self.last_view = env.view() if env is not None else None
        except Exception as err:  # any bug of a suite's view
            self.last_view = {"kind": "error", "message": f"the environment's view failed: {err!r}"}

    def _running(self) -> EpisodeRecorder:
        if self.recorder is None or not self.playing:
            raise ClientMistake("no task is running: call list_tasks, then start_task")
        return self.recorder

    def _write(self) -> str:
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            raise RuntimeError("no episode to write")
        self.last_ending = recorder.termination
        intervals, self.frame_intervals_s = self.frame_intervals_s, None
        try:
            self.written = self.host.write(recorder, intervals)
            return self.written
        except InfrastructureError as err:  # e.g. a judge model's endpoint down while scoring
            recorder.abandon()
            raise ClientMistake(_abandoned(err)) from err
        except BaseException:
            recorder.abandon()
            raise


def _abandoned(err: InfrastructureError) -> str:
    return f"infrastructure fault ({err}); the episode was abandoned: start it again"
