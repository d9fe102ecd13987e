"""The crafting table's picture: layout, icons, quantities, resolutions, determinism, and Plancraft's own procedure."""

import io
import random
import struct
from collections.abc import Mapping

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont, features

from discogym.suites.crafting.data import BACKGROUND, FONT, ICON_PREFIX, icon_names, read_asset
from discogym.suites.crafting.render import (
    DIGIT_KERNING,
    SLOT_POSITIONS,
    SQUARE,
    Renderer,
    Resolution,
    quantity_position,
    renderer,
)
from discogym.suites.crafting.state import slot_index

WIDTH, HEIGHT = 704, 664
OPAQUE_ITEM = "oak_planks"  # an icon whose pixels are all fully opaque or fully transparent
TEXT = (252, 252, 252)
SHADOW = (62, 62, 62)
needs_raqm = pytest.mark.skipif(not features.check("raqm"), reason="Plancraft's kerned quantities need libraqm")


def pixels(picture: Image.Image) -> np.ndarray:
    return np.asarray(picture.convert("RGB")).astype(np.int16)


def background() -> np.ndarray:
    return pixels(Image.open(io.BytesIO(read_asset(BACKGROUND))))


def icon(item: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(read_asset(f"{ICON_PREFIX}{item}.png"))).convert("RGBA")).astype(np.int16)


def square(array: np.ndarray, slot: int, size: int = SQUARE) -> np.ndarray:
    x, y = SLOT_POSITIONS[slot]
    return array[y : y + size, x : x + size]


def quantity_box(array: np.ndarray, slot: int, quantity: int) -> np.ndarray:
    """The part of the slot's square where Plancraft writes the quantity (text and shadow)."""
    dx, dy = quantity_position(quantity)
    return square(array, slot)[dy:, dx:]


def has_color(region: np.ndarray, color: tuple[int, int, int]) -> bool:
    return bool((region == np.array(color)).all(axis=-1).any())


def partial_alpha_item() -> str:
    """The first item (by name) whose icon has semi-transparent pixels, to exercise blending."""
    for item in sorted(icon_names()):
        alpha = icon(item)[..., 3]
        if ((alpha > 0) & (alpha < 255)).any():
            return item
    raise AssertionError("no icon with partial transparency")


