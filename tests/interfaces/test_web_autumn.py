"""People play autumn's WorldTest in a real browser (Debian's chromium, driven by Playwright): at the world's frame
rate with automatic noops and the masked-frame test, and turn by turn with the change-detection and planning
tests. Each game's log is the one ``discogym play`` writes for the same actions."""

import time
from pathlib import Path
from typing import Any

from discogym.core import ToolCall
from tests.interfaces.conftest import TIMEOUT_MS, Served, assert_played_alike, needs_chromium, web_episode

pytestmark = needs_chromium

LINE_OF_TOOL = {"go_to_test": "test", "found_change": "found", "show_frame": "frame", "answer": "answer"}


def typed(call: ToolCall) -> str:
    """The call as a person types it at ``discogym play autumn`` (its text syntax)."""
    if call.tool == "act":
        return str(call.args["action"])
    if call.tool == "choose_frame":
        return f"choose {call.args['index']}"
    verb = LINE_OF_TOOL[call.tool]
    return f"{verb} {call.args['index']}" if "index" in call.args else verb


def start(page: Any, served: Served, task: str, mode: str) -> None:
    page.goto(served.root + "/play?suite=autumn")
    page.fill("#participant", "p5")
    page.select_option("#task", task)
    assert page.input_value("#condition") == "people"  # the condition offered to people first
    page.select_option("#mode", mode)
    page.click("#start")
    page.wait_for_selector("#screen[data-ready=true]")


def frame_at_least(page: Any, number: int) -> None:
    """Wait until the screen shows frame ``number`` or a later one (polled from here: the app's CSP forbids the
    page evaluating a string, as ``wait_for_function`` does)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while int(page.get_attribute("#screen", "data-frame") or -1) < number:
        assert time.monotonic() < deadline, f"the screen never reached frame {number}"
        page.wait_for_timeout(20)


def test_at_the_frame_rate_the_world_moves_on_by_itself_and_the_masked_frame_test_is_answered(
    page, served: Served, runs: Path, tmp_path
):
    start(page, served, "ball-1", "frame-rate")
    assert "frame-rate" in page.inner_text("#grid-info")
    frame_at_least(page, 3)  # nobody acted: noops, one a frame
    page.keyboard.press("ArrowRight")
    page.click("#grid", position={"x": 5, "y": 5})  # the top-left cell
    frame_at_least(page, 8)
    page.click("#reset")
    frame_at_least(page, 11)
    page.click("#go-to-test")
    page.wait_for_selector("#screen[data-phase='test:mfp']")
    last = int(page.get_attribute("#mfp-slider", "max"))
    assert page.get_attribute("#screen", "data-frame") == str(last)  # the test shows the last frame first
    page.fill("#mfp-slider", "3")  # a range input: fill sets the value and fires change
    page.wait_for_selector("#screen[data-frame='3']")
    page.check("#option-2")
    page.click("#answer")
    page.wait_for_selector("body[data-over=true]")
    assert page.is_disabled("#answer")

    episode = web_episode(runs, "autumn")
    assert episode.key.agent_options == {"client": "p5", "mode": "frame-rate"}
    assert episode.key.condition == "people" and episode.score is not None
    actions = [event.call.args.get("action") for event in episode.events if event.call.tool == "act"]
    assert actions.count("noop") >= 3 and "right" in actions and "click 0 0" in actions and "reset" in actions
    assert [event.call.tool for event in episode.events][-3:] == ["go_to_test", "show_frame", "answer"]
    lines = "".join(typed(event.call) + "\n" for event in episode.events)
    assert_played_alike(episode, tmp_path / "cli", "autumn", "ball-1", lines, "--condition", "people")


def test_turn_by_turn_a_person_signals_the_change_and_picks_the_frame(page, served: Served, runs: Path, tmp_path):
    start(page, served, "ball-2", "turns")
    page.click("#act-right")
    page.wait_for_selector("#screen[data-frame='1']")
    page.wait_for_timeout(400)
    assert page.get_attribute("#screen", "data-frame") == "1"  # turn by turn, time waits for the person
    page.click("#go-to-test")
    page.wait_for_selector("#screen[data-phase='test:cd']")
    for frame in range(1, 4):
        page.click("#act-noop")
        page.wait_for_selector(f"#screen[data-frame='{frame}']")
    page.click("#found-change")
    page.wait_for_selector("#frame-picker")
    assert page.get_attribute("#frame-picker", "max") == "3"
    page.fill("#frame-picker", "2")
    assert page.inner_text("#picked").strip() == "frame 2"
    page.click("#choose-frame")
    page.wait_for_selector("body[data-over=true]")

    episode = web_episode(runs, "autumn")
    assert episode.key.agent_options == {"client": "p5", "mode": "turns"}
    assert [typed(event.call) for event in episode.events] == [
        "right",
        "test",
        "noop",
        "noop",
        "noop",
        "found",
        "choose 2",
    ]
    lines = "".join(typed(event.call) + "\n" for event in episode.events)
    assert_played_alike(episode, tmp_path / "cli", "autumn", "ball-2", lines, "--condition", "people")

    page.goto(f"{served.root}/runs/web/autumn/episodes/{episode.key.file_stem()}")  # the replay draws each step
    page.wait_for_selector("#screen[data-ready=true]")
    assert page.get_attribute("#screen", "data-phase") == "interaction" and page.inner_text("#screen-note") == ""
    page.click("#last")
    page.wait_for_selector("#screen[data-phase='test:cd'][data-frame='3']")
    assert page.locator("#screen button").count() == 0  # a replay only draws


def test_the_planning_test_shows_the_goal_beside_the_grid(page, served: Served):
    start(page, served, "ball-3", "turns")
    page.click("#go-to-test")
    page.wait_for_selector("#screen[data-phase='test:planning'] #goal")
    assert "planning" in page.inner_text("#grid-info")
    page.click("#act-up")
    page.wait_for_selector("#screen[data-frame='1']")
    assert page.is_visible("#goal")
