"""The redstone play screen's view (RedstoneEnv.view): the layers, the 3D picture, the palette, the click geometry,
the tick and the trials; pictures that decode as PNGs; nothing of the evaluator's."""

import base64
import io
import json
from typing import Any

from PIL import Image

from discogym.suites.redstone.blocks import REPEATER, make_block
from discogym.suites.redstone.env import Presentation, RedstoneEnv
from discogym.suites.redstone.pictures import LAMP_UNLIT, STONE_COLOUR, top_down_cell
from discogym.suites.redstone.pictures.web import SCALE
from discogym.suites.redstone.suite import suite, task_of
from discogym.suites.redstone.tasks import TaskSpec, make_task, packaged_tasks

TASK = "A_simultaneous_lights_L1"


def env_for(task_id: str = TASK) -> RedstoneEnv:
    (spec,) = [spec for spec in packaged_tasks() if spec.task_id == task_id]
    return RedstoneEnv(spec, Presentation())


def picture(url: str) -> Image.Image:
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    image = Image.open(io.BytesIO(base64.b64decode(url[len(prefix) :])))
    assert image.format == "PNG"
    return image.convert("RGB")


def layer(view: dict[str, Any], y: int) -> Image.Image:
    (found,) = [entry for entry in view["layers"] if entry["y"] == y]
    return picture(found["picture"])


def cell_colour(view: dict[str, Any], y: int, x: int, z: int) -> tuple[int, int, int]:
    """The colour in the middle of cell (x, z) of layer y, found the way the screen maps a click: by the view's
    grid geometry."""
    grid = view["grid"]
    u = grid["left"] + (x - grid["x0"] + 0.5) * grid["scale"]
    v = grid["top"] + (z - grid["z0"] + 0.5) * grid["scale"]
    pixel = layer(view, y).getpixel((int(u), int(v)))
    assert isinstance(pixel, tuple)
    return pixel[0], pixel[1], pixel[2]


def place(env: RedstoneEnv, x: int, y: int, z: int, block: str, **properties: str) -> None:
    result = env.call("set_block", {"x": x, "y": y, "z": z, "block": block, "properties": properties})
    assert result.ok, result.text


def test_an_empty_lab_shows_its_first_layer_the_region_and_the_palette():
    env = env_for()
    view = env.view()
    assert view["kind"] == "redstone"
    assert view["region"] == {"x": [-10, 10], "y": [4, 14], "z": [-10, 10], "floor_y": 3}
    assert [entry["y"] for entry in view["layers"]] == [4] and view["layers"][0]["blocks"] == 0
    assert view["iso"] is None and view["blocks"] == [] and view["button"] is None
    assert (view["tick"], view["last_press"]) == (0, None)
    assert view["trials"] == {"used": 0, "limit": 50, "left": 50}
    grid = view["grid"]
    assert (grid["x0"], grid["z0"], grid["columns"], grid["rows"], grid["scale"]) == (-10, -10, 21, 21, SCALE)
    assert layer(view, 4).size == (grid["width"], grid["height"])
    assert json.loads(json.dumps(view)) == view  # JSON-safe


def test_the_palette_is_the_tasks_blocks_with_the_properties_a_placement_sets():
    view = env_for().view()
    names = [entry["block"] for entry in view["palette"]]
    assert names == [block for block in env_for().spec.allowed_blocks if block != "minecraft:air"]
    by_name = {entry["block"]: entry for entry in view["palette"]}
    assert by_name[REPEATER]["properties"] == {
        "facing": ["north", "east", "south", "west"],
        "delay": ["1", "2", "3", "4"],
    }
    assert by_name["minecraft:stone_button"]["properties"] == {
        "face": ["wall", "floor", "ceiling"],
        "facing": ["north", "east", "south", "west"],
    }
    assert by_name["minecraft:redstone_wire"]["properties"] == {}  # power and connections are the world's
    assert by_name["minecraft:redstone_lamp"]["properties"] == {}
    assert "input" in by_name[REPEATER]["note"]


