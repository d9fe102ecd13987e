"""The WorldTest protocol: phases, tools, the oracle proving every task solvable, and no leak of the answers."""

import json
from typing import Any

import pytest

from discogym.core import get_suite
from discogym.core.running.storage import RunDir
from discogym.suites.autumn.catalog import CATALOG
from discogym.suites.autumn.challenges import ChangeTask, MfpTask, PlanningTask
from discogym.suites.autumn.tasks import task_spec
from tests.conftest import run_discogym


def task_id(env: str, kind: str) -> str:
    """The id of an environment's task of a kind (ids do not name the kind: the ground truth does)."""
    return next(t.id for t in get_suite("autumn").tasks("all") if task_spec(t).env == env and task_spec(t).kind == kind)


def env_for(env: str, kind: str, condition: str = "text"):
    suite = get_suite("autumn")
    task = next(t for t in suite.tasks("all") if t.id == task_id(env, kind))
    return task, suite.make_env(task, suite.condition(condition), seed=0)


def test_the_task_set_has_three_challenges_per_environment():
    tasks = get_suite("autumn").tasks("all")
    envs = {task_spec(t).env for t in tasks}
    assert len(tasks) == 3 * len(envs) and len(envs) >= 15
    kinds = {task_spec(t).kind for t in tasks}
    assert kinds == {"mfp", "planning", "cd"}


