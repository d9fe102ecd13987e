"""What a person's screen shows of a WorldTest episode (``WorldTestEnv.view``): the frame the text shows, the
test's controls' data, and never the answer."""

import json

from discogym.core import get_suite
from discogym.core.reporting.replays import replay_views
from discogym.core.running.session import ExternalEpisodes
from discogym.core.running.storage import RunDir
from discogym.suites.autumn.challenges import ChangeTask, MfpTask, PlanningTask
from discogym.suites.autumn.env import grid_text
from tests.suites.autumn.test_worldtest import env_for, task_id


def frame_of(text: str) -> list[list[str]]:
    """The last frame a result's text shows, as rows of colour names."""
    rows = text.rstrip().split(":\n")[-1].splitlines()
    return [row.split() for row in rows]


def test_exploring_the_view_is_the_frame_the_agent_reads_with_the_steps_left():
    _, env = env_for("ball", "mfp", "people")
    view = env.view()
    assert view["kind"] == "grid" and view["phase"] == "interaction" and view["frame_rate"] == 8
    assert view["frame_number"] == 0 and view["steps_left"] == 1500
    result = env.call("act", {"action": "right"})
    view = env.view()
    assert view["frame"] == frame_of(result.text) and view["frame_number"] == 1 and view["steps_left"] == 1499
    assert grid_text(view["frame"]) in result.text


def test_the_masked_frame_view_shows_the_frame_asked_for_and_never_the_answer():
    task, env = env_for("ball", "mfp")
    challenge = MfpTask.model_validate(task.ground_truth["task"]["challenge"])
    env.call("go_to_test", {})
    view = env.view()
    assert view["test"] == "mfp" and view["frame_number"] == view["frames"] - 1
    assert view["options"] == challenge.options and view["mask"] == list(challenge.mask)
    shown = env.call("show_frame", {"index": 2})
    view = env.view()
    assert view["frame_number"] == 2 and grid_text(view["frame"]) in shown.text
    x, y, width, height = challenge.mask
    assert all(view["frame"][j][i] == "mask" for j in range(y, y + height) for i in range(x, x + width))
    assert "answer" not in json.dumps(view)


def test_the_planning_view_has_the_goal_the_brief_states():
    task, env = env_for("ball", "planning")
    challenge = PlanningTask.model_validate(task.ground_truth["task"]["challenge"])
    intro = env.call("go_to_test", {}).text
    view = env.view()
    assert view["test"] == "planning" and view["steps_left"] == challenge.step_limit
    assert view["goal"] == [[x, y, colour] for x, y, colour in challenge.goal]
    assert all(f"({x},{y}) {colour}" in intro for x, y, colour in challenge.goal)
    assert "solution" not in json.dumps(view)


def test_the_change_view_lists_the_test_frames_only_once_the_change_is_signalled():
    task, env = env_for("ball", "cd")
    challenge = ChangeTask.model_validate(task.ground_truth["task"]["challenge"])
    env.call("go_to_test", {})
    env.call("act", {"action": "noop"})
    view = env.view()
    assert view["test"] == "cd" and not view["signalled"] and view["frames"] is None
    env.call("found_change", {})
    view = env.view()
    assert view["signalled"] and len(view["frames"]) == 2 and view["frames"][-1] == view["frame"]
    assert challenge.modified not in json.dumps(view) and challenge.change not in json.dumps(view)


def test_a_logged_episode_replays_to_the_views_its_player_saw_and_stops_where_the_log_differs(tmp_path):
    suite = get_suite("autumn")
    session = ExternalEpisodes(suite, tmp_path, agent="human").session("p1")
    session.keep_views = True
    session.start(task_id("ball", "cd"), "people")
    seen = [session.last_view]
    for tool, args in [("act", {"action": "right"}), ("act", {"action": "click 3 4"}), ("go_to_test", {})]:
        session.call(tool, args)
        seen.append(session.last_view)
    session.end("done")
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert replay_views(suite, episode) == (seen, None)

    changed = episode.model_copy(deep=True)
    changed.events[1].result.text = "something else"
    views, stopped = replay_views(suite, changed)
    assert views == [*seen[:2], None, None] and stopped is not None and "step 2" in stopped
