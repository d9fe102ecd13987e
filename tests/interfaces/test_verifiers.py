"""The suites as verifiers environments (discogym.interfaces.verifiers_env), in the venv of ``make verifiers``
(verifiers 0.4.0 cannot share the dev venv): verifiers' own loaders find each suite's package, and ``vf-eval``
plays crafting against the fake model endpoint, whose replies are the reference solver's actions, then a wrong one.
The vf-eval test needs PyPI once: verifiers' chat harness is a script whose packages uv fetches."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from discogym.core import Episode, get_suite
from discogym.core.running.storage import RunDir
from discogym.interfaces.gym import DiscogymEnv
from discogym.interfaces.sft import conversations_of
from tests.conftest import run_discogym
from tests.llm.fake_endpoint import FakeEndpoint, Request, Say

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".venv-verifiers" / "bin"

pytestmark = pytest.mark.skipif(
    not (BIN / "vf-eval").exists(), reason="no .venv-verifiers: `make verifiers` (which `make test` runs) makes it"
)

SPLITS = {"crafting": "test.small", "redstone": "training:1:3", "petri": "pilot-v0", "autumn": "mfp-v1"}

LOADERS = """
import importlib, json
from verifiers.v1.utils.loaders import environment_class, taskset_class
from discogym.interfaces.verifiers_env import DiscogymVerifiersEnv
found = {}
for suite, split in json.loads(SPLITS).items():
    assert environment_class(f"discogym-{suite}") is DiscogymVerifiersEnv
    assert taskset_class(f"discogym-{suite}").SUITE == suite
    env = importlib.import_module(f"discogym_{suite}").load_environment(split=split, seed=5)
    found[suite] = [task.data.info for task in env.taskset]
print(json.dumps(found))
"""


def in_verifiers_venv(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "python"), "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)


def test_verifiers_finds_each_suites_environment_and_its_tasks():
    done = in_verifiers_venv(f"SPLITS = {json.dumps(SPLITS)!r}\n{LOADERS}")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for suite_name, split in SPLITS.items():
        infos = found[suite_name]
        assert [info["task"] for info in infos] == [task.id for task in get_suite(suite_name).tasks(split)]
        assert {(info["suite"], info["split"], info["seed"]) for info in infos} == {(suite_name, split, 5)}


def test_a_picture_condition_is_refused_when_the_tasks_load():
    code = """
import discogym_crafting
env = discogym_crafting.load_environment(split="test.small", condition="image-high")
try:
    next(iter(env.taskset))
except Exception as err:
    print(type(err).__name__, err)
"""
    done = in_verifiers_venv(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("UserError condition image-high shows pictures"), done.stdout


def reference_actions(tmp_path: Path, task: str) -> list[str]:
    """The reference solver's actions on crafting ``task`` of the val split, as the text a model replies."""
    done = run_discogym(
        "run",
        "crafting",
        "--agent",
        "reference",
        "--split",
        "val",
        "--tasks",
        task,
        "--out",
        str(tmp_path / "reference"),
    )
    assert done.returncode == 0, done.stderr
    (conversation,), _ = conversations_of(get_suite("crafting"), tmp_path / "reference")
    messages: list[dict[str, str]] = conversation["messages"]  # type: ignore[assignment]
    return [message["content"] for message in messages if message["role"] == "assistant"]


def vf_eval(tmp_path: Path, replies: list[str], *more: str) -> tuple[list[dict[str, Any]], list[Request]]:
    """``vf-eval discogym-crafting`` on task VAL0001 as docs/training.md runs it, against the fake endpoint replying
    ``replies`` in turn, its episodes written to ``tmp_path/episodes``; the rollouts' traces and what the model
    was sent."""
    with FakeEndpoint() as endpoint:
        endpoint.script.extend(Say(text) for text in replies)
        command = [
            str(BIN / "vf-eval"), "discogym-crafting", "-m", "fake", "--client.base-url", endpoint.url,
            "--client.api-key-var", "DISCOGYM_FAKE_KEY", "-c", "1", "--no-push",
            "--env.player.harness.id", "null", "--env.player.runtime.type", "subprocess",
            "--env.taskset.split", "val", "--env.taskset.out", str(tmp_path / "episodes"),
            "--select.include.ids", '["VAL0001"]', "-o", str(tmp_path / "outputs"), *more,
        ]  # fmt: skip
        environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "DISCOGYM_FAKE_KEY": "fake"}
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=environment)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        requests = list(endpoint.requests)
    (traces_file,) = (tmp_path / "outputs").glob("*/traces.jsonl")
    return [json.loads(line)["traces"][0] for line in traces_file.read_text().splitlines()], requests


