"""The kept canvas: its PNG shows, after any sequence of table states, exactly the picture drawn from scratch."""

import base64
import io
from collections import Counter

import numpy as np
import pytest
from PIL import Image

from discogym.suites.crafting.data import icon_names
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.render import (
    DIVISORS,
    RESOLUTIONS,
    SLOT_POSITIONS,
    SQUARE,
    Canvas,
    Renderer,
    Resolution,
    renderer,
)

SIZES = {"high": (704, 664), "medium": (352, 332), "low": (176, 166)}
NO_ICON = "no_such_item"
Slots = dict[int, tuple[str, int]]


def decoded(data: bytes) -> np.ndarray:
    picture = Image.open(io.BytesIO(data))
    picture.load()
    return np.asarray(picture)


def drawn(slots: Slots, resolution: Resolution) -> np.ndarray:
    return np.asarray(renderer().render(slots, resolution))


def partly_transparent(icon: Image.Image | None) -> bool:
    alpha = np.asarray(icon)[..., 3] if icon is not None else np.zeros(1)
    return bool(((alpha > 0) & (alpha < 255)).any())


def random_changes(seed: int, count: int) -> list[tuple[str, Slots]]:
    """``count`` successive table states, each one change from the last (named for the coverage check):
    stacks appear, move (emptying their slot), change quantity, are emptied by deletion or by quantity 0,
    in every slot including the output slot, with icons and with an item that has none."""
    rng = np.random.default_rng(seed)
    names = sorted(icon_names())
    items = [names[i] for i in rng.choice(len(names), size=6, replace=False)] + [NO_ICON]
    slots: Slots = {}
    states = []
    for _ in range(count):
        occupied = sorted(slot for slot, (_, quantity) in slots.items() if quantity >= 1)
        free = [slot for slot in range(46) if slot not in occupied]
        kind = str(rng.choice(["appear", "move", "quantity", "delete", "zero"])) if occupied else "appear"
        stack = (items[rng.integers(len(items))], int(rng.integers(1, 65)))
        slot = int(rng.choice(occupied)) if kind != "appear" else int(rng.choice(free))
        if kind == "appear" and 0 in free and rng.random() < 0.2:  # the output slot has its own background
            slot = 0
        if kind == "appear":
            slots[slot] = stack
        elif kind == "move":
            slots[int(rng.choice(free))] = slots.pop(slot)
        elif kind == "quantity":
            slots[slot] = (slots[slot][0], stack[1])
        elif kind == "delete":
            del slots[slot]
        else:
            slots[slot] = (slots[slot][0], 0)
        states.append((kind, dict(slots)))
    return states


@pytest.mark.parametrize("resolution", RESOLUTIONS)
def test_one_canvas_through_random_changes_shows_the_picture_drawn_from_scratch(resolution: Resolution) -> None:
    states = random_changes(seed=36 + DIVISORS[resolution], count=160)
    kinds = Counter(kind for kind, _ in states)
    assert set(kinds) == {"appear", "move", "quantity", "delete", "zero"} and min(kinds.values()) >= 10
    assert any(0 in slots for _, slots in states) and any(NO_ICON in str(slots) for _, slots in states)
    canvas = Canvas(renderer(), resolution)
    table: Slots = {}  # one dict changed in place, as CraftingEnv's table is
    for step, (kind, slots) in enumerate(states):
        table.clear()
        table.update(slots)
        data = canvas.update(table).png()
        assert (decoded(data) == drawn(slots, resolution)).all(), (step, kind)
        assert data == Canvas(renderer(), resolution).update(slots).png(), (step, kind)


@pytest.mark.parametrize("resolution", RESOLUTIONS)
def test_the_png_is_valid_rgb_and_the_same_state_gives_the_same_bytes(resolution: Resolution) -> None:
    slots: Slots = {0: ("oak_planks", 4), 1: ("oak_log", 1), 30: ("stick", 64), 45: (NO_ICON, 7)}
    canvas = Canvas(renderer(), resolution)
    data = canvas.update(slots).png()
    with Image.open(io.BytesIO(data)) as picture:
        picture.verify()
    with Image.open(io.BytesIO(data)) as picture:
        assert (picture.format, picture.mode, picture.size) == ("PNG", "RGB", SIZES[resolution])
    assert canvas.png() == data and canvas.update(dict(reversed(list(slots.items())))).png() == data
    assert Renderer().png(slots, resolution) == data == renderer().png(slots, resolution)
    assert canvas.update({}).png() != data
    assert canvas.update(slots).png() == data


