"""The redstone suite: the agent's tools, the trial budget, the builder through the harness, report and play."""

import json

import pytest

from discogym.core import ToolCall, ToolResult, get_suite
from discogym.core.running.storage import RunDir
from discogym.suites.redstone.agents import placement_order, set_block_call
from discogym.suites.redstone.build_lab import TRIAL_BUDGET, parse_action
from discogym.suites.redstone.builder import build_device
from discogym.suites.redstone.env import Presentation, RedstoneEnv
from discogym.suites.redstone.tasks import make_task
from tests.conftest import run_discogym


def new_env(family: str = "A", level: str = "L1", hint: bool = False) -> RedstoneEnv:
    return RedstoneEnv(make_task(family, level), Presentation(hint=hint))


def place(env: RedstoneEnv, x: int, y: int, z: int, block: str, **properties: str) -> ToolResult:
    return env.call("set_block", {"x": x, "y": y, "z": z, "block": block, "properties": properties})


def build(env: RedstoneEnv) -> None:
    for pos, block in placement_order(build_device(env.spec)):
        call = set_block_call(pos, block)
        result = env.call(call.tool, call.args)
        assert result.ok, result.text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"x": 11, "y": 4, "z": 0, "block": "stone"}, "outside the build region"),
        ({"x": 0, "y": 3, "z": 0, "block": "stone"}, "outside the build region"),
        ({"x": 0, "y": 4, "z": 0, "block": "minecraft:dirt"}, "is not an allowed block"),
        ({"x": 0, "y": 4, "z": 0, "block": "redstone_repeater", "properties": {"delay": "5"}}, "delay must be one of"),
        ({"x": 0, "y": 4, "z": 0, "block": "redstone_lamp", "properties": {"facing": "up"}}, "has no property"),
        ({"x": 0, "y": 4, "z": 0, "block": "redstone_wire[power=3]"}, "block id alone"),
        ({"x": 0, "y": 6, "z": 0, "block": "redstone_wire"}, "needs stone, glass or a lamp on 0,5,0"),
        ({"x": "one", "y": 4, "z": 0, "block": "stone"}, "x"),
        ({"x": 0, "y": 4, "z": 0}, "block"),
    ],
)
def test_bad_requests_get_a_clear_error_and_the_episode_goes_on(args, message):
    env = new_env()
    result = env.call("set_block", args)
    assert not result.ok and message in result.text
    assert not env.done and env.device == {}
    assert place(env, 0, 4, 0, "stone").ok


def test_blocks_are_placed_read_and_scanned_with_their_state():
    env = new_env()
    assert place(env, 0, 4, 0, "stone_button", face="floor").ok
    assert place(env, 1, 4, 0, "minecraft:redstone_wire", power="15").ok  # computed properties are the world's
    assert place(env, 2, 4, 0, "redstone_lamp").ok
    assert env.call("get_block_state", {"x": 1, "y": 4, "z": 0}).text.startswith(
        "1,4,0 minecraft:redstone_wire[east=side,north=none,power=0,south=none,west=side]"
    )
    assert "0,3,0 minecraft:stone" in env.call("get_block_state", {"x": 0, "y": 3, "z": 0}).text  # the floor
    scan = env.call("scan_redstone_area", {"center": [0, 4, 0], "radius": 1}).text
    assert scan.splitlines()[0] == "2 blocks within 1 of 0,4,0 at tick 0"
    assert "2 4 0" not in scan and "1 4 0 minecraft:redstone_wire" in scan
    assert not env.call("scan_redstone_area", {"center": [0, 4]}).ok
    layers = env.call("scan_redstone_area", {"view": "layers"}).text
    assert "y=4" in layers and "p   0   l" in layers and "y=3" not in layers
    removed = place(env, 0, 4, 0, "air")
    assert removed.ok and (0, 4, 0) not in env.device


def test_properties_may_be_numbers_and_booleans():
    env = new_env()
    assert env.call(
        "set_block", {"x": 0, "y": 4, "z": 0, "block": "redstone_repeater", "properties": {"delay": 3, "locked": True}}
    ).ok
    assert env.device[(0, 4, 0)].get("delay") == "3"


def test_removing_a_support_drops_what_stands_on_it():
    env = new_env()
    place(env, 0, 4, 0, "stone")
    place(env, 0, 5, 0, "redstone_torch")
    result = place(env, 0, 4, 0, "air")
    assert "these dropped: 0,5,0" in result.text and env.device == {}


def test_a_trial_presses_the_button_and_the_event_stream_has_the_raw_changes():
    env = new_env()
    assert not env.call("activate_button", {}).ok  # no button yet: refused, not counted
    build(env)
    result = env.call("activate_button", {})
    assert result.ok and result.data["trial"] == 1 and env.trials == 1
    pressed = result.data["pressed_at"]
    events = env.call("get_event_stream", {"since": pressed}).text.splitlines()
    assert events[0].startswith(f"{result.data['changes']} changes since tick {pressed}")
    lamp_lines = [line for line in events[1:] if "redstone_lamp[lit=true]" in line]
    assert len(lamp_lines) == 4 and all(line.split()[0] == str(pressed) for line in lamp_lines)
    assert all("pass" not in line and "fail" not in line for line in events)


def test_the_budget_is_fifty_trials():
    env = new_env()
    build(env)
    for _ in range(TRIAL_BUDGET):
        assert env.call("activate_button", {}).ok
    over = env.call("activate_button", {})
    assert not over.ok and "all 50 verification trials are used" in over.text and env.trials == TRIAL_BUDGET