def test_the_oracle_solves_every_task(tmp_path):
    done = run_discogym("run", "autumn", "--agent", "oracle", "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert len(episodes) == len(get_suite("autumn").tasks("all")) and all(e.score.value == 1.0 for e in episodes)
    cd = [e for e in episodes if e.score.components["kind"] == "cd"]
    assert all(e.score.components["chosen_frame"] == e.score.components["defect_frame"] for e in cd)


def test_the_random_agent_runs_every_task_without_errors(tmp_path):
    done = run_discogym("run", "autumn", "--split", "v1", "--agent", "random", "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert len(episodes) == 45 and all(e.outcome.status == "completed" for e in episodes)
    assert 0 < sum(e.score.value or 0 for e in episodes) < 45


def test_interaction_then_test_phases_and_their_errors():
    _, env = env_for("counter", "planning")
    assert "Interaction phase" in env.brief() and "frame 0:" in env.brief()
    assert not env.call("act", {"action": "jump"}).ok
    assert not env.call("act", {"action": "click 99 0"}).ok
    assert env.call("act", {"action": "click 1 1"}).ok
    assert env.call("act", {"action": "reset"}).ok and env.resets == 1
    assert not env.call("answer", {"index": 0}).ok  # not a planning tool, and not yet in the test
    started = env.call("go_to_test", {})
    assert started.ok and "Test: planning" in started.text
    assert not env.call("act", {"action": "reset"}).ok  # no reset in the test
    assert not env.call("go_to_test", {}).ok


def test_interaction_frames_are_numbered_on_from_the_briefs_frame_0():
    _, env = env_for("counter", "planning")
    assert env.call("act", {"action": "click 1 1"}).text.startswith("frame 1:\n")
    assert env.call("act", {"action": "noop"}).text.startswith("frame 2:\n")
    assert env.call("act", {"action": "reset"}).text.startswith("frame 3:\n")  # the initial state again, shown anew


def test_the_step_cap_ends_the_interaction_phase():
    _, env = env_for("ball", "mfp")
    env.presentation = env.presentation.model_copy(update={"interaction_steps": 3})
    for _ in range(2):
        assert "Test:" not in env.call("act", {"action": "noop"}).text
    assert "Test: masked frame prediction" in env.call("act", {"action": "noop"}).text


def test_frame_stacking_shows_every_frame():
    _, env = env_for("ball", "mfp", "framestack")
    text = env.call("act", {"action": "noop"}).text
    assert text.count("frame ") == 8  # the action and FRAME_RATE - 1 = 7 noops


def test_mfp_frames_are_masked_and_the_answer_is_not_shown():
    task, env = env_for("gravity", "mfp")
    challenge = task_spec(task).challenge
    assert isinstance(challenge, MfpTask)
    text = env.call("go_to_test", {}).text
    assert "option 5:" in text and "mask" in text
    frame = env.call("show_frame", {"index": 1}).text
    assert frame.count("mask") == challenge.mask[2] * challenge.mask[3]
    assert not env.call("show_frame", {"index": 999}).ok
    assert env.call("answer", {"index": challenge.answer}).done


def test_change_detection_needs_the_signal_before_the_frame():
    task, env = env_for("counter", "cd")
    challenge = task_spec(task).challenge
    assert isinstance(challenge, ChangeTask)
    env.call("go_to_test", {})
    assert not env.call("choose_frame", {"index": 0}).ok
    env.call("act", {"action": "noop"})
    assert env.call("found_change", {}).ok
    assert not env.call("act", {"action": "noop"}).ok
    assert env.call("choose_frame", {"index": 1}).done


@pytest.mark.parametrize(("name", "kind"), [("water", "cd"), ("push", "planning"), ("particles", "mfp")])
def test_nothing_the_agent_sees_gives_the_answer_away(name, kind):
    task, env = env_for(name, kind)
    challenge = task_spec(task).challenge
    texts = [env.brief(), json.dumps(task.params), task.brief]
    for action in ["noop", "left", "click 2 2"]:
        texts.append(env.call("act", {"action": action}).text)
    texts.append(env.call("go_to_test", {}).text)
    seen = "\n".join(texts)
    assert "cdClock" not in seen and "(program" not in seen
    if isinstance(challenge, ChangeTask):
        assert challenge.change not in seen
    if isinstance(challenge, PlanningTask):
        assert "; ".join(challenge.solution) not in seen
    if isinstance(challenge, MfpTask):
        assert "answer" not in json.dumps(task.params)


def test_verify_regenerates_an_environment_byte_for_byte():
    done = run_discogym("autumn", "verify", "--set", "v1", "--env", "counter", "--env", "ball", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["identical"] is True


def test_envs_lists_the_catalogue_with_its_statistics():
    done = run_discogym("autumn", "envs", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["environments"]
    assert len(rows) == len(CATALOG) and {r["category"] for r in rows} == {
        "physical",
        "emergent",
        "multi-agent",
        "logic",
        "game",
        "tool-use",
    }
    table = run_discogym("autumn", "envs")
    assert table.returncode == 0 and "lightsout" in table.stdout and "grid_size" in table.stdout


def test_a_model_plays_with_the_text_syntax(tmp_path, monkeypatch):
    from discogym.core import AgentOptions
    from discogym.core.running.runner import RunConfig, Runner
    from tests.llm.fake_endpoint import FakeEndpoint, Say, conversation_texts

    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    suite = get_suite("autumn")
    with FakeEndpoint() as fake:
        fake.script.extend([Say("I will try the arrows.\nleft"), Say("hmm"), Say("test"), Say("answer 2")])
        agent = AgentOptions(
            name="llm",
            model=f"openai-compatible/fake@{fake.url}",
            options={"mode": "suite", "context_window": "128000"},
        )
        Runner(suite, RunConfig.for_suite(suite, [agent], split="mfp", tasks=[task_id("ball", "mfp")]), tmp_path).run()
        texts = conversation_texts(fake.requests[-1].body)
    assert "frame N | answer K" in texts[0]  # the syntax is the system prompt
    assert any("Interaction phase" in t and "frame 0:" in t for t in texts)
    assert any("Test: masked frame prediction" in t for t in texts), texts
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [e.call.tool for e in episode.events] == ["act", "go_to_test", "answer"]
    assert episode.outcome.termination == "answered"


def test_the_masked_frames_are_replayed_once_however_often_they_are_shown(monkeypatch):
    # N11 of issue 46: each show_frame replayed the world (twice with the web app's view), up to 0.5 s a frame
    import discogym.suites.autumn.env as env_module
    from discogym.suites.autumn.challenges import play

    replays: list[int] = []

    def counted(*args: Any) -> Any:
        replays.append(1)
        return play(*args)

    monkeypatch.setattr(env_module, "play", counted)
    _, env = env_for("gravity", "mfp")
    env.call("go_to_test", {})
    shown = [env.call("show_frame", {"index": i % 3}).text for i in range(6)]
    assert len(replays) == 1 and shown[0] == shown[3]
