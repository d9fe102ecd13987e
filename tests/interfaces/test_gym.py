"""Every suite as a Gymnasium environment (discogym.gym): Gymnasium's own checker, reproducible resets, random text
that never raises, vector environments in both modes, and rollouts written as episodes that the report reads."""

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

gymnasium = pytest.importorskip("gymnasium", reason="the rl extra (pip install 'discogym[rl]') is not installed")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import discogym.gym  # noqa: E402
from discogym.core import Termination, UserError, get_suite  # noqa: E402
from discogym.core.model.tools import UNREADABLE_TOOL  # noqa: E402
from discogym.core.reporting.run_report import build_report  # noqa: E402
from discogym.core.running.runner import RunConfig, Runner  # noqa: E402
from discogym.core.running.storage import RunDir  # noqa: E402
from discogym.interfaces.gym import DiscogymEnv  # noqa: E402
from discogym.interfaces.text_actions import action_text  # noqa: E402

IDS = sorted(discogym.gym.ENV_IDS)


@pytest.mark.parametrize("env_id", IDS)
def test_each_id_passes_gymnasiums_checker_and_steps_random_text_without_raising(env_id):
    env = gymnasium.make(f"discogym.gym:{env_id}")  # found by its module, no import needed
    check_env(env.unwrapped, skip_render_check=True)
    first, info = env.reset(seed=7)
    again, _ = env.reset(seed=7)
    assert first == again and env.observation_space.contains(first) and info["seed"] == 7
    assert info["instructions"]  # the suite's action syntax, or its tools as a person types them
    env.action_space.seed(7)
    for _ in range(30):
        observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert isinstance(observation, str) and isinstance(reward, float)
        if terminated or truncated:
            env.reset(seed=8)
    env.close()


def test_a_task_and_its_world_come_back_with_the_seed_and_options():
    env = DiscogymEnv("autumn")
    first, info = env.reset(seed=3, options={"task": "gravity-1"})
    env.reset(seed=4, options={"task": "gravity-1"})
    again, _ = env.reset(seed=3, options={"task": "gravity-1"})
    assert info["task"] == "gravity-1" and first == again
    env.close()


def test_a_malformed_action_is_the_suites_feedback_and_a_logged_step(tmp_path):
    env = DiscogymEnv("petri", out=tmp_path)
    env.reset(seed=1)
    observation, reward, terminated, truncated, info = env.step("experiment config_a=not-json{")
    assert not info["ok"] and observation and not terminated and not truncated and reward == 0.0
    observation, *_ = env.step("no_such_tool x=1")
    assert "unknown tool" in observation
    env.close()  # ends the episode as abandoned, written
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert len(episode.events) == 2 and episode.outcome.termination == Termination.ABANDONED


def test_an_ending_action_typed_as_text_is_terminated_with_the_suites_score(tmp_path):
    env = DiscogymEnv("crafting", out=tmp_path)
    env.reset(seed=0, options={"task": "TEST0000"})
    _, reward, terminated, truncated, ending = env.step("impossible: because I cannot tell")
    assert terminated and not truncated and ending["ending"] == Termination.DECLARED_IMPOSSIBLE.value
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert reward == ending["score"] == episode.score.value  # the reward is the suite's score of the file
    assert json.loads(str(ending["breakdown"])) == episode.score.components


def test_a_bad_folder_is_refused_at_once_and_an_episode_that_cannot_be_written_is_kept_until_it_can(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "runtime").write_text("a file where the run's folder goes")
    with pytest.raises(UserError, match="runtime is a file"):
        DiscogymEnv("crafting", out=tmp_path / "bad")
    env = DiscogymEnv("crafting", out=tmp_path / "run")
    env.reset(seed=0, options={"task": "TEST0000"})
    sidecars = tmp_path / "run" / "runtime"
    sidecars.rmdir()
    sidecars.write_text("the folder gone")  # as a full disk would: the write fails
    _, _, terminated, _, info = env.step("impossible: because I cannot tell")
    assert terminated and "runtime" in info["unwritten"] and len(env.unwritten) == 1  # said, kept, not raised
    sidecars.unlink()
    sidecars.mkdir()
    env.reset(seed=0, options={"task": "TEST0001"})  # written now
    assert not env.unwritten and len(RunDir(tmp_path / "run").episode_paths()) == 1
    env.close()
    assert len(RunDir(tmp_path / "run").episode_paths()) == 2


def test_a_step_cap_ends_the_episode_as_a_step_limit_in_its_file(tmp_path):
    env = gymnasium.make("discogym/Petri-v0", step_cap=2, out=tmp_path)
    env.reset(seed=1)
    assert env.step("no_such_tool x=1")[2:4] == (False, False)
    _, reward, terminated, truncated, info = env.step("no_such_tool x=2")
    assert (terminated, truncated, info["ending"]) == (False, True, "step_limit") and reward == info["score"]
    env.reset(seed=2)  # not booked again as abandoned
    env.close()
    first, second = sorted(RunDir(tmp_path).iter_episodes(), key=lambda episode: episode.provenance.env_seed != 1)
    assert first.outcome.termination == Termination.STEP_LIMIT and len(first.events) == 2
    assert "step_cap (2)" in str(first.outcome.agent_message)
    assert second.outcome.termination == Termination.ABANDONED and not second.events


