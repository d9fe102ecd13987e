"""The redstone verdict comes from the log: the device rebuilt from the logged edits and evaluated, never the
environment's cached summary, which rescoring only cross-checks."""

from pathlib import Path

import numpy as np
import pytest

from discogym.core.model.jsonsafe import json_safe
from discogym.suites.redstone.env import Presentation, RedstoneEnv
from discogym.suites.redstone.tasks import make_task
from discogym.suites.redstone.verdict import recompute
from tests.suites.rescore_log import assert_stored_scores_recompute, copy_run, episode_path, log, rescore, run, tamper

BUILT = "A_simultaneous_lights_L1"


@pytest.fixture(scope="module")
def builder_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference builder on every official task."""
    out = tmp_path_factory.mktemp("redstone-builder")
    assert all(e.score.success for e in run("redstone", out, "--agent", "builder"))
    return out


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The random agent on family A: it fails every task."""
    out = tmp_path_factory.mktemp("redstone-random")
    assert not any(e.score.success for e in run("redstone", out, "--agent", "random", "--split", "A"))
    return out


def test_stored_scores_are_what_the_log_recomputes(builder_run, random_run):
    assert_stored_scores_recompute(builder_run)
    assert_stored_scores_recompute(random_run)


def test_a_false_cached_failure_does_not_change_the_score_and_is_flagged(builder_run, tmp_path):
    copied = copy_run(builder_run, tmp_path / "run")
    tamper(
        episode_path(copied, BUILT), passed=False, submitted=False, device=[], check={"passed": False, "failures": []}
    )
    rescored = rescore(copied)
    row = rescored.row("builder")
    assert row["mean score"] == 1.0 and row["success rate"] == 1.0
    (warning,) = rescored.warned()
    assert BUILT in warning and "builder" in warning and "on check, device, passed, submitted;" in warning
    assert rescored.document["warnings"] == [warning.removeprefix("warning: ")]


def test_a_false_cached_success_of_the_random_agent_scores_nothing(random_run, tmp_path):
    copied = copy_run(random_run, tmp_path / "run")
    for path in (copied / "episodes").iterdir():
        tamper(path, passed=True, submitted=True, check={"passed": True, "failures": []})
    rescored = rescore(copied)
    assert rescored.row("random")["mean score"] == 0.0
    assert len(rescored.warned()) == 5
    assert all("on check, passed" in line for line in rescored.warned())


def place(x: int, y: int, z: int, block: str, **properties: str) -> tuple[str, dict[str, object]]:
    return "set_block", {"x": x, "y": y, "z": z, "block": block, "properties": properties}


def test_dropped_blocks_rebuilds_refused_calls_and_calls_after_submit_count_as_in_the_environment():
    spec = make_task("A", "L1")
    calls = [
        place(0, 4, 0, "stone"),
        place(0, 5, 0, "redstone_torch"),  # stands on the stone
        place(3, 6, 3, "redstone_wire"),  # no support: refused
        place(11, 4, 0, "stone"),  # outside the region: refused
        ("set_block", {"x": "one", "y": 4, "z": 0, "block": "stone"}),  # malformed
        ("activate_button", {}),  # no button: refused
        place(1, 4, 0, "stone_button", face="floor"),
        ("activate_button", {}),
        place(0, 4, 0, "air"),  # the torch drops with it: a rebuild
        place(5, 4, 5, "air"),  # already air: no edit
        ("teleport", {}),
        ("submit", {}),
    ]
    env = RedstoneEnv(spec, Presentation())
    events = log(calls, env)
    verdict = recompute(spec, events)
    assert verdict.model_dump() == {name: json_safe(env.outcome())[name] for name in verdict.model_dump()}
    assert verdict.device == ["1 4 0 minecraft:stone_button[face=floor,facing=north,powered=false]"]
    assert (verdict.edits, verdict.rebuilds, verdict.trials, verdict.submitted) == (4, 1, 1, True)
    after = [*events, events[0].model_copy(update={"step": len(events) + 1})]  # a call past the end changes nothing
    assert recompute(spec, after) == verdict


def random_call(rng: np.random.Generator) -> tuple[str, object]:
    """A call an agent might make, valid or not."""
    roll = rng.random()
    if roll < 0.05:
        return "activate_button", {}
    if roll < 0.08:
        return "set_block", "not json"
    if roll < 0.1:
        return "scan_redstone_area", {}
    x, z = (int(v) for v in rng.integers(-3, 4, size=2))
    y = int(rng.integers(4, 7))
    block = ["stone", "redstone_wire", "redstone_lamp", "air", "redstone_torch", "dirt", "glass"][int(rng.integers(7))]
    if rng.random() < 0.1:
        return place(x, y, z, "stone_button", face="floor")
    return place(x, y, z, block)


@pytest.mark.parametrize("seed", range(4))
def test_the_rebuilt_device_is_the_environments_on_random_call_sequences(seed):
    rng = np.random.default_rng(seed)
    spec = make_task("B", "L1")
    env = RedstoneEnv(spec, Presentation())
    events = log([random_call(rng) for _ in range(80)] + [("submit", {})], env)
    verdict = recompute(spec, events).model_dump()
    assert verdict == {name: json_safe(env.outcome())[name] for name in verdict}
    assert verdict["edits"] > 10
