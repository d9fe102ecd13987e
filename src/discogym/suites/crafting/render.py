"""Plancraft's crafting-table picture, drawn from a table's slots.

The picture reproduces Plancraft's GUI pixel for pixel: the wheel's background ``table.png``, each item's
64x64 icon pasted with its transparency at the slot's top-left corner, and for stacks of two or more the
quantity in the Minecraft font (size 40), light grey over a dark grey shadow. ``high`` is the full
704x664 (width x height) picture, ``medium`` half and ``low`` a quarter of it, downscaled with
nearest-neighbour as Plancraft does; pictures are RGB.

Plancraft draws incrementally: moving an item repaints the slots it touched. :meth:`Renderer.render` draws
every picture from the background, so it depends on the state only. The result is the same, because when
Plancraft clears a slot it repaints exactly what the background has there (checked for all 46 slots; see
the tests), and an icon and its quantity never leave the 68x68 square that is repainted.

A :class:`Canvas` keeps one table's picture between steps, repaints only the slots that changed (which by
the same argument gives the picture drawn from scratch) and writes the PNG itself: Pillow's PNG writer filters
every row and cannot be given a faster deflate, and at 5-10 ms per high-resolution picture it was nearly
all of a step's cost. The canvas's rows are stored unfiltered and compressed with ISA-L's deflate. Each
slot's square is drawn once and kept (as an array), and each quantity's digits once, as the pixels they cover.

Two choices where Plancraft's picture is not well defined:

- Plancraft lets Pillow pick the text layout engine, so its quantities depend on whether libraqm and
  FriBiDi are installed: with them the font's kerning moves the second digit of 14, 17 and 19 four pixels
  left, without them it does not. discogym always lays out the digits itself with the font's kerning
  (:data:`DIGIT_KERNING`), which gives Plancraft's picture under raqm on every machine.
- An item without an icon (none of the wheel's items, but generated tasks could name one) is drawn as
  an empty slot that still shows its quantity, where Plancraft would crash.
"""

import io
import struct
import zlib
from collections.abc import Mapping
from functools import cache
from typing import Literal

import numpy as np
from isal import isal_zlib
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
PNG_COMPRESS_LEVEL = 1  # ISA-L's level 1: about 0.3 ms and 31 KB for a typical high-resolution table
_PATCH_LIMIT = 4096  # drawn squares kept per process (about 14 KB each)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _slot_positions() -> tuple[tuple[int, int], ...]:
    m, step = MULTIPLE, SLOT_OFFSET
    output = [(124 * m, 35 * m)]
    grid = [(30 * m + col * step, 17 * m + row * step) for row in range(3) for col in range(3)]
    inventory = [(8 * m + col * step, 84 * m + row * step) for row in range(3) for col in range(9)]
    hotbar = [(8 * m + col * step, 84 * m + 3 * step + 4 * m) for col in range(9)]
    return tuple(output + grid + inventory + hotbar)


SLOT_POSITIONS: tuple[tuple[int, int], ...] = _slot_positions()
"""Top-left pixel of each slot at high resolution: ``[0]``, ``[A1]``..``[C3]``, ``[I1]``..``[I36]``."""


def check_stack(index: int, item: str, quantity: int) -> None:
    """ValueError for a slot outside 0..45 or a quantity above 64."""
    if not 0 <= index < len(SLOT_POSITIONS):
        raise ValueError(f"no slot {index}; slots are 0..{len(SLOT_POSITIONS) - 1}")
    if quantity > MAX_QUANTITY:
        raise ValueError(f"slot {index} holds {quantity} {item}; at most {MAX_QUANTITY} fit in a slot")


def divisor_of(resolution: Resolution) -> int:
    """How many high-resolution pixels one pixel of ``resolution`` spans; ValueError for an unknown resolution."""
    if resolution not in DIVISORS:
        raise ValueError(f"unknown resolution {resolution!r}; expected one of {', '.join(RESOLUTIONS)}")
    return DIVISORS[resolution]