def test_a_placed_block_shows_in_its_layer_at_the_cell_a_click_maps_to_and_in_3d():
    env = env_for()
    before = env.view()
    place(env, 2, 4, 3, "minecraft:redstone_lamp")
    view = env.view()
    assert view["layers"][0]["picture"] != before["layers"][0]["picture"]
    assert cell_colour(view, 4, 2, 3) == LAMP_UNLIT
    assert cell_colour(view, 4, 3, 3) != LAMP_UNLIT  # the next cell east is empty floor
    world = env.sim.snapshot()
    assert top_down_cell(world, 2, 3, SCALE) == (
        view["grid"]["left"] + (2 + 10) * SCALE,
        view["grid"]["top"] + (3 + 10) * SCALE,
    )
    assert [entry["y"] for entry in view["layers"]] == [4, 5]  # and the layer above, to build on
    assert view["blocks"] == [{"pos": [2, 4, 3], "block": "minecraft:redstone_lamp[lit=false]"}]
    assert picture(view["iso"]).width >= 400
    place(env, 2, 5, 3, "minecraft:stone")
    view = env.view()
    assert cell_colour(view, 5, 2, 3) == STONE_COLOUR
    assert [entry["y"] for entry in view["layers"]] == [4, 5, 6]


def test_a_press_sets_the_tick_the_trials_and_the_last_press():
    env = env_for()
    place(env, 0, 4, 0, "minecraft:stone_button", face="floor")
    place(env, 1, 4, 0, "minecraft:redstone_lamp")
    pressed = env.call("activate_button", {})
    view = env.view()
    assert view["last_press"] == pressed.data["pressed_at"]
    assert view["trials"] == {"used": 1, "limit": 50, "left": 49}
    assert view["tick"] == env.sim.time > view["last_press"]
    assert view["button"] == [0, 4, 0]
    assert cell_colour(view, 4, 1, 0) == LAMP_UNLIT  # the pulse is over when the world is quiet
    lit = [
        event
        for event in env.sim.changes_since(view["last_press"])
        if event.after == make_block("redstone_lamp", lit="true")
    ]
    assert lit  # it lit meanwhile (the event stream tells it)


def test_refused_calls_and_reads_leave_the_view_as_it_was():
    env = env_for()
    place(env, 0, 4, 0, "minecraft:redstone_lamp")
    view = env.view()
    bad = env.call("set_block", {"x": 0, "y": 4, "z": 1, "block": REPEATER, "properties": {"delay": "9"}})
    outside = env.call("set_block", {"x": 40, "y": 4, "z": 0, "block": "minecraft:stone"})
    floating = env.call("set_block", {"x": 5, "y": 6, "z": 5, "block": "minecraft:redstone_wire"})
    assert not (bad.ok or outside.ok or floating.ok)
    env.call("get_event_stream", {"since": 0})
    assert env.view() == view


def test_a_small_region_gives_a_small_grid():
    spec = TaskSpec.model_validate({**make_task("C", "L1").model_dump(), "world": {"anchor": [0, 4, 0], "radius": 2}})
    env = RedstoneEnv(spec, Presentation())
    view = env.view()
    assert view["region"]["x"] == [-2, 2] and view["region"]["y"] == [4, 6]
    assert (view["grid"]["x0"], view["grid"]["columns"]) == (-2, 5)
    place(env, -2, 4, 2, "minecraft:redstone_lamp")
    assert cell_colour(env.view(), 4, -2, 2) == LAMP_UNLIT


def test_the_view_is_deterministic_and_holds_nothing_of_the_evaluators():
    task = task_of(env_for().spec, "official")
    assert task.ground_truth == {}  # the suite hides nothing of the task file; the verdict is the evaluator's
    envs = [suite.make_env(task, suite.conditions()[0], seed=0) for _ in range(2)]
    for env in envs:
        assert isinstance(env, RedstoneEnv)
        place(env, 0, 4, 0, "minecraft:stone_button", face="floor")
        place(env, 1, 4, 0, "minecraft:redstone_lamp")
        env.call("activate_button", {})
    first, second = (env.view() for env in envs)
    assert first is not None and first == second
    assert set(first) == {
        "kind", "region", "grid", "layers", "blocks", "iso", "palette", "tick", "trials", "last_press", "button",
    }  # fmt: skip
    shown = {**first, "iso": None, "layers": [{**entry, "picture": None} for entry in first["layers"]]}
    text = json.dumps(shown)  # the words, the pictures left out (base64 spells anything)
    for word in ("passed", "failure", "verdict", "contract", "check", "skew", "expected", "score", "success"):
        assert word not in text
