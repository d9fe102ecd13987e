"""Every suite as a Gymnasium environment: one environment episode is one discogym episode.

The episode is played through the episode driver (:class:`EpisodeRecorder`), as every other way of playing one:
logged, blamed, scored from its log and, when the environment was given a folder, written there like a run's
episodes (``discogym report FOLDER`` reads them). Observations and actions are text: an action is what a person
types in ``discogym play`` (the suite's own text syntax where it has one, else ``TOOL key=value ...``); an action
that is no call is answered by the suite as a failed step, never an exception. In a condition that shows pictures,
the observation also holds the last picture as an RGB array.
"""

import base64
import io
import itertools
import json
import multiprocessing
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, overload

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
from PIL import Image

from discogym.core import (
    AgentOptions,
    Episode,
    Task,
    Termination,
    ToolCall,
    ToolError,
    ToolImage,
    ToolResult,
    UserError,
    get_suite,
)
from discogym.core.model.episode import EpisodeRuntime
from discogym.core.model.tools import unreadable
from discogym.core.running.episode_loop import EpisodeRecorder, EpisodeStopped, PlannedEpisode
from discogym.core.running.planning import plan_episode
from discogym.core.running.storage import EpisodeClaim, RunDir
from discogym.core.terminal.human import parse_tool_line
from discogym.interfaces.text_actions import action_text, instructions

GYM_AGENT = "gym"  # the agent name the episodes are recorded under
MAX_OBSERVATION = 1_000_000  # the longest observation, in characters
MAX_ACTION = 4_096  # the longest action: the suites' real actions are a few hundred characters at most
RESET_LEFT = "the environment was reset before the episode ended"


class AnyText(spaces.Text):
    """Text of any characters up to ``max_length`` (Gymnasium's :class:`~gymnasium.spaces.Text` holds only its
    character set, by default letters and digits; observations hold any). Samples are printable ASCII."""

    def __init__(self, max_length: int) -> None:
        printable = "".join(chr(code) for code in range(32, 127))
        super().__init__(max_length, min_length=0, charset=printable)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


# Asynchronous vector environments pass observations through shared memory: text as its code points, ended by -1
# (Gymnasium's own Text keeps indices into its character set, which real observations leave).


@create_shared_memory.register(AnyText)
def _text_memory(space: AnyText, n: int = 1, ctx: ModuleType = multiprocessing) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * space.max_length)


class SharedTexts(Sequence[str]):
    """The texts of a vector environment's shared memory, read as they are now: Gymnasium reads the memory once
    and hands out copies (``deepcopy``) or the object itself, so a tuple read once would never change."""

    def __init__(self, space: AnyText, shared_memory: Any, n: int) -> None:
        self.rows = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length))

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        row = self.rows[index]
        ends = np.flatnonzero(row < 0)
        text: str = row[: ends[0] if len(ends) else len(row)].astype("<u4").tobytes().decode("utf-32-le")
        return text

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)


@read_from_shared_memory.register(AnyText)
def _read_text(space: AnyText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(space, shared_memory, n)


@write_to_shared_memory.register(AnyText)
def _write_text(space: AnyText, index: int, value: str, shared_memory: Any) -> None:
    row = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * space.max_length :][: space.max_length]
    codes = np.frombuffer(value.encode("utf-32-le"), dtype=np.int32)
    row[: len(codes)] = codes
    if len(codes) < len(row):
        row[len(codes)] = -1


Observation = str | dict[str, Any]  # text, or {"text", "image"} in a condition that shows pictures


