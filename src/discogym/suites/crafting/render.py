"""Plancraft's crafting-table picture, drawn from a table's slots.

The picture reproduces Plancraft's GUI pixel for pixel: the wheel's background ``table.png``, each item's
64x64 icon pasted with its transparency at the slot's top-left corner, and for stacks of two or more the
quantity in the Minecraft font (size 40), light grey over a dark grey shadow. ``high`` is the full
704x664 (width x height) picture, ``medium`` half and ``low`` a quarter of it, downscaled with
nearest-neighbour as Plancraft does; pictures are RGB.

Plancraft draws incrementally: moving an item repaints the slots it touched. Here every picture is drawn
from scratch from the background, so it depends on the state only. The result is the same, because when
Plancraft clears a slot it repaints exactly what the background has there (checked for all 46 slots; see
the tests), and an icon and its quantity never leave the 68x68 square that is repainted.

Two choices where Plancraft's picture is not well defined:

- Plancraft lets Pillow pick the text layout engine, so its quantities depend on whether libraqm and
  FriBiDi are installed: with them the font's kerning moves the second digit of 14, 17 and 19 four pixels
  left, without them it does not. discogym always lays out the digits itself with the font's kerning
  (:data:`DIGIT_KERNING`), which gives Plancraft's picture under raqm on every machine.
- An item without an icon (none of the wheel's items, but generated tasks could name one) is drawn as
  an empty slot that still shows its quantity, where Plancraft would crash.
"""

import io
from collections.abc import Mapping
from functools import cache
from typing import Literal

from PIL import Image, ImageDraw, ImageFont

from discogym.suites.crafting.data import BACKGROUND, FONT, ICON_PREFIX, icon_names, read_asset

Resolution = Literal["high", "medium", "low"]
RESOLUTIONS: tuple[Resolution, ...] = ("high", "medium", "low")
DIVISORS: dict[Resolution, int] = {"high": 1, "medium": 2, "low": 4}

MULTIPLE = 4  # Plancraft's scale: one pixel of Minecraft's GUI is 4x4 pixels here
ICON_SIZE = 64
SLOT_OFFSET = ICON_SIZE + 2 * MULTIPLE  # from one slot's corner to the next one's: 72
SQUARE = ICON_SIZE + MULTIPLE  # the square Plancraft repaints when it clears a slot; icon and quantity stay in it
FONT_SIZE = 40
TEXT_COLOR = (252, 252, 252)
SHADOW_COLOR = (62, 62, 62)
MAX_QUANTITY = 64
# Kerning of minecraft_font.ttf between digits, in pixels at size 40 (what raqm applies; Pillow's basic
# layout ignores it). Pairs not listed advance by the glyph's width.
DIGIT_KERNING: dict[tuple[str, str], int] = {(a, b): -4 for a, b in ("14", "17", "19", "67", "69")}
PNG_COMPRESS_LEVEL = 1  # about half the encoding time of zlib's default, for a file about 1.5 times larger
_PATCH_LIMIT = 4096  # drawn slots kept per process (about 14 KB each)


def _slot_positions() -> tuple[tuple[int, int], ...]:
    m, step = MULTIPLE, SLOT_OFFSET
    output = [(124 * m, 35 * m)]
    grid = [(30 * m + col * step, 17 * m + row * step) for row in range(3) for col in range(3)]
    inventory = [(8 * m + col * step, 84 * m + row * step) for row in range(3) for col in range(9)]
    hotbar = [(8 * m + col * step, 84 * m + 3 * step + 4 * m) for col in range(9)]
    return tuple(output + grid + inventory + hotbar)


SLOT_POSITIONS: tuple[tuple[int, int], ...] = _slot_positions()
"""Top-left pixel of each slot at high resolution: ``[0]``, ``[A1]``..``[C3]``, ``[I1]``..``[I36]``."""


def quantity_position(quantity: int) -> tuple[int, int]:
    """Where Plancraft writes a quantity, relative to the slot's top-left corner (the shadow is 4 px lower right)."""
    x = 4 * MULTIPLE + 2 + (6 * MULTIPLE if quantity < 10 else 0)
    return x, 8 * MULTIPLE


