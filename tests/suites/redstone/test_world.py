"""World files, placement rules, determinism and the simulate command."""

import json
import subprocess
import sys

import pytest

from discogym.core import UserError
from discogym.suites.redstone.blocks import make_block, parse_block
from discogym.suites.redstone.build_lab import parse_action
from discogym.suites.redstone.engine import Simulator
from discogym.suites.redstone.world import World, parse_world
from tests.conftest import REPO, cli_environment, run_discogym
from tests.suites.redstone.circuits import build
from tests.suites.redstone.test_engine import edge_detector

LINE_WORLD = "0 0 0 stone\n0 1 0 stone_button[face=floor]\n1 0 0 stone\n1 1 0 redstone_wire\n2 1 0 redstone_lamp\n"


def test_blocks_parse_with_defaults_and_clear_errors():
    block = parse_block("minecraft:redstone_repeater[facing=west,delay=3]")
    assert str(block) == "minecraft:redstone_repeater[delay=3,facing=west,locked=false,powered=false]"
    assert parse_block("stone") == make_block("minecraft:stone")
    for bad, message in [
        ("dirt", "not in the redstone palette"),
        ("redstone_repeater[delay=5]", "delay must be one of 1, 2, 3, 4"),
        ("redstone_lamp[colour=red]", "has no property 'colour'"),
        ("redstone_wire[power]", "needs a value"),
    ]:
        with pytest.raises(UserError, match=message):
            parse_block(bad)


def test_world_files_take_the_repeater_under_the_papers_and_the_games_name():
    lines = "0 0 0 stone\n1 0 0 stone\n0 1 0 {}[facing=west,delay=2]\n1 1 0 redstone_lamp\n"
    papers = parse_world(lines.format("minecraft:redstone_repeater"))
    for name in ("minecraft:repeater", "repeater", "redstone_repeater"):
        assert parse_world(lines.format(name)).blocks == papers.blocks
    rows = [
        {"pos": [0, 0, 0], "block": "stone"},
        {"pos": [0, 1, 0], "block": "minecraft:repeater[facing=west,delay=2]"},
    ]
    assert parse_world(json.dumps(rows), "w.json", ".json").blocks[(0, 1, 0)] == papers.blocks[(0, 1, 0)]
    assert papers.blocks[(0, 1, 0)].id == "minecraft:redstone_repeater"  # held and written under the paper's name
    assert "0 1 0 minecraft:redstone_repeater[" in papers.to_text()
    # the agent's text syntax too: the tool call names the palette's block
    assert parse_action("place 0 1 0 minecraft:repeater[facing=west]").args["block"] == "minecraft:redstone_repeater"


def test_the_three_file_formats_give_the_same_world():
    text = parse_world(LINE_WORLD)
    rows = [
        {"pos": [x, y, z], "block": str(block)} if i % 2 else {"x": x, "y": y, "z": z, "block": str(block)}
        for i, ((x, y, z), block) in enumerate(text)
    ]
    assert parse_world(json.dumps(rows), "w.json", ".json").blocks == text.blocks
    assert parse_world(json.dumps({"blocks": rows}), "w.yaml", ".yaml").blocks == text.blocks
    assert parse_world(text.to_text()).blocks == text.blocks


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0 1 0 redstone_wire", "needs stone, glass or a lamp on 0,0,0; found air"),
        ("0 1 0 redstone_wall_torch[facing=east]", "against -1,1,0"),
        ("0 0 0 stone\n0 0 0 glass", "two blocks at 0,0,0"),
        ("0 0 stone", "expected 'x y z minecraft:id"),
        ("a b c stone", "three integers"),
    ],
)
def test_bad_world_files_get_a_clear_message(text, message):
    with pytest.raises(UserError, match=message):
        parse_world(text)


def test_removing_a_support_drops_what_stood_on_it():
    world = parse_world("0 0 0 stone\n0 1 0 redstone_wire\n1 0 0 glass\n1 1 0 redstone_torch")
    assert world.place((0, 0, 0), make_block("air")) == [(0, 1, 0)]
    assert sorted(world.blocks) == [(1, 0, 0), (1, 1, 0)]


def trace_of(lines: list[str]):
    sim = build(*lines)
    sim.press((0, 1, 0))
    sim.run(60)
    return [(c.tick, c.pos, str(c.before), str(c.after)) for c in sim.trace]