class PlancraftTable:
    """Plancraft's CraftingTableGUI procedure, step by step: an RGBA table drawn on incrementally, text laid
    out by Pillow (raqm), each added item's slot cleared first, and alpha dropped at the end."""

    def __init__(self) -> None:
        self.table = Image.open(io.BytesIO(read_asset(BACKGROUND))).copy()
        self.font = ImageFont.truetype(io.BytesIO(read_asset(FONT)), 40, layout_engine=ImageFont.Layout.RAQM)

    def clear(self, slot: int) -> None:
        x, y = SLOT_POSITIONS[slot]
        if slot == 0:
            self.table.paste(Image.new("RGB", (68, 68), (139, 139, 139)), (x, y))
        else:
            self.table.paste(Image.new("RGB", (68, 68), (255, 255, 255)), (x, y))
            self.table.paste(Image.new("RGB", (64, 64), (139, 139, 139)), (x, y))

    def add(self, slot: int, item: str, quantity: int) -> None:
        self.clear(slot)
        x, y = SLOT_POSITIONS[slot]
        overlay = Image.open(io.BytesIO(read_asset(f"{ICON_PREFIX}{item}.png"))).copy()
        self.table.paste(overlay, (x, y), overlay)
        if quantity > 1:
            x, y = x + 18, y + 32
            if quantity < 10:
                x += 24
            draw = ImageDraw.Draw(self.table)
            draw.text((x + 4, y + 4), str(quantity), font=self.font, fill=SHADOW)
            draw.text((x, y), str(quantity), font=self.font, fill=TEXT)

    def frame(self, divisor: int = 1) -> np.ndarray:
        latest = self.table.copy()
        if divisor > 1:
            latest = latest.resize((latest.size[0] // divisor, latest.size[1] // divisor), Image.Resampling.NEAREST)
        return pixels(latest)


def at(name: str) -> int:
    """The index of a slot named like ``A1`` or ``I28``."""
    index = slot_index(name)
    assert index is not None, name
    return index


def random_state(rng: random.Random, items: list[str], count: int) -> dict[int, tuple[str, int]]:
    return {slot: (rng.choice(items), rng.randint(1, 64)) for slot in rng.sample(range(46), count)}


@pytest.fixture(scope="module")
def drawer() -> Renderer:
    return renderer()


STATE: dict[int, tuple[str, int]] = {
    0: (OPAQUE_ITEM, 1),
    at("A1"): (OPAQUE_ITEM, 12),
    at("B2"): (OPAQUE_ITEM, 1),
    at("I1"): (OPAQUE_ITEM, 1),
    at("I28"): (OPAQUE_ITEM, 7),
}


def test_slot_positions_follow_plancrafts_layout() -> None:
    assert len(SLOT_POSITIONS) == 46
    assert SLOT_POSITIONS[0] == (496, 140)
    named = {"A1": (120, 68), "A3": (264, 68), "B1": (120, 140), "C3": (264, 212), "I1": (32, 336)}
    named |= {"I9": (608, 336), "I10": (32, 408), "I27": (608, 480), "I28": (32, 568), "I36": (608, 568)}
    for name, corner in named.items():
        assert SLOT_POSITIONS[at(name)] == corner, name
    assert len(set(SLOT_POSITIONS)) == 46
    for x, y in SLOT_POSITIONS:
        assert x >= 0 and y >= 0 and x + SQUARE <= WIDTH and y + SQUARE <= HEIGHT


def test_cleared_slots_repaint_the_background_exactly() -> None:
    # Why drawing from the background gives Plancraft's picture after any history.
    table = PlancraftTable()
    for slot in range(46):
        table.clear(slot)
    assert (table.frame() == background()).all()


def test_icons_are_pasted_at_their_slots(drawer: Renderer) -> None:
    picture = pixels(drawer.render(STATE))
    overlay = icon(OPAQUE_ITEM)
    opaque, clear = overlay[..., 3] == 255, overlay[..., 3] == 0
    assert opaque.sum() > 1000 and (opaque | clear).all()
    empty = background()
    for slot in (0, at("B2"), at("I1")):
        drawn = square(picture, slot, 64)
        assert (drawn[opaque] == overlay[..., :3][opaque]).all(), slot
        assert (drawn[clear] == square(empty, slot, 64)[clear]).all(), slot
        assert not (drawn == square(empty, slot, 64)).all(), slot


def test_empty_slots_and_everything_outside_occupied_slots_is_the_background(drawer: Renderer) -> None:
    picture, empty = pixels(drawer.render(STATE)), background()
    for slot in (at("A2"), at("C3"), at("I2"), at("I36")):
        assert (square(picture, slot) == square(empty, slot)).all(), slot
    outside = np.ones((HEIGHT, WIDTH), dtype=bool)
    for slot in STATE:
        x, y = SLOT_POSITIONS[slot]
        outside[y : y + SQUARE, x : x + SQUARE] = False
    assert (picture[outside] == empty[outside]).all()
    assert (pixels(drawer.render({})) == empty).all()


def test_quantities_of_two_or_more_are_written(drawer: Renderer) -> None:
    picture = pixels(drawer.render(STATE))
    overlay = icon(OPAQUE_ITEM)[..., :3]
    assert not has_color(overlay, TEXT) and not has_color(overlay, SHADOW)
    for slot, (_, quantity) in STATE.items():
        box = quantity_box(picture, slot, quantity)
        written = quantity > 1
        assert has_color(box, TEXT) == written, slot
        assert has_color(box, SHADOW) == written, slot
    # single digits are written further right, as in Plancraft
    i28 = at("I28")
    x, y = SLOT_POSITIONS[i28]
    assert not has_color(picture[y : y + SQUARE, x : x + 18 + 24], TEXT)


def test_resolutions(drawer: Renderer) -> None:
    high = drawer.render(STATE)
    assert high.mode == "RGB" and high.size == (WIDTH, HEIGHT)
    medium, low = drawer.render(STATE, "medium"), drawer.render(STATE, "low")
    assert medium.size == (352, 332) and low.size == (176, 166)
    # nearest-neighbour samples each block's centre pixel
    assert (pixels(medium) == pixels(high)[1::2, 1::2]).all()
    assert (pixels(low) == pixels(high)[2::4, 2::4]).all()
    with pytest.raises(ValueError, match="resolution"):
        drawer.render(STATE, "huge")  # type: ignore[arg-type]


def png_chunks(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        chunks.append(data[at + 4 : at + 8])
        at += 12 + length
    return chunks


def test_png_bytes_are_deterministic(drawer: Renderer) -> None:
    first = drawer.png(STATE)
    assert first == drawer.png(dict(reversed(list(STATE.items()))))
    assert first == Renderer().png(STATE)
    assert png_chunks(first) == [b"IHDR", b"IDAT", b"IEND"]  # no time or text chunks
    decoded = Image.open(io.BytesIO(first))
    assert decoded.mode == "RGB" and (pixels(decoded) == pixels(drawer.render(STATE))).all()
    assert Image.open(io.BytesIO(drawer.png(STATE, "low"))).size == (176, 166)
    changed = dict(STATE)
    changed[at("A1")] = (OPAQUE_ITEM, 13)
    assert drawer.png(changed) != first
    changed[at("A1")] = (OPAQUE_ITEM, 1)
    assert drawer.png(changed) != first


def test_items_without_an_icon_show_only_their_quantity(drawer: Renderer) -> None:
    assert "no_such_item" not in icon_names()
    picture, empty = pixels(drawer.render({5: ("no_such_item", 12), 6: ("no_such_item", 1)})), background()
    assert (square(picture, 6) == square(empty, 6)).all()
    box = quantity_box(picture, 5, 12)
    assert has_color(box, TEXT) and has_color(box, SHADOW)
    dx, dy = quantity_position(12)
    outside_text = np.ones((SQUARE, SQUARE), dtype=bool)
    outside_text[dy:, dx:] = False
    assert (square(picture, 5)[outside_text] == square(empty, 5)[outside_text]).all()


def test_invalid_states_are_refused(drawer: Renderer) -> None:
    with pytest.raises(ValueError, match="no slot 46"):
        drawer.render({46: (OPAQUE_ITEM, 1)})
    with pytest.raises(ValueError, match="at most 64"):
        drawer.render({3: (OPAQUE_ITEM, 65)})
    assert (pixels(drawer.render({3: (OPAQUE_ITEM, 0)})) == background()).all()


def test_renderer_is_shared() -> None:
    assert renderer() is renderer()


@needs_raqm
def test_digit_kerning_is_the_fonts() -> None:
    font = ImageFont.truetype(io.BytesIO(read_asset(FONT)), 40, layout_engine=ImageFont.Layout.RAQM)
    digits = "0123456789"
    measured = {
        (a, b): int(font.getlength(a + b) - font.getlength(a) - font.getlength(b)) for a in digits for b in digits
    }
    assert {pair: shift for pair, shift in measured.items() if shift} == DIGIT_KERNING


@needs_raqm
def test_every_quantity_matches_plancraft(drawer: Renderer) -> None:
    item = partial_alpha_item()
    for first in range(1, 65, 23):
        table = PlancraftTable()
        state: dict[int, tuple[str, int]] = {}
        for offset in range(23):
            quantity = first + offset
            if quantity <= 64:
                slot = offset if offset < 10 else offset + 10
                table.add(slot, item, quantity)
                state[slot] = (item, quantity)
        assert (pixels(drawer.render(state)) == table.frame()).all(), first


@needs_raqm
def test_random_histories_match_plancrafts_incremental_drawing(drawer: Renderer) -> None:
    rng = random.Random(7)
    items = sorted(icon_names())
    for _ in range(6):
        table = PlancraftTable()
        state: Mapping[int, tuple[str, int]] = random_state(rng, items, 20)
        for slot, (item, quantity) in state.items():
            table.add(slot, item, quantity)
        for _ in range(10):  # moves: some slots cleared, some refilled with other stacks
            slot = rng.randrange(46)
            state = dict(state)
            if slot in state and rng.random() < 0.5:
                table.clear(slot)
                del state[slot]
            else:
                stack = (rng.choice(items), rng.randint(1, 64))
                table.add(slot, *stack)
                state[slot] = stack
        scales: list[tuple[Resolution, int]] = [("high", 1), ("medium", 2), ("low", 4)]
        for resolution, divisor in scales:
            assert (pixels(drawer.render(state, resolution)) == table.frame(divisor)).all(), resolution
