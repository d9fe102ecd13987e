"""The autumn verdict comes from the log: the answer, the frame the goal showed in and the change-detection
timing read from the logged calls (the planning test replayed with the interpreter), never the environment's
cached summary, which rescoring only cross-checks."""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from discogym.core import Event, Task, ToolCall, get_suite
from discogym.core.model.jsonsafe import json_safe
from discogym.suites.autumn.catalog import program_source
from discogym.suites.autumn.env import Presentation, WorldTestEnv
from discogym.suites.autumn.tasks import task_spec
from discogym.suites.autumn.verdict import recompute
from tests.suites.rescore_log import assert_stored_scores_recompute, copy_run, rescore, run, tamper


def kind_of(path: Path) -> str:
    return str(json.loads(path.read_text())["task"]["ground_truth"]["task"]["challenge"]["kind"])


def answer_of(path: Path) -> int:
    return int(json.loads(path.read_text())["task"]["ground_truth"]["task"]["challenge"]["answer"])


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference oracle on every task of the first set (v1; the second's oracle run: test_worldtest.py)."""
    out = tmp_path_factory.mktemp("autumn-oracle")
    assert all(e.score.success for e in run("autumn", out, "--split", "v1", "--agent", "oracle"))
    return out


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The random agent on the change-detection tasks, and on every task with frame stacking."""
    out = tmp_path_factory.mktemp("autumn-random")
    run("autumn", out, "--split", "v1", "--agent", "random", "--condition", "framestack")
    return out


def test_stored_scores_are_what_the_log_recomputes(oracle_run, random_run):
    assert_stored_scores_recompute(oracle_run)
    assert_stored_scores_recompute(random_run)


def test_false_cached_failures_of_every_kind_change_nothing_and_are_flagged(oracle_run, tmp_path):
    copied = copy_run(oracle_run, tmp_path / "run")
    for path in sorted((copied / "episodes").iterdir()):
        kind = kind_of(path)
        if kind == "mfp":
            tamper(path, mfp_choice=(answer_of(path) + 1) % 6)
        elif kind == "planning":
            tamper(path, reached_at=None, phase="interaction")
        else:
            tamper(path, chosen_frame=None, signalled_at=None, test_actions=[])
    rescored = rescore(copied)
    assert rescored.row("oracle")["mean score"] == 1.0 and rescored.row("oracle")["success rate"] == 1.0
    warnings = rescored.warned()
    assert len(warnings) == 45
    endings = {line.split(" on ", 1)[1] for line in warnings}
    assert endings == {
        "mfp_choice; the score comes from the log",
        "phase, reached_at; the score comes from the log",
        "chosen_frame, signalled_at, test_actions; the score comes from the log",
    }


def test_false_cached_successes_of_the_random_agent_are_not_believed(random_run, tmp_path):
    copied = copy_run(random_run, tmp_path / "run")
    before = rescore(copied).row("random")
    for path in sorted((copied / "episodes").iterdir()):
        kind = kind_of(path)
        if kind == "mfp":
            tamper(path, mfp_choice=answer_of(path))
        elif kind == "planning":
            tamper(path, reached_at=1)
    rescored = rescore(copied)
    assert rescored.row("random") == before and before["success rate"] < 0.5
    assert len(rescored.warned()) >= 20


def random_call(rng: np.random.Generator, size: int) -> tuple[str, Any]:
    """A call an agent might make in either phase, valid or not."""
    roll = rng.random()
    if roll < 0.45:
        return "act", {"action": ["noop", "up", "left", "reset", "fly", " Down "][int(rng.integers(6))]}
    if roll < 0.6:
        x, y = (int(v) for v in rng.integers(-1, size + 1, size=2))
        return "act", {"action": f"click {x} {y}"}
    if roll < 0.65:
        return "go_to_test", {}
    if roll < 0.72:
        return "found_change", {}
    if roll < 0.78:
        return "choose_frame", {"index": int(rng.integers(0, 12))}
    if roll < 0.83:
        return "answer", {"index": int(rng.integers(0, 8))}
    if roll < 0.88:
        return "show_frame", {"index": int(rng.integers(0, 20))}
    if roll < 0.93:
        return "act", {"action": 3}
    return "scratchpad", {"note": "hm"}


@pytest.mark.parametrize("frame_stacking", [False, True])
def test_the_walk_reaches_the_environments_end_on_random_call_sequences(frame_stacking):
    rng = np.random.default_rng(11)
    presentation = Presentation(interaction_steps=6, frame_stacking=frame_stacking)
    for kind in ("mfp", "planning", "cd"):
        for task in get_suite("autumn").tasks(kind)[:4]:
            walk_and_compare(task, presentation, rng)


def walk_and_compare(task: Task, presentation: Presentation, rng: np.random.Generator) -> None:
    """Random calls in the environment; the walk over their log must end where the environment did."""
    challenge = task_spec(task)
    source = program_source(challenge.env)
    env = WorldTestEnv(challenge, source, presentation)
    size = env.world.grid_size
    events: list[Event] = []
    for _ in range(120):
        if env.done:
            break
        tool, args = random_call(rng, size)
        events.append(Event(step=len(events) + 1, call=ToolCall(tool=tool, args=args), result=env.call(tool, args)))
    verdict = recompute(challenge, source, presentation, events).model_dump()
    assert verdict == {name: json_safe(env.outcome())[name] for name in verdict}, task.id