def test_rebuilds_count_build_revise_cycles_and_the_verdict_needs_a_submission():
    env = new_env()
    build(env)
    env.call("activate_button", {})
    place(env, -5, 4, -5, "stone")
    place(env, -5, 4, -6, "stone")
    env.call("activate_button", {})
    place(env, -5, 4, -5, "air")
    assert env.rebuilds == 2 and env.trials == 2
    assert env.outcome()["passed"] is False  # a passing device, but not submitted
    result = env.call("submit", {})
    assert result.done and "pass" not in result.text
    outcome = env.outcome()
    assert outcome["submitted"] and outcome["passed"] and outcome["check"]["passed"]
    assert outcome["device"][0].startswith("-5 4 -6 minecraft:stone")


def test_the_brief_states_the_contract_and_the_hint_only_in_its_condition():
    plain = new_env("C", "L1").brief()
    assert "delays_ticks=[1, 2, 1]" in plain and "1 rt = 2 gt" in plain and "x -10..10, y 4..14, z -10..10" in plain
    assert "Hint" not in plain
    assert "Hint: Repeater-Delay-Setting" in new_env("C", "L1", hint=True).brief()


def test_the_text_syntax():
    assert parse_action("place 1 4 -2 redstone_repeater[facing=west,delay=2]").args == {
        "x": 1,
        "y": 4,
        "z": -2,
        "block": "minecraft:redstone_repeater",
        "properties": {"delay": "2", "facing": "west"},
    }
    assert parse_action("remove 1 4 0").args["block"] == "minecraft:air"
    assert parse_action("layers 0 4 0 5").args == {"view": "layers", "center": [0, 4, 0], "radius": 5}
    assert parse_action("scan 3").args == {"view": "list", "radius": 3}
    assert parse_action("events 12").args == {"since": 12} and parse_action("press").tool == "activate_button"
    for bad, message in [("fly", "not an action"), ("get 1 two 3", "integers"), ("place 0 4 0 dirt", "palette")]:
        with pytest.raises(Exception, match=message):
            parse_action(bad)


def test_the_random_agents_calls_are_written_in_the_text_syntax_and_read_back():
    env = new_env()
    for call in env.valid_calls():
        text = env.format_text_action(call)
        assert text is not None, call
        parsed = env.parse_text_action(text)
        expected = {key: value for key, value in call.args.items() if key != "properties"}
        kept = {key: value for key, value in parsed.args.items() if key in expected}
        assert (parsed.tool, kept) == (call.tool, expected), text  # a placed block gets its default properties
    for text in ("place 1 4 0 redstone_repeater[facing=west,delay=2]", "place 0 4 0 stone_button[face=floor]"):
        call = parse_action(text)  # a block with its properties, as the builder places them
        written = env.format_text_action(call)
        assert written is not None and "[" in written and parse_action(written) == call
    assert (
        env.format_text_action(
            ToolCall(tool="set_block", args={"x": 1, "y": 4, "z": 0, "block": "stone", "properties": []})
        )
        is None
    )


def test_the_builder_solves_a_family_through_the_harness_and_the_report_has_the_tables(tmp_path):
    done = run_discogym("run", "redstone", "--agent", "builder", "--split", "E", "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert len(episodes) == 5 and all(e.score.success for e in episodes)
    assert all(e.score.components["trials"] == 1 and e.score.components["rebuilds"] == 0 for e in episodes)
    report = run_discogym("report", str(tmp_path), "--json")
    tables = {t["title"]: t for t in json.loads(report.stdout)["tables"]}
    success = tables["redstone: success by family and level"]
    assert success["rows"][0][3:] == ["E", 1.0, 1.0, 1.0, 1.0, 1.0, None, 1.0]
    assert tables["redstone: verification trials and rebuilds"]["rows"][0][3:6] == [5, 0, 5]


def test_the_random_agent_plays_without_crashing(tmp_path):
    done = run_discogym("run", "redstone", "--agent", "random", "--split", "A", "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert len(episodes) == 5 and all(e.outcome.status == "completed" for e in episodes)


def test_a_person_builds_and_presses_in_the_terminal(tmp_path):
    lines = "place 0 4 0 stone_button[face=floor]\nplace 1 4 0 redstone_wire\nplace 2 4 0 redstone_lamp\n"
    lines += "layers 0 4 0 2\npress\nevents 0\nhello\nsubmit\n"
    done = run_discogym("play", "redstone", "A_simultaneous_lights_L1", "--out", str(tmp_path), input=lines)
    assert done.returncode == 0, done.stderr
    assert "place X Y Z BLOCK" in done.stdout and "p   0   l" in done.stdout
    assert "trial 1 of 50" in done.stdout and "not understood: not an action: 'hello'" in done.stdout
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert episode.outcome.termination == "submitted" and episode.score.success is False
    assert "lamps: the device has 1 redstone_lamps" in " ".join(episode.outcome.env["check"]["failures"])


def test_the_suite_lists_its_splits_and_reads_task_files(tmp_path):
    suite = get_suite("redstone")
    assert [len(suite.tasks(split)) for split in suite.splits()] == [25, 5, 5, 5, 5, 5]
    (tmp_path / "one.yaml").write_text(make_task("D", lamps=8).to_yaml(), encoding="utf-8")
    assert [t.id for t in suite.tasks(str(tmp_path))] == ["D_equal_delay_distribution_N8"]
    with pytest.raises(Exception, match="unknown split"):
        suite.tasks("nope")
