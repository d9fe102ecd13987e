"""The picture reader: rendered states of test-split tasks read back into their slots."""

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from discogym.core import UserError
from discogym.suites.crafting.data import load_split
from discogym.suites.crafting.perception import perceive, read_file, read_table
from discogym.suites.crafting.render import MAX_QUANTITY, RESOLUTIONS, Resolution, renderer
from discogym.suites.crafting.state import Stack


def _states(count: int) -> list[dict[int, Stack]]:
    return [
        example.table()
        for example in load_split("test")[:count]
        if all(stack.type != "air" for stack in example.slotted_inventory.values())
    ]


@pytest.mark.parametrize("resolution", RESOLUTIONS)
def test_every_slot_is_read_exactly_up_to_stacks_that_draw_the_same_square(resolution: Resolution) -> None:
    exact = total = 0
    for slots in _states(40):
        reading = read_table(renderer().render(slots, resolution), resolution)
        for index in range(46):
            assert reading.fits(index, slots.get(index)), (index, slots.get(index), reading.slots.get(index))
            if index not in reading.alike:
                assert reading.slots.get(index) == slots.get(index)
            exact += reading.slots.get(index) == slots.get(index)
            total += 1
    assert exact >= 0.99 * total  # alike readings are rare: only look-alike items hide others


def test_items_sharing_an_icon_read_as_the_plainer_name_with_the_other_alike() -> None:
    reading = read_table(renderer().render({10: ("infested_stone_bricks", 3), 11: ("stone_bricks", 3)}))
    assert reading.slots == {10: ("stone_bricks", 3), 11: ("stone_bricks", 3)}
    assert reading.alike[10] == reading.alike[11]
    assert ("infested_stone_bricks", 3) in reading.alike[10]
    assert reading.fits(10, ("infested_stone_bricks", 3)) and not reading.fits(10, ("infested_stone_bricks", 4))


def test_a_quantity_that_hides_where_two_icons_differ_is_flagged() -> None:
    # dispenser and dropper differ only in pixels that the digits of 25 cover, and nowhere else
    reading = read_table(renderer().render({20: ("dispenser", 25), 21: ("dispenser", 24)}))
    assert reading.slots[20] == ("dropper", 25) and reading.alike[20] == (("dispenser", 25),)  # shorter name first
    assert reading.slots[21] == ("dispenser", 24) and 21 not in reading.alike


@pytest.mark.parametrize("resolution", RESOLUTIONS)
@pytest.mark.parametrize("output", [True, False])
def test_every_quantity_is_read(resolution: Resolution, output: bool) -> None:
    index = 0 if output else 30
    for quantity in range(1, MAX_QUANTITY + 1):
        slots = {index: ("oak_planks", quantity)}
        assert perceive(renderer().render(slots, resolution)) == slots


def test_air_reads_as_an_empty_slot_unless_its_quantity_shows() -> None:
    reading = read_table(renderer().render({12: ("air", 1), 13: ("air", 7)}, "medium"))
    assert reading.slots == {13: ("air", 7)} and reading.alike == {}


def test_a_picture_with_noise_still_reads_right() -> None:
    slots = _states(3)[2]
    picture = np.asarray(renderer().render(slots, "high")).astype(np.int16)
    noise = np.random.default_rng(7).integers(-6, 7, size=picture.shape)
    noisy = np.clip(picture + noise, 0, 255).astype(np.uint8)
    assert perceive(noisy) == perceive(renderer().render(slots, "high"))


def test_readings_repeat_exactly_with_and_without_remembered_squares() -> None:
    pictures = [renderer().render(slots, "low") for slots in _states(6)]
    first = [read_table(picture) for picture in pictures]
    again = [read_table(picture) for picture in reversed(pictures)]
    assert first == list(reversed(again))


def test_empty_table_reads_empty() -> None:
    reading = read_table(renderer().render({}, "low"))
    assert reading.slots == {} and reading.alike == {} and reading.resolution == "low"


def test_bad_files_and_sizes_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read"):
        read_file(tmp_path / "missing.png")
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    with pytest.raises(UserError, match="cannot read"):
        read_file(broken)
    with pytest.raises(UserError, match="100x100"):
        perceive(Image.new("RGB", (100, 100)))
    with pytest.raises(UserError, match="not a low"):
        perceive(renderer().render({}, "high"), "low")


def test_readings_stay_right_when_the_remembered_squares_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    from discogym.suites.crafting import perception

    pictures = [renderer().render(slots, "low") for slots in _states(8)]
    expected = [read_table(picture) for picture in pictures]
    monkeypatch.setattr(perception, "_CACHE_LIMIT", 60)  # fewer than two pictures' squares
    assert [read_table(picture) for picture in pictures + pictures] == expected + expected


def test_the_command_prints_each_slot_and_what_looks_the_same(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from discogym.interfaces.cli import app

    picture = tmp_path / "table.png"
    picture.write_bytes(renderer().png({0: ("oak_planks", 4), 20: ("dispenser", 25)}, "medium"))
    shown = CliRunner().invoke(app, ["crafting", "perceive", str(picture)])
    assert shown.exit_code == 0
    assert shown.output.splitlines() == [
        "[0] oak_planks 4",
        "[I11] dropper 25  (the picture is the same for: dispenser 25)",
    ]
    as_json = CliRunner().invoke(app, ["crafting", "perceive", str(picture), "--json"])
    parsed = json.loads(as_json.output)
    assert parsed["resolution"] == "medium"
    assert parsed["slots"][1]["alike"] == [{"item": "dispenser", "quantity": 25}]
    missing = CliRunner().invoke(app, ["crafting", "perceive", str(tmp_path / "none.png")])
    assert missing.exit_code != 0 and "cannot read picture" in missing.output
