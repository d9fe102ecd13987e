"""What the web app's play screen shows of a crafting episode (``CraftingEnv.view``): the GUI picture at high
resolution in every condition, each slot's box and stack as the table holds them, the condition's tools, and
nothing of the ground truth."""

import base64
import io
import json
from typing import Any

from PIL import Image

from discogym.core import Env
from discogym.core.checks.conformance import secret_values
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.render import SLOT_POSITIONS, renderer
from discogym.suites.crafting.state import SLOT_NAMES
from discogym.suites.crafting.suite import TOOL_SETS, suite

WIDTH, HEIGHT = 704, 664
VIEW_KEYS = {"kind", "picture", "width", "height", "target", "objective", "tools", "slots"}
SLOT_KEYS = {"name", "x", "y", "size", "item", "quantity"}


def view_of(env: Env) -> dict[str, Any]:
    view = env.view()
    assert view is not None
    return view


def picture_of(view: dict[str, Any]) -> Image.Image:
    prefix = "data:image/png;base64,"
    assert view["picture"].startswith(prefix)
    data = base64.b64decode(view["picture"][len(prefix) :])
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    picture = Image.open(io.BytesIO(data))
    picture.load()
    return picture


def stacks(view: dict[str, Any]) -> dict[str, tuple[str, int]]:
    return {slot["name"]: (slot["item"], slot["quantity"]) for slot in view["slots"] if slot["item"] is not None}


def test_the_view_shows_the_table_after_each_move_and_its_picture_is_the_gui(book):
    env = CraftingEnv(book, "oak_planks", {10: ("oak_log", 3)}, Presentation(), seed=0)
    view = view_of(env)
    assert set(view) == VIEW_KEYS and view["kind"] == "crafting"
    assert (view["target"], view["objective"]) == ("oak_planks", "Craft an item of type: oak_planks")
    assert stacks(view) == {"[I1]": ("oak_log", 3)}
    env.call("move", {"slot_from": "[I1]", "slot_to": "[A1]", "quantity": 2})
    view = view_of(env)
    assert stacks(view) == {"[0]": ("oak_planks", 4), "[A1]": ("oak_log", 2), "[I1]": ("oak_log", 1)}
    assert [slot["name"] for slot in view["slots"]] == list(SLOT_NAMES)
    for slot, (x, y) in zip(view["slots"], SLOT_POSITIONS, strict=True):
        assert set(slot) == SLOT_KEYS
        border = 20 if slot["name"] == "[0]" else 4  # the box drawn around the 64-pixel item square
        assert (slot["x"], slot["y"], slot["size"]) == (x - border, y - border, 64 + 2 * border)
    empty = next(slot for slot in view["slots"] if slot["name"] == "[I2]")
    assert (empty["item"], empty["quantity"]) == (None, 0)
    picture = picture_of(view)
    assert picture.size == (view["width"], view["height"]) == (WIDTH, HEIGHT)
    assert picture.tobytes() == renderer().render(env.table.slots, "high").tobytes()
    assert json.loads(json.dumps(view)) == view  # JSON-safe


def test_every_condition_shows_a_person_the_high_resolution_gui_and_its_own_tools(book):
    task = suite.tasks("val.small.easy")[0]
    for condition in suite.conditions():
        env = suite.make_env(task, condition, seed=0)
        view = view_of(env)
        assert picture_of(view).size == (WIDTH, HEIGHT), condition.name
        assert view["tools"] == [tool.name for tool in env.tools()], condition.name
    names = {condition.name: condition for condition in suite.conditions()}
    assert view_of(suite.make_env(task, names["ms"], seed=0))["tools"] == list(TOOL_SETS["ms"]) == ["move", "smelt"]


def test_the_view_holds_no_ground_truth(book):
    tasks = suite.tasks("val.small")
    impossible = [task for task in tasks if task.ground_truth["impossible"]][:3]
    with_secrets = [task for task in tasks if secret_values(task)][:3]
    assert impossible and with_secrets
    for task in [*impossible, *with_secrets]:
        env = suite.make_env(task, suite.conditions()[0], seed=0)
        assert isinstance(env, CraftingEnv)
        view = view_of(env)
        # Only what the agent sees: the keys above, the table's stacks, the target and the tools ...
        assert set(view) == VIEW_KEYS and all(set(slot) == SLOT_KEYS for slot in view["slots"])
        shown = {str(entry["slot"]): (entry["item"], entry["quantity"]) for entry in task.params["slots"]}
        assert stacks(view) == {**shown, **({"[0]": env.table.slots[0]} if 0 in env.table.slots else {})}
        # ... the picture drawn from those stacks alone ...
        assert picture_of(view).tobytes() == renderer().render(env.table.slots, "high").tobytes()
        # ... and no distinctive ground-truth value anywhere else.
        text = json.dumps({**view, "picture": None})
        for secret in secret_values(task):
            assert secret not in text, (task.id, secret)
        assert "optimal_path" not in text and "complexity" not in text


def test_the_view_after_the_episode_ended_shows_the_crafted_table(book):
    env = CraftingEnv(book, "oak_planks", {10: ("oak_log", 1)}, Presentation(), seed=0)
    env.call("move", {"slot_from": "[I1]", "slot_to": "[A1]", "quantity": 1})
    assert env.call("move", {"slot_from": "[0]", "slot_to": "[I2]", "quantity": 1}).done
    assert stacks(view_of(env)) == {"[I2]": ("oak_planks", 4)}