class Renderer:
    """Draws tables; loads the background and font once, and each icon the first time it is needed."""

    def __init__(self) -> None:
        with Image.open(io.BytesIO(read_asset(BACKGROUND))) as background:
            # Plancraft draws on the RGBA picture and drops the alpha channel at the end; every operation
            # treats the colour channels alone, so dropping it first gives the same colours.
            self.background = background.convert("RGB")
        self.font = ImageFont.truetype(io.BytesIO(read_asset(FONT)), FONT_SIZE, layout_engine=ImageFont.Layout.BASIC)
        self._icon_names = icon_names()
        self._icons: dict[str, Image.Image | None] = {}
        self._patches: dict[tuple[bool, str, int], Image.Image] = {}
        # Every slot's square holds the same picture in the background, except the output slot's.
        self._empty = {
            output: self.background.crop((x, y, x + SQUARE, y + SQUARE))
            for output, (x, y) in ((True, SLOT_POSITIONS[0]), (False, SLOT_POSITIONS[1]))
        }

    def icon(self, item: str) -> Image.Image | None:
        """The item's decoded RGBA icon, or None if the wheel has none."""
        if item not in self._icons:
            picture = None
            if item in self._icon_names:
                with Image.open(io.BytesIO(read_asset(f"{ICON_PREFIX}{item}.png"))) as raw:
                    picture = raw.convert("RGBA")
            self._icons[item] = picture
        return self._icons[item]

    def empty_square(self, output: bool) -> Image.Image:
        """A copy of the background's square under a slot: the output slot's, or the one all other slots share."""
        return self._empty[output].copy()

    def draw_quantity(self, picture: Image.Image, corner: tuple[int, int], quantity: int) -> None:
        """Write a quantity of 2 or more as Plancraft does, for the slot whose top-left corner is ``corner``."""
        if quantity <= 1:
            return
        dx, dy = quantity_position(quantity)
        x, y = corner[0] + dx, corner[1] + dy
        draw = ImageDraw.Draw(picture)
        for (left, top), color in (((x + MULTIPLE, y + MULTIPLE), SHADOW_COLOR), ((x, y), TEXT_COLOR)):
            digits = str(quantity)
            for i, digit in enumerate(digits):
                draw.text((left, top), digit, font=self.font, fill=color)
                following = digits[i + 1 : i + 2]
                left += int(self.font.getlength(digit)) + DIGIT_KERNING.get((digit, following), 0)

    def _patch(self, output: bool, item: str, quantity: int) -> Image.Image:
        """One slot's square with the stack drawn in it (cached: drawing text is most of a picture's cost)."""
        key = (output, item, quantity)
        patch = self._patches.get(key)
        if patch is None:
            patch = self._empty[output].copy()
            icon = self.icon(item)
            if icon is not None:
                patch.paste(icon, (0, 0), icon)
            self.draw_quantity(patch, (0, 0), quantity)
            if len(self._patches) >= _PATCH_LIMIT:
                self._patches.clear()
            self._patches[key] = patch
        return patch

    def render(self, slots: Mapping[int, tuple[str, int]], resolution: Resolution = "high") -> Image.Image:
        """The table's picture (RGB). ``slots`` maps slot index to ``(item, quantity)``; quantities of 0 are empty.

        Raises ValueError for a slot outside 0..45, a quantity above 64 or an unknown resolution.
        """
        if resolution not in DIVISORS:
            raise ValueError(f"unknown resolution {resolution!r}; expected one of {', '.join(RESOLUTIONS)}")
        picture = self.background.copy()
        for index, (item, quantity) in slots.items():
            if not 0 <= index < len(SLOT_POSITIONS):
                raise ValueError(f"no slot {index}; slots are 0..{len(SLOT_POSITIONS) - 1}")
            if quantity > MAX_QUANTITY:
                raise ValueError(f"slot {index} holds {quantity} {item}; at most {MAX_QUANTITY} fit in a slot")
            if quantity >= 1:
                picture.paste(self._patch(index == 0, item, quantity), SLOT_POSITIONS[index])
        divisor = DIVISORS[resolution]
        if divisor > 1:
            width, height = picture.size
            picture = picture.resize((width // divisor, height // divisor), Image.Resampling.NEAREST)
        return picture

    def png(self, slots: Mapping[int, tuple[str, int]], resolution: Resolution = "high") -> bytes:
        """The picture as PNG bytes; the same state always gives the same bytes (Pillow writes no timestamp)."""
        buffer = io.BytesIO()
        self.render(slots, resolution).save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
        return buffer.getvalue()


@cache
def renderer() -> Renderer:
    """The process's renderer (fetches Plancraft's wheel on first use)."""
    return Renderer()
