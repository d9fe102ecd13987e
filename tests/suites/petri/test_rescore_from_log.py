"""The petri answer comes from the log's ``submit`` call, never the environment's cached summary, which rescoring
only cross-checks."""

import json
from pathlib import Path

import pytest

from discogym.core import Event, ToolCall
from discogym.suites.petri import frozen
from discogym.suites.petri.env import PetriEnv
from discogym.suites.petri.sims.registry import get_simulation
from discogym.suites.petri.tasks import PetriTaskSpec
from discogym.suites.petri.verdict import score, submission
from tests.suites.petri.test_scoring import episode_of
from tests.suites.rescore_log import assert_stored_scores_recompute, copy_run, log, rescore, run, tamper

PILOT = frozen.load_set("pilot-v0").tasks
REFERENCE_SCORE = 92.5


def true_answer(spec: PetriTaskSpec) -> dict[str, object]:
    (name,) = spec.changed
    return {"parameter": name, "direction": spec.direction}


def wrong_answer(spec: PetriTaskSpec) -> dict[str, object]:
    decoy = next(name for name in spec.candidates if name not in spec.changed)
    return {"parameter": decoy, "direction": "up"}


@pytest.fixture(scope="module")
def pilot_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference ofat solver and the guessing floor on every pilot task."""
    out = tmp_path_factory.mktemp("petri-pilot")
    episodes = run("petri", out, "--set", "pilot-v0", "--agent", "ofat", "--agent", "guess")
    assert {e.score.value for e in episodes if e.key.agent == "ofat"} == {REFERENCE_SCORE}
    return out


def test_stored_scores_are_what_the_log_recomputes(pilot_run):
    assert_stored_scores_recompute(pilot_run)


def test_a_different_cached_submission_changes_nothing_but_is_flagged(pilot_run, tmp_path):
    copied = copy_run(pilot_run, tmp_path / "run")
    before = rescore(copied).row("guess")["mean score"]
    for spec in PILOT:
        tamper(episode_path_of(copied, spec.id, "ofat"), submission=wrong_answer(spec))
        guessed = episode_path_of(copied, spec.id, "guess")
        own = json.loads(guessed.read_text())["outcome"]["env"]["submission"]
        tamper(guessed, submission=true_answer(spec) if own != true_answer(spec) else wrong_answer(spec))
    rescored = rescore(copied)
    assert rescored.row("ofat")["mean score"] == REFERENCE_SCORE and rescored.row("ofat")["success rate"] == 1.0
    assert rescored.row("guess")["mean score"] == before
    assert len(rescored.warned()) == 2 * len(PILOT)
    assert all(line.endswith("disagrees with its log on submission; the score comes from the log")
               for line in rescored.warned())  # fmt: skip


def test_a_false_cached_count_of_experiments_is_flagged(pilot_run, tmp_path):
    copied = copy_run(pilot_run, tmp_path / "run")
    tamper(episode_path_of(copied, PILOT[0].id, "ofat"), spent=7)
    rescored = rescore(copied)
    (warning,) = rescored.warned()
    assert PILOT[0].id in warning and "on spent;" in warning
    assert rescored.row("ofat")["mean score"] == REFERENCE_SCORE


def episode_path_of(run_dir: Path, task: str, agent: str) -> Path:
    (path,) = [p for p in (run_dir / "episodes").iterdir() if p.name.startswith(f"{task}_default_{agent}_")]
    return path


def test_the_answer_is_the_first_submit_the_environment_accepted():
    spec = next(t for t in frozen.load_set("l3-v0").tasks)
    first, second = sorted(spec.changed)
    decoy = next(name for name in spec.candidates if name not in spec.changed)
    calls = [
        ("submit", {"parameter": first, "direction": "up"}),  # the L1 form at L3: refused
        ("submit", {"parameters": [first, first], "interaction": "positive"}),  # not two different parameters
        ("submit", {"parameters": [first, "nonsense"], "interaction": "positive"}),  # not a candidate
        ("submit", "not json"),
        ("submit", {"parameters": [decoy, second], "interaction": "negative"}),  # accepted: the episode ends
        ("submit", {"parameters": [first, second], "interaction": spec.interaction}),
    ]
    env = PetriEnv(spec, get_simulation(spec.simulation))
    events = log(calls, env)
    assert len(events) == 5
    replayed = episode_of(spec, events, None)
    assert (
        submission(replayed, spec)
        == env.outcome()["submission"]
        == {
            "parameters": [decoy, second],
            "interaction": "negative",
        }
    )
    after_the_end = Event(step=6, call=ToolCall(tool="submit", args=calls[-1][1]), result=events[-1].result)
    late = replayed.model_copy(update={"events": [*events, after_the_end]})
    assert submission(late, spec) == env.outcome()["submission"]  # a submit after the end changes nothing


def test_without_a_submit_call_a_cached_answer_scores_nothing():
    spec = PILOT[0]
    episode = episode_of(spec, [], None)
    episode = episode.model_copy(update={"outcome": episode.outcome.model_copy(update={"env": {
        "submission": true_answer(spec), "spent": 0}})})  # fmt: skip
    result = score(episode, spec)
    assert result.value == 0.0 and result.success is False
    assert result.components["cache_mismatch"] == ["submission"]
