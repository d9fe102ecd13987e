"""Every suite as a verifiers environment (verifiers 0.4, its ``verifiers.v1`` taskset API; docs/training.md).

A rollout is one episode of the suite, played through the Gymnasium environment (:class:`DiscogymEnv`), and so
through the episode driver: the model's first turn answers the brief, each later turn the last result, and the
whole reply is the action (the suite's text syntax, as in ``discogym play``; a reply that is no action is answered
as a failed step). The reward is the suite's score from the episode's log. The packages ``discogym_crafting``,
``discogym_redstone``, ``discogym_petri`` and ``discogym_autumn`` hold one suite each, as verifiers finds an
environment by the module its id names (``vf-eval discogym-crafting``).
"""

import asyncio
import functools
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import verifiers.v1 as vf

from discogym.core import UserError, get_suite
from discogym.interfaces.gym import DiscogymEnv, Observation

REPLY_RULE = (
    "Each of your replies is one action, written as above, and nothing else: the whole reply is read as the action."
)
ROLLOUT_ENDED = "rollout_ended"  # the ending recorded when verifiers ended the rollout before the episode ended


class DiscogymTasksetConfig(vf.TasksetConfig):
    """Which tasks, how they are played, and where the episodes go (``--env.taskset.FIELD``)."""

    split: str | None = None
    """The split (``training:SEED:COUNT`` for training tasks); the suite's first split by default."""
    condition: str | None = None
    """The condition; the suite's first by default. Conditions that show pictures are not offered."""
    seed: int = 0
    """The seed of every task's world: ``discogym run --seed SEED`` plays the same worlds."""
    out: str | None = None
    """A folder the episodes are written to, which ``discogym report`` reads."""


class DiscogymData(vf.TaskData):
    """A task: ``info`` names the suite, split, condition, task id, seed and folder it is played with."""

    info: dict[str, Any]


class DiscogymTask(vf.Task[DiscogymData, vf.State, vf.TaskConfig]):
    """One task of a suite (its rollout is played by :class:`DiscogymVerifiersEnv`)."""


class DiscogymTaskset(vf.Taskset[DiscogymTask, DiscogymTasksetConfig]):
    """The tasks of one split of ``SUITE``, in the suite's order."""

    SUITE = ""

    def load(self) -> Iterator[DiscogymTask]:
        suite = get_suite(self.SUITE)
        split = self.config.split or suite.splits()[0]
        condition = suite.condition(self.config.condition) if self.config.condition else suite.conditions()[0]
        if DiscogymEnv(suite.name, split=split, condition=condition.name).picture_shape is not None:
            raise UserError(f"condition {condition.name} shows pictures, which the verifiers environment cannot")
        for task in suite.tasks(split):
            info = {
                "suite": suite.name,
                "split": split,
                "condition": condition.name,
                "task": task.id,
                "seed": self.config.seed,
                "out": self.config.out,
            }
            yield DiscogymTask(DiscogymData(id=task.id, name=f"{suite.name}/{task.id}", info=info), self.config.task)


class DiscogymEnvConfig(vf.EnvConfig):
    """The environment's one seat, ``player`` (``--env.player.*``)."""

    player: vf.AgentConfig = vf.AgentConfig()


class DiscogymVerifiersEnv(vf.Env[DiscogymEnvConfig]):
    """Plays a task's episode with the ``player`` seat and rewards it with the suite's score."""

    async def run(self, task: DiscogymTask, agents: Any) -> None:
        info = task.data.info
        # One thread per rollout runs every call of its environment in turn: a rollout cancelled mid-call (verifiers'
        # timeout, Ctrl-C) closes the environment only after the call in flight has returned.
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="discogym-rollout")
        loop = asyncio.get_running_loop()

        def in_turn(call: Callable[..., Any], *args: Any, **kwargs: Any) -> "asyncio.Future[Any]":
            return loop.run_in_executor(thread, functools.partial(call, *args, **kwargs))

        env: DiscogymEnv | None = None
        try:
            env = await in_turn(
                DiscogymEnv,
                info["suite"],
                split=info["split"],
                condition=info["condition"],
                task=info["task"],
                out=info["out"],
            )
            observation, started = await in_turn(env.reset, seed=info["seed"])
            played = task.with_data(
                prompt=_text(observation), system_prompt=f"{started['instructions']}\n\n{REPLY_RULE}"
            )
            reward, ended = 0.0, {"ending": ROLLOUT_ENDED}
            async with agents.player.interaction(played) as interaction:
                segment = await interaction.turn()
                while not segment.terminated:
                    observation, reward, terminated, truncated, step = await in_turn(env.step, segment.last_reply)
                    if terminated or truncated:
                        ended = step
                        break
                    segment = await interaction.turn(_text(observation))
        finally:
            if env is not None:
                await in_turn(env.close)
            thread.shutdown(wait=False)
        trace = interaction.trace
        trace.record_reward("score", reward, 1.0)
        trace.info.update({key: ended[key] for key in ("ending", "success") if key in ended})
        if "breakdown" in ended:
            trace.info["breakdown"] = json.loads(ended["breakdown"])


def _text(observation: Observation) -> str:
    return observation["text"] if isinstance(observation, dict) else observation


def load_environment(suite: str, **taskset: Any) -> Any:
    """The environment of ``suite`` (keyword arguments: :class:`DiscogymTasksetConfig`'s fields), for callers of
    the older ``load_environment(**kwargs)`` contract, such as the verifiers hub's check."""
    config = DiscogymTasksetConfig(id=f"discogym-{get_suite(suite).name}", **taskset)
    return DiscogymVerifiersEnv(DiscogymEnvConfig(taskset=config))


__all__ = [
    "DiscogymData",
    "DiscogymEnvConfig",
    "DiscogymTask",
    "DiscogymTaskset",
    "DiscogymTasksetConfig",
    "DiscogymVerifiersEnv",
    "load_environment",
]