def downscale(pixels: np.ndarray, divisor: int) -> np.ndarray:
    """Pillow's nearest-neighbour downscale by a whole ``divisor``, which samples each block's centre pixel
    (source pixel ``int((x + 0.5) * divisor)``). Since slot corners and squares are multiples of 4, a slot's
    square downscaled alone equals the same square of the downscaled picture (tested)."""
    middle = divisor // 2
    return pixels[middle::divisor, middle::divisor]


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
        self._pixels = _frozen(np.asarray(self.background))
        self._iconed: dict[tuple[bool, str], np.ndarray] = {}
        self._quantities: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._squares: dict[tuple[bool, str, int], np.ndarray] = {}
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

    def background_pixels(self, divisor: int = 1) -> np.ndarray:
        """The background at ``1 / divisor`` of its size: a read-only (height, width, 3) array."""
        return downscale(self._pixels, divisor)

    def square_pixels(self, index: int, stack: tuple[str, int] | None, divisor: int = 1) -> np.ndarray:
        """Slot ``index``'s square holding ``stack`` (None: empty) at ``1 / divisor`` of its size, read-only."""
        if stack is None:
            x, y = SLOT_POSITIONS[index]
            return downscale(self._pixels[y : y + SQUARE, x : x + SQUARE], divisor)
        return downscale(self._square(index == 0, *stack), divisor)

    def _square(self, output: bool, item: str, quantity: int) -> np.ndarray:
        """One slot's square with the stack drawn in it, at high resolution (cached)."""
        key = (output, item, quantity)
        square = self._squares.get(key)
        if square is None:
            square = self._with_icon(output, item).copy()
            if quantity > 1:
                shadow, text = self._quantity_masks(quantity)
                square[shadow] = SHADOW_COLOR
                square[text] = TEXT_COLOR
            if len(self._squares) >= _PATCH_LIMIT:
                self._squares.clear()
            self._squares[key] = _frozen(square)
        return self._squares[key]

    def _with_icon(self, output: bool, item: str) -> np.ndarray:
        """An empty slot's square with the item's icon pasted over it by its transparency (cached)."""
        key = (output, item)
        if key not in self._iconed:
            square = self.empty_square(output)
            icon = self.icon(item)
            if icon is not None:
                square.paste(icon, (0, 0), icon)
            if len(self._iconed) >= _PATCH_LIMIT:
                self._iconed.clear()
            self._iconed[key] = _frozen(np.asarray(square))
        return self._iconed[key]

    def _quantity_masks(self, quantity: int) -> tuple[np.ndarray, np.ndarray]:
        """Which pixels of a slot's square a quantity's shadow and its digits cover. Drawing the digits as
        :meth:`draw_quantity` does costs about 0.1 ms; the font covers whole pixels only (no partly
        coloured edges: tested), so setting these pixels gives the same picture on any icon."""
        if quantity not in self._quantities:
            blank = Image.new("RGB", (SQUARE, SQUARE))
            self.draw_quantity(blank, (0, 0), quantity)
            drawn = np.asarray(blank)
            shadow, text = ((drawn == color).all(axis=-1) for color in (SHADOW_COLOR, TEXT_COLOR))
            self._quantities[quantity] = (shadow, text)
        return self._quantities[quantity]

    def render(self, slots: Mapping[int, tuple[str, int]], resolution: Resolution = "high") -> Image.Image:
        """The table's picture (RGB). ``slots`` maps slot index to ``(item, quantity)``; quantities of 0 are empty.

        Raises ValueError for a slot outside 0..45, a quantity above 64 or an unknown resolution.
        """
        divisor = divisor_of(resolution)
        picture = self.background.copy()
        for index, (item, quantity) in slots.items():
            check_stack(index, item, quantity)
            if quantity >= 1:
                picture.paste(Image.fromarray(self._square(index == 0, item, quantity)), SLOT_POSITIONS[index])
        if divisor > 1:
            width, height = picture.size
            picture = picture.resize((width // divisor, height // divisor), Image.Resampling.NEAREST)
        return picture

    def png(self, slots: Mapping[int, tuple[str, int]], resolution: Resolution = "high") -> bytes:
        """The picture as PNG bytes, written by a new :class:`Canvas`; the same state always gives the same bytes."""
        return Canvas(self, resolution).update(slots).png()


def _frozen(pixels: np.ndarray) -> np.ndarray:
    """A read-only copy, safe to share."""
    copy = np.array(pixels)
    copy.setflags(write=False)
    return copy


class Canvas:
    """One table's picture at one resolution, kept between steps: :meth:`update` repaints only the slots whose
    stack changed, and :meth:`png` writes the picture.

    ``rows`` is a (height, 1 + 3 * width) uint8 array: each row is a PNG scanline, its first byte the filter
    type (0, None) and then the pixels' RGB bytes, so the array's bytes are the PNG's raw image data.
    """

    def __init__(self, drawer: Renderer, resolution: Resolution = "high") -> None:
        self.drawer = drawer
        self.divisor = divisor_of(resolution)
        background = drawer.background_pixels(self.divisor)
        self.height, self.width = background.shape[:2]
        self.rows = np.zeros((self.height, 1 + 3 * self.width), dtype=np.uint8)
        self._pixels = self.rows[:, 1:].reshape(self.height, self.width, 3)  # a view: rows without filter bytes
        self._pixels[:] = background
        self._drawn: dict[int, tuple[str, int]] = {}  # the stack painted in each occupied slot

    def update(self, slots: Mapping[int, tuple[str, int]]) -> "Canvas":
        """Show ``slots`` (index to ``(item, quantity)``; quantities of 0 are empty) and return the canvas.

        Raises ValueError, before painting anything, for a slot outside 0..45 or a quantity above 64.
        """
        for index, (item, quantity) in slots.items():
            check_stack(index, item, quantity)
        wanted = {index: stack for index, stack in slots.items() if stack[1] >= 1}
        for index in sorted(self._drawn.keys() | wanted.keys()):
            stack = wanted.get(index)
            if self._drawn.get(index) != stack:
                self._paint(index, stack)
        self._drawn = wanted
        return self

    def _paint(self, index: int, stack: tuple[str, int] | None) -> None:
        x, y = (corner // self.divisor for corner in SLOT_POSITIONS[index])
        size = SQUARE // self.divisor
        self._pixels[y : y + size, x : x + size] = self.drawer.square_pixels(index, stack, self.divisor)

    def png(self) -> bytes:
        """The picture as an 8-bit RGB PNG: signature, IHDR, one IDAT with the deflated rows, IEND."""
        # IHDR: width, height, bit depth 8, colour type 2 (RGB), compression, filter method, no interlace
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        data = isal_zlib.compress(self.rows, PNG_COMPRESS_LEVEL)
        return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


def _chunk(kind: bytes, data: bytes) -> bytes:
    # PNG spec, 5.3 "Chunk layout": length (4 bytes, big-endian, of the data only), type, data, and the CRC-32
    # of type and data.
    crc = zlib.crc32(data, zlib.crc32(kind))
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


@cache
def renderer() -> Renderer:
    """The process's renderer (fetches Plancraft's wheel on first use)."""
    return Renderer()