def test_slots_downscale_alone_as_in_the_whole_picture() -> None:
    # Slot corners and squares are whole numbers of low-resolution pixels, so Pillow's nearest-neighbour
    # downscale of a slot's square alone gives the same pixels as that square of the downscaled picture.
    assert all(x % 4 == 0 and y % 4 == 0 for x, y in SLOT_POSITIONS) and SQUARE % 4 == 0
    drawer = renderer()
    slots = {slot: ("oak_planks" if slot % 2 else "stick", 1 + slot) for slot in range(46)}
    high = drawn(slots, "high")
    for resolution in RESOLUTIONS:
        divisor, size = DIVISORS[resolution], SQUARE // DIVISORS[resolution]
        whole, empty = drawn(slots, resolution), drawn({}, resolution)
        for slot, (x, y) in enumerate(SLOT_POSITIONS):
            square = Image.fromarray(high[y : y + SQUARE, x : x + SQUARE])
            alone = np.asarray(square.resize((size, size), Image.Resampling.NEAREST))
            region = whole[y // divisor : y // divisor + size, x // divisor : x // divisor + size]
            assert (alone == region).all(), (resolution, slot)
            assert (drawer.square_pixels(slot, slots[slot], divisor) == region).all(), (resolution, slot)
            empty_region = empty[y // divisor : y // divisor + size, x // divisor : x // divisor + size]
            assert (drawer.square_pixels(slot, None, divisor) == empty_region).all(), (resolution, slot)


def test_quantities_set_whole_pixels_so_their_masks_give_pillows_drawing() -> None:
    drawer = renderer()
    item = next(name for name in sorted(icon_names()) if partly_transparent(drawer.icon(name)))
    for quantity in range(2, 65):
        for fill in ((0, 0, 0), (255, 255, 255), (139, 139, 139)):
            blank = Image.new("RGB", (SQUARE, SQUARE), fill)
            drawer.draw_quantity(blank, (0, 0), quantity)
            colours = {tuple(int(c) for c in colour) for colour in np.unique(np.asarray(blank).reshape(-1, 3), axis=0)}
            assert colours == {fill, (62, 62, 62), (252, 252, 252)}, (quantity, fill)
        for output in (True, False):
            square = drawer.empty_square(output)
            icon = drawer.icon(item)
            assert icon is not None
            square.paste(icon, (0, 0), icon)
            drawer.draw_quantity(square, (0, 0), quantity)
            assert (drawer.square_pixels(0 if output else 7, (item, quantity)) == np.asarray(square)).all(), quantity


def test_invalid_states_are_refused_and_leave_the_canvas_as_it_was() -> None:
    with pytest.raises(ValueError, match="unknown resolution 'huge'"):
        Canvas(renderer(), "huge")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="resolution"):
        renderer().png({}, "huge")  # type: ignore[arg-type]
    canvas = Canvas(renderer(), "low").update({3: ("oak_planks", 2)})
    before = canvas.png()
    with pytest.raises(ValueError, match="no slot 46"):
        canvas.update({3: ("stick", 5), 46: ("oak_planks", 1)})
    with pytest.raises(ValueError, match="no slot -1"):
        canvas.update({-1: ("oak_planks", 1)})
    with pytest.raises(ValueError, match="at most 64"):
        canvas.update({3: ("stick", 5), 4: ("oak_planks", 65)})
    with pytest.raises(ValueError, match="at most 64"):
        renderer().png({4: ("oak_planks", 65)})
    assert canvas.png() == before
    assert (decoded(canvas.update({3: ("oak_planks", 0)}).png()) == drawn({}, "low")).all()


def test_the_env_keeps_a_canvas_per_resolution_and_shows_each_step(book) -> None:
    env = CraftingEnv(book, "chest", {10: ("oak_log", 3)}, Presentation(observation="image", resolution="low"), 0)
    moves = [("[I1]", "[A1]", 2), ("[0]", "[I2]", 4), ("[A1]", "[I3]", 1), ("[I3]", "[B2]", 1)]
    for source, target, quantity in moves:
        result = env.call("move", {"slot_from": source, "slot_to": target, "quantity": quantity})
        assert result.data["applied"], (source, target)
        (image,) = result.images
        assert (decoded(base64.b64decode(image.data_base64)) == drawn(env.table.slots, "low")).all()
        view = env.view()["picture"].removeprefix("data:image/png;base64,")
        assert (decoded(base64.b64decode(view)) == drawn(env.table.slots, "high")).all()
    assert sorted(env._canvases) == ["high", "low"]