def test_closing_with_an_episode_that_still_cannot_be_written_says_so(tmp_path):
    env = DiscogymEnv("crafting", out=tmp_path)
    env.reset(seed=0, options={"task": "TEST0000"})
    (tmp_path / "runtime").rmdir()
    (tmp_path / "runtime").write_text("the folder gone")
    with pytest.raises(RuntimeError, match="1 episode\\(s\\) could not be written"):
        env.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_environments_step_and_their_rollouts_are_a_run_the_report_reads(tmp_path, mode):
    envs = gymnasium.make_vec("discogym/Crafting-v0", num_envs=4, vectorization_mode=mode, out=tmp_path)
    observations, _ = envs.reset(seed=5)
    single = DiscogymEnv("crafting")
    assert observations[2] == single.reset(seed=5 + 2)[0]  # each env seeded as gymnasium does: seed + index
    single.close()
    envs.action_space.seed(5)
    ended = 0
    for _ in range(100):
        _, _, terminated, truncated, _ = envs.step(envs.action_space.sample())
        ended += int((terminated | truncated).sum())
    envs.close()
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert ended >= 4 and len(episodes) == ended + 4  # those that ended, and the four cut by close()
    report = build_report(Path(tmp_path))
    assert report.tables and report.tables[0].rows[0][4] == "gym"  # one agent: every rollout of the folder


@pytest.mark.parametrize("suite", ["crafting", "redstone", "petri", "autumn"])
def test_valid_actions_are_text_the_suite_reads_as_calls(tmp_path, suite):
    env = DiscogymEnv(suite, out=tmp_path)
    env.reset(seed=2)
    steps = 0
    while steps < 20 and (actions := env.valid_actions()):
        assert env.recorder is not None and env.recorder.env is not None
        assert len(actions) == len(env.recorder.env.valid_calls())  # every valid call has its text
        _, _, terminated, truncated, _ = env.step(actions[(7 * steps) % len(actions)])
        steps += 1
        if terminated or truncated:
            break
    env.close()
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert steps > 0 and len(episode.events) == steps
    assert all(event.call.tool != UNREADABLE_TOOL for event in episode.events)


@pytest.mark.parametrize(
    ("env_id", "split", "task"),
    [
        ("discogym/Crafting-v0", "test.small", "TEST0289"),
        ("discogym/Redstone-v0", "official", "C_sequential_activation_L1"),
        ("discogym/Autumn-v0", "all", "gravity-1"),
    ],
)
def test_a_shaped_reward_sums_to_the_score_and_leaves_the_episode_as_it_was(tmp_path, env_id, split, task):
    suite = get_suite(discogym.gym.ENV_IDS[env_id])
    config = RunConfig.for_suite(suite, ["reference"], split=split, tasks=[task])
    Runner(suite, config, tmp_path / "reference").run()
    episode = next(RunDir(tmp_path / "reference").iter_episodes())
    writer = suite.make_env(episode.task, episode.condition, episode.provenance.env_seed)
    parse = writer.parse_text_action if writer.text_prompt() is not None else None
    actions = [action_text(writer, event.call, parse) for event in episode.events]
    rewards: dict[bool, list[float]] = {}
    for shaped in (False, True):
        env = gymnasium.make(env_id, split=split, task=task, shaped_reward=shaped, out=tmp_path / f"shaped-{shaped}")
        env.reset(seed=0)  # the run's seed: the reference episode's world
        rewards[shaped] = [float(env.step(action)[1]) for action in actions]
        env.close()
    score = float(episode.score.value or 0.0)
    assert rewards[False] == [0.0] * (len(actions) - 1) + [score] and score > 0
    assert sum(rewards[True]) == pytest.approx(score)  # the shaping telescopes: progress is 0 at the start
    if suite.name == "autumn":  # no sound measure: nothing shaped
        assert rewards[True] == rewards[False]
    else:
        assert any(reward > 0 for reward in rewards[True][:-1]) and rewards[True][-1] < score
    plain, shaped_episode = (next(RunDir(tmp_path / f"shaped-{s}").iter_episodes()) for s in (False, True))
    assert plain.events == shaped_episode.events == episode.events and plain.score == shaped_episode.score


@pytest.mark.parametrize(("condition", "shape"), [("image-high", (664, 704, 3)), ("image-low", (166, 176, 3))])
def test_a_picture_condition_observes_the_table_as_an_array_also_in_an_async_vector(condition, shape):
    env = gymnasium.make("discogym/Crafting-v0", split="test.small", condition=condition, task="TEST0289")
    check_env(env.unwrapped, skip_render_check=True)
    observation, _ = env.reset(seed=0)
    assert set(observation) == {"text", "image"} and observation["image"].shape == shape
    task = get_suite("crafting").tasks("test.small")
    fresh = get_suite("crafting").make_env(next(t for t in task if t.id == "TEST0289"), env.unwrapped.condition, 0)
    with Image.open(io.BytesIO(base64.b64decode(fresh.brief_images()[0].data_base64))) as picture:
        assert (observation["image"] == np.asarray(picture.convert("RGB"))).all()  # the picture a model is shown
    moved, *_ = env.step(env.unwrapped.valid_actions()[0])
    assert (moved["image"] != observation["image"]).any() and "Craft an item" in moved["text"]
    env.close()
    envs = gymnasium.make_vec(
        "discogym/Crafting-v0", num_envs=2, vectorization_mode="async", split="test.small", condition=condition
    )
    observations, _ = envs.reset(seed=0)
    stepped, *_ = envs.step(tuple(options[0] for options in envs.call("valid_actions")))
    assert observations["image"].shape == stepped["image"].shape == (2, *shape) and len(stepped["text"]) == 2
    envs.close()