def episodes_of(tmp_path: Path) -> list[Episode]:
    return [Episode.model_validate_json(path.read_bytes()) for path in RunDir(tmp_path / "episodes").episode_paths()]


def test_vf_eval_plays_crafting_against_a_local_endpoint_and_rewards_the_suites_score(tmp_path):
    actions = reference_actions(tmp_path, "VAL0001")
    # two rollouts, one at a time: the reference solution, then a wrong claim that the task is impossible
    traces, requests = vf_eval(tmp_path, [*actions, "impossible: no recipe"], "-n", "1", "-r", "2")
    by_reward = sorted(traces, key=lambda trace: trace["rewards"]["score"]["score"])
    assert [trace["rewards"]["score"]["score"] for trace in by_reward] == [0.0, 1.0]
    assert [trace["info"]["success"] for trace in by_reward] == [False, True]
    assert by_reward[1]["info"]["ending"] == "crafted"
    assert by_reward[1]["info"]["breakdown"]["actions"] == len(actions)
    # the model read the brief first, then each result; its system prompt says how to act
    gym_env = DiscogymEnv("crafting", split="val", task="VAL0001")
    brief, _ = gym_env.reset(seed=0)
    first = requests[0].body["messages"]
    assert "Each of your replies is one action" in first[0]["content"] and first[-1]["content"] == brief
    assert requests[1].body["messages"][-1]["content"] == gym_env.step(actions[0])[0]
    gym_env.close()
    # the episodes as a run's: discogym report reads them, and their scores recompute from the files
    suite = get_suite("crafting")
    assert sorted(suite.score(episode).value or 0.0 for episode in episodes_of(tmp_path)) == [0.0, 1.0]
    report = run_discogym("report", str(tmp_path / "episodes"))
    assert report.returncode == 0, report.stderr


def test_a_rollout_verifiers_ends_first_is_named_so_and_its_episode_abandoned(tmp_path):
    actions = reference_actions(tmp_path, "VAL0001")
    (trace,), _ = vf_eval(tmp_path, actions, "-n", "1", "-r", "1", "--env.player.max-turns", "1")
    assert trace["info"] == {"ending": "rollout_ended"} and trace["rewards"]["score"]["score"] == 0.0
    (episode,) = episodes_of(tmp_path)
    assert episode.outcome.termination.value == "abandoned" and len(episode.events) == 1


CANCELLED_MID_STEP = """
import asyncio, contextlib, json, sys, time, types
import discogym_crafting
from discogym.interfaces.gym import DiscogymEnv

order = []
step = DiscogymEnv.step
def slow_step(self, action):
    order.append("step starts"); time.sleep(1.0); answer = step(self, action); order.append("step returns")
    return answer
close = DiscogymEnv.close
def logged_close(self):
    order.append("close"); close(self)
DiscogymEnv.step, DiscogymEnv.close = slow_step, logged_close

class Interaction:  # a model that answers every turn with an action
    async def turn(self, message=None):
        return types.SimpleNamespace(terminated=False, last_reply="craft: from 0 to 1 with 1")
@contextlib.asynccontextmanager
async def interaction(task):
    yield Interaction()
agents = types.SimpleNamespace(player=types.SimpleNamespace(interaction=interaction))

env = discogym_crafting.load_environment(split="val", out=sys.argv[1])
task = next(iter(env.taskset))
async def main():
    try:
        await asyncio.wait_for(env.run(task, agents), 0.3)  # verifiers' episode timeout, mid-step
    except asyncio.TimeoutError:
        order.append("timed out")
    await asyncio.sleep(1.5)
asyncio.run(main())
print(json.dumps(order))
"""


def test_a_rollout_cancelled_mid_step_closes_its_environment_after_the_step(tmp_path):
    done = subprocess.run(
        [str(BIN / "python"), "-c", CANCELLED_MID_STEP, str(tmp_path / "episodes")],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # the cancelled rollout waits for the step in flight, then closes; before, close ran beside the step
    assert json.loads(done.stdout) == ["step starts", "step returns", "close", "timed out"]
    (episode,) = episodes_of(tmp_path)
    assert episode.outcome.termination.value == "abandoned" and len(episode.events) == 1  # the step is in it