class DiscogymEnv(gymnasium.Env[Observation, str]):
    """One suite's tasks as a Gymnasium environment.

    ``reset(seed=S, options={"task": ID})`` starts task ID (else the one given at construction, else one drawn
    with the seed) in the world ``discogym run --seed S`` plays in its first repeat; ``step(action)`` makes one
    call. The reward is the suite's score when the episode ends, 0 before; ``terminated`` and ``truncated``
    follow how it ended (:class:`EndingKind`), and the last ``info`` holds the ending and the score's breakdown.
    In a condition that shows pictures (crafting's ``image-*``), an observation is ``{"text", "image"}``: the text
    and the last picture shown, as an RGB array of the shape the condition's first picture has.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (Gymnasium's own attribute)

    def __init__(
        self,
        suite: str,
        *,
        split: str | None = None,
        condition: str | None = None,
        task: str | None = None,
        out: str | Path | None = None,
        shaped_reward: bool = False,
        step_cap: int | None = None,
    ) -> None:
        self.suite = get_suite(suite)
        self.split = split or self.suite.splits()[0]
        self.tasks = {t.id: t for t in self.suite.tasks(self.split)}
        if not self.tasks:
            raise UserError(f"split '{self.split}' of suite '{suite}' has no tasks")
        self.condition = self.suite.condition(condition) if condition else self.suite.conditions()[0]
        if task is not None:
            self._task(task)
        self.task_id = task
        self.run_dir = RunDir(Path(out)) if out is not None else None
        if self.run_dir is not None:
            self.run_dir.prepare()  # a bad folder is said now, not after an episode has been played
        # ended episodes that could not be written yet (a full disk, a folder gone), each with its claim: written at
        # the next end, reset or close
        self.unwritten: list[tuple[Episode, EpisodeRuntime, EpisodeClaim | None]] = []
        self.write_error = ""  # why the first of them could not be written
        self.picture_shape = self._picture_shape()
        self.observation_space: spaces.Space[Any] = AnyText(MAX_OBSERVATION)
        if self.picture_shape is not None:
            picture = spaces.Box(0, 255, self.picture_shape, np.uint8)
            self.observation_space = spaces.Dict({"text": AnyText(MAX_OBSERVATION), "image": picture})
        self.picture: np.ndarray | None = None  # the last picture shown
        self.action_space = AnyText(MAX_ACTION)
        self.shaped_reward = shaped_reward
        if step_cap is not None and step_cap < 1:
            raise UserError(f"step_cap is a number of calls, at least 1, not {step_cap}")
        self.step_cap = step_cap
        self.potential = 0.0  # the suite's progress() after the last step, when the reward is shaped
        self.recorder: EpisodeRecorder | None = None
        self.claim: EpisodeClaim | None = None
        self._parse: Callable[[str], ToolCall] | None = None  # the suite's text syntax, where it has one

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        self._end(Termination.ABANDONED, RESET_LEFT)
        chosen = (options or {}).get("task") or self.task_id
        ids = sorted(self.tasks)
        task = self._task(chosen) if chosen else self.tasks[ids[int(self.np_random.integers(len(ids)))]]
        run_seed = seed if seed is not None else int(self.np_random.integers(2**31))
        self.recorder = recorder = EpisodeRecorder(self.suite, self._plan(task.id, run_seed))
        try:
            recorder.open()
        except EpisodeStopped as err:
            self._end(Termination.ENV_ERROR, None)
            raise RuntimeError(f"task {task.id}: the environment failed to start ({err})") from err
        context = recorder.context()
        self._parse = context.parse_text_action if context.text_prompt is not None else None
        how = instructions(context.text_prompt, recorder.tools)
        info = {"task": task.id, "condition": self.condition.name, "seed": run_seed, "instructions": how}
        if self.shaped_reward:
            self.potential = self._progress()
            if recorder.over:
                self._end(Termination.ENV_ERROR, None)
                raise RuntimeError(f"task {task.id}: the environment's progress measure failed ({recorder.error})")
            info["progress"] = self.potential
        self.picture = None
        return self._observation(recorder.brief, recorder.brief_images), info

    def step(self, action: str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        recorder = self.recorder
        if recorder is None or recorder.over:
            raise RuntimeError("no episode is running: call reset() first")
        try:
            result = recorder.call(self._read(action))
        except EpisodeStopped:  # the environment failed: the episode ends with its error
            result = ToolResult.failure(f"the environment failed: {recorder.error}")
        self._stop_at_step_cap(recorder)
        potential = self._progress() if self.shaped_reward and not recorder.over else 0.0
        info: dict[str, Any] = {"ok": result.ok}
        if not recorder.over:  # (a failure of the progress measure ends the episode as the environment's error)
            return self._observation(result.text, result.images), self._shaping(info, potential), False, False, info
        ending = recorder.termination
        assert ending is not None
        episode = self._end(ending, None)
        info["ending"] = ending.value
        reward = 0.0
        if episode is not None:
            reward = float(episode.score.value or 0.0)
            info["score"] = reward
            info["success"] = bool(episode.score.success)
            # the suite's breakdown as JSON text: its fields differ by suite and task, which a vector's infos refuse
            info["breakdown"] = json.dumps(episode.score.components, sort_keys=True)
        reward += self._shaping(info, 0.0)  # an ended episode's potential is 0: the shaping sums to -progress at reset
        if self.unwritten:
            info["unwritten"] = self.write_error
        observation = self._observation(result.text, result.images)
        return observation, reward, not ending.kind.truncated, ending.kind.truncated, info

    def _stop_at_step_cap(self, recorder: EpisodeRecorder) -> None:
        """End the episode as a step limit at ``step_cap`` calls, so that its file says so (Gymnasium's own
        ``max_episode_steps`` truncates an episode in a wrapper this environment does not see: the next reset then
        writes it as abandoned)."""
        cap = self.step_cap
        if cap is not None and not recorder.over and len(recorder.events) >= cap:
            recorder.stop(Termination.STEP_LIMIT, f"the environment's step_cap ({cap}) reached")

    def valid_actions(self) -> list[str]:
        """Actions valid now, as text (the suite's valid calls, what its random agent picks from, as its text syntax
        writes them and reads them back); none when no episode is running."""
        recorder = self.recorder
        if recorder is None or recorder.over or recorder.env is None:
            return []
        env = recorder.env
        return [text for call in env.valid_calls() if (text := action_text(env, call, self._parse)) is not None]

    def _picture_shape(self) -> tuple[int, int, int] | None:
        """The shape of the pictures the condition shows (its first task's first picture), None when it shows
        none."""
        first = self.tasks[sorted(self.tasks)[0]]
        env = self.suite.make_env(first, self.condition, 0)
        try:
            images = env.brief_images()
        finally:
            env.close()
        return _pixels(images[0]).shape if images else None

    def _observation(self, text: str, images: list[ToolImage]) -> Observation:
        """``text``, with the last picture shown (this step's, else the one before) in a picture condition."""
        if self.picture_shape is None:
            return text
        if images:
            self.picture = _pixels(images[-1], self.picture_shape)
        if self.picture is None:
            self.picture = np.zeros(self.picture_shape, np.uint8)
        return {"text": text, "image": self.picture.copy()}  # new data each step: callers keep what they get

    def _progress(self) -> float:
        """The suite's progress measure now (0 where it has none, or when it failed: the episode then ends as the
        environment's error)."""
        recorder = self.recorder
        if recorder is None or recorder.env is None:
            return 0.0
        try:
            with recorder.blame(Termination.ENV_ERROR):
                measured = recorder.env.progress()
        except EpisodeStopped:
            return 0.0
        return 0.0 if measured is None else float(measured)

    def _shaping(self, info: dict[str, Any], potential: float) -> float:
        """The shaped part of a step's reward, when it is shaped: the potential's change (Ng, Harada and Russell's
        potential-based shaping, which leaves the best policies as they were); ``info`` gets the progress."""
        if not self.shaped_reward:
            return 0.0
        change, self.potential = potential - self.potential, potential
        info["progress"] = potential
        return change

    def close(self) -> None:
        self._end(Termination.ABANDONED, "the environment was closed before the episode ended")
        super().close()
        if self.unwritten:
            count = len(self.unwritten)
            raise RuntimeError(f"{count} episode(s) could not be written: {self.write_error}")

    def _task(self, task_id: str) -> Task:
        if task_id not in self.tasks:
            raise UserError(f"split '{self.split}' of suite '{self.suite.name}' has no task {task_id!r}")
        return self.tasks[task_id]

    def _plan(self, task_id: str, run_seed: int) -> PlannedEpisode:
        """The episode of ``task_id`` in the world ``discogym run --seed RUN_SEED`` plays in its first repeat; when
        written, its key's repeat counts the rollouts of the task in the folder (the world does not depend on it)."""
        world = plan_episode(
            self.suite.name, self.tasks[task_id], self.condition, AgentOptions(name=GYM_AGENT), 0, run_seed
        )
        if self.run_dir is None:
            return world
        for rollout in itertools.count():
            key = world.key.model_copy(update={"repeat": rollout})
            self.claim = self.run_dir.claim_unwritten(key)
            if self.claim is not None:
                return world.model_copy(update={"key": key})
        raise AssertionError("unreachable")

    def _read(self, action: Any) -> ToolCall:
        """The call ``action`` makes, or one the suite answers as a failed step."""
        if not isinstance(action, str):
            return unreadable(f"an action is text, not {type(action).__name__}")
        try:
            return self._parse(action) if self._parse is not None else parse_tool_line(action)
        except (ToolError, ValueError) as err:
            return unreadable(str(err))

    def _end(self, termination: Termination, message: str | None) -> Episode | None:
        """End the running episode (as ``termination`` unless it has ended), score it and write it when the
        environment has a folder; the episode, or None when none was running."""
        recorder, self.recorder = self.recorder, None
        claim, self.claim = self.claim, None
        if recorder is None:
            self._write_unwritten()
            return None
        try:
            if recorder.termination is None:
                recorder.stop(termination, message)
            episode, runtime = recorder.record()
        except BaseException:
            if claim is not None:
                claim.release()
            raise
        if self.run_dir is not None:
            self.unwritten.append((episode, runtime, claim))
            self._write_unwritten()
        return episode

    def _write_unwritten(self) -> None:
        """Write the ended episodes not written yet, oldest first; one that cannot be, and those after it, stay
        (with their claims) for the next try, and ``write_error`` says why."""
        while self.unwritten and self.run_dir is not None:
            episode, runtime, claim = self.unwritten[0]
            try:
                self.run_dir.write_episode(episode, runtime)
            except OSError as err:
                where = err.filename or self.run_dir.episode_path(episode.key)
                self.write_error = f"{where}: {err.strerror or err}"
                return
            self.unwritten.pop(0)
            if claim is not None:
                claim.release()
        self.write_error = ""


def _pixels(image: ToolImage, shape: tuple[int, int, int] | None = None) -> np.ndarray:
    """A picture as an RGB array (resized to ``shape`` when it has another)."""
    with Image.open(io.BytesIO(base64.b64decode(image.data_base64))) as opened:
        picture = opened.convert("RGB")
        if shape is not None and picture.size != (shape[1], shape[0]):
            picture = picture.resize((shape[1], shape[0]))
        return np.asarray(picture, dtype=np.uint8)


__all__ = ["AnyText", "DiscogymEnv"]
