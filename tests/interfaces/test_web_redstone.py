"""The redstone play screen end to end in headless chromium: a person builds SciCrafter's easiest task (A L1, four
lamps together) by clicking cells of the layer view with palette blocks, removes a block, presses the button, reads
the event stream and submits; the episode is written, scored a success, and logs what `discogym play` logs for the
same actions typed. Bad clicks show a clear message and the game goes on."""

import json
from pathlib import Path
from typing import Any

from tests.interfaces.conftest import Served, assert_played_alike, needs_chromium, web_episode

pytestmark = needs_chromium

TASK = "A_simultaneous_lights_L1"
# The builder's device for the task (agents.py): a floor button, three dust and four lamps, all on the floor's top.
WIRES = [(1, 0), (2, 0), (2, 1)]
LAMPS = [(1, 2), (2, 2), (2, 3), (3, 2)]


PICTURE = "#screen .rs-layer-picture"


def cell(page: Any, grid: dict[str, Any], x: int, z: int) -> dict[str, float]:
    """The middle of cell (x, z) in the layer picture, however large the page draws it (the view's geometry)."""
    ratio = page.locator(PICTURE).bounding_box()["width"] / grid["width"]
    u = grid["left"] + (x - grid["x0"] + 0.5) * grid["scale"]
    v = grid["top"] + (z - grid["z0"] + 0.5) * grid["scale"]
    return {"x": u * ratio, "y": v * ratio}


def click_cell(page: Any, grid: dict[str, Any], x: int, z: int) -> None:
    page.locator(PICTURE).click(position=cell(page, grid, x, z))


def choose(page: Any, block: str, **properties: str) -> None:
    page.check(f"#screen .rs-palette input[value='{block}']")
    for name, value in properties.items():
        page.select_option(f"#screen .rs-properties select[name={name}]", value)


def act(page: Any, steps: list[int], do: Any) -> str:
    """Do something that makes one call; wait for its entry in the log and return its text."""
    do()
    steps[0] += 1
    entry = page.wait_for_selector(f"#log li:nth-child({steps[0]})")
    return str(entry.inner_text())


def test_a_person_builds_a_redstone_device_by_clicking_and_it_is_scored_a_success(
    page, served: Served, runs: Path, tmp_path
):
    page.goto(served.root + "/play?suite=redstone")
    page.fill("#participant", "p042")
    page.select_option("#task", TASK)
    page.select_option("#condition", "baseline")
    page.click("#start")
    page.wait_for_selector("#screen[data-ready=true]")
    grid = json.loads(page.text_content("#view-data"))["grid"]
    assert page.locator("#screen .rs-layer-choice option").all_inner_texts() == ["y=4 (0 blocks)"]
    steps = [0]

    # Outside the grid (the title band): a message, no call.
    page.locator(PICTURE).click(position={"x": 3, "y": 3})
    assert "Click a cell of the grid" in page.inner_text("#screen .rs-message")
    assert page.locator("#log li").count() == 0

    choose(page, "minecraft:stone_button", face="floor")
    text = act(page, steps, lambda: click_cell(page, grid, 0, 0))
    assert "placed minecraft:stone_button[face=floor,facing=north,powered=false] at 0,4,0" in text
    choose(page, "minecraft:redstone_wire")
    for x, z in WIRES:
        act(page, steps, lambda x=x, z=z: click_cell(page, grid, x, z))
    choose(page, "minecraft:redstone_lamp")
    for x, z in LAMPS:
        act(page, steps, lambda x=x, z=z: click_cell(page, grid, x, z))
    choose(page, "minecraft:stone")
    act(page, steps, lambda: click_cell(page, grid, 5, 5))
    assert "placed minecraft:stone at 5,4,5" in page.inner_text("#screen .rs-message")
    page.hover(PICTURE, position=cell(page, grid, 1, 2))
    assert page.inner_text("#screen .rs-hover") == "x=1 y=4 z=2: minecraft:redstone_lamp[lit=false]"
    choose(page, "minecraft:air")
    text = act(page, steps, lambda: click_cell(page, grid, 5, 5))
    assert "removed the block at 5,4,5" in text
    assert page.locator("#screen .rs-iso-picture").get_attribute("src").startswith("data:image/png;base64,")

    # Dust on layer 5, over air: refused with the reason, and the game goes on.
    page.select_option("#screen .rs-layer-choice", "5")
    choose(page, "minecraft:redstone_wire")
    act(page, steps, lambda: click_cell(page, grid, -3, -3))
    assert "needs stone, glass or a lamp on -3,4,-3" in page.inner_text("#screen .rs-message")
    assert page.locator("#log li.refused").count() == 1
    assert page.get_attribute("body", "data-over") is None

    status = page.inner_text("#screen .rs-status")
    assert "trials 0 of 50 used" in status and "the button at 0,4,0" in status
    text = act(page, steps, lambda: page.click("#screen .rs-press"))
    assert "trial 1 of 50: pressed the button at 0,4,0" in text
    assert "last press at tick" in page.inner_text("#screen .rs-status")
    text = act(page, steps, lambda: page.click("#screen .rs-events"))
    assert "minecraft:redstone_lamp[lit=true]" in page.inner_text("#screen .rs-output")
    act(page, steps, lambda: page.click("#screen .rs-submit"))
    page.wait_for_selector("body[data-over=true]")
    assert page.is_disabled("#screen .rs-press") and page.is_disabled("#screen .rs-palette input >> nth=0")

    episode = web_episode(runs, "redstone")
    assert episode.score.success and episode.key.agent_options == {"client": "p042"}
    assert episode.key.condition == "baseline" and episode.task.split == "official"
    since = episode.events[-2].call.args["since"]
    lines = "\n".join(
        [
            "place 0 4 0 stone_button[face=floor]",
            *(f"place {x} 4 {z} redstone_wire" for x, z in WIRES),
            *(f"place {x} 4 {z} redstone_lamp" for x, z in LAMPS),
            "place 5 4 5 stone",
            "remove 5 4 5",
            "place -3 5 -3 redstone_wire",
            "press",
            f"events {since}",
            "submit",
        ]
    )
    assert_played_alike(episode, tmp_path / "cli", "redstone", TASK, lines + "\n", "--condition", "baseline")


def test_the_redstone_screen_draws_a_view_read_only(page, served: Served):
    page.goto(served.root + "/play?suite=redstone")
    page.fill("#participant", "p1")
    page.click("#start")
    page.wait_for_selector("#screen[data-ready=true]")
    controls = page.evaluate(
        """() => {
            const view = JSON.parse(document.getElementById("view-data").textContent);
            const root = document.createElement("section");
            document.body.append(root);
            window.discogymScreens.redstone(root, view, null).update(view);
            const count = (selector) => root.querySelectorAll(selector).length;
            return [count("img.rs-layer-picture"), count("button, input")];
        }"""
    )
    assert controls == [1, 0]