def test_the_trace_does_not_depend_on_the_order_blocks_are_placed():
    lines = edge_detector(2, 2)
    forward = trace_of(lines)
    assert forward and forward == trace_of(lines[::-1]) == trace_of(sorted(lines))


def test_the_trace_is_the_same_in_other_processes_and_hash_seeds(tmp_path):
    script = (
        "from tests.suites.redstone.test_world import trace_of\n"
        "from tests.suites.redstone.test_engine import edge_detector\n"
        "print(repr(trace_of(edge_detector(2, 2))))\n"
    )
    outputs = []
    for seed in ("1", "2"):
        env = cli_environment(PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == repr(trace_of(edge_detector(2, 2))) + "\n"


def test_computed_properties_in_a_world_file_are_recomputed():
    stale = LINE_WORLD.replace("redstone_lamp", "redstone_lamp[lit=true]").replace(
        "redstone_wire", "redstone_wire[power=9]"
    )
    sim = Simulator(parse_world(stale))
    assert sim.block((2, 1, 0)).get("lit") == "false" and sim.power[(1, 1, 0)] == 0


def test_a_world_edited_while_running_updates_at_once():
    sim = Simulator(parse_world(LINE_WORLD))
    dropped = sim.set_block((1, 0, 0), make_block("air"))
    assert dropped == [(1, 1, 0)] and sim.block((1, 1, 0)).id == "minecraft:air"
    assert [(c.pos, c.after.id) for c in sim.trace] == [((1, 0, 0), "minecraft:air"), ((1, 1, 0), "minecraft:air")]


def test_simulate_prints_the_trace_and_json(tmp_path):
    world = tmp_path / "line.txt"
    world.write_text(LINE_WORLD)
    done = run_discogym("redstone", "simulate", str(world), "--press", "0,1,0", "--ticks", "30")
    assert done.returncode == 0, done.stderr
    assert "t=    0         0,1,0  stone_button: powered false->true" in done.stdout
    assert "t=   24         2,1,0  redstone_lamp: lit true->false" in done.stdout
    as_json = run_discogym("redstone", "simulate", str(world), "--press", "0,1,0@5", "--ticks", "40", "--json")
    document = json.loads(as_json.stdout)
    lamp = [(c["tick"], c["changed"]) for c in document["changes"] if c["pos"] == [2, 1, 0]]
    assert lamp == [(5, {"lit": ["false", "true"]}), (29, {"lit": ["true", "false"]})]
    bad = run_discogym("redstone", "simulate", str(world), "--press", "9,9,9")
    assert bad.returncode == 2 and "no stone_button at 9,9,9" in bad.stderr and "Traceback" not in bad.stderr
    assert World(parse_world(LINE_WORLD).blocks).to_text() == LINE_WORLD.replace(" stone", " minecraft:stone").replace(
        " redstone", " minecraft:redstone"
    ).replace("stone_button[face=floor]", "stone_button[face=floor,facing=north,powered=false]").replace(
        "redstone_wire", "redstone_wire[east=none,north=none,power=0,south=none,west=none]"
    ).replace("redstone_lamp", "redstone_lamp[lit=false]")


def test_export_and_import_commands_round_trip_a_world(tmp_path):
    world = tmp_path / "line.txt"
    world.write_text(LINE_WORLD)
    for name in ("line.schem", "line.litematic"):
        assert run_discogym("redstone", "export", str(world), str(tmp_path / name)).returncode == 0
        back = tmp_path / f"{name}.txt"
        done = run_discogym("redstone", "import", str(tmp_path / name), str(back))
        assert done.returncode == 0, done.stderr
        assert back.read_text() == parse_world(LINE_WORLD).to_text()


def test_view_prints_the_layers_at_a_tick_and_writes_pictures(tmp_path):
    world = tmp_path / "line.txt"
    world.write_text(LINE_WORLD)
    done = run_discogym("redstone", "view", str(world), "--press", "0,1,0", "--tick", "3", "--png", str(tmp_path / "p"))
    assert done.returncode == 0, done.stderr
    assert "state at tick 3" in done.stdout and "  0 P f L" in done.stdout
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["iso.png", "layers.png", "top.png"]
