"""What the picture views share: colours, text and PNG output, and the shapes of the components.

Shapes are drawn in a cell's own coordinates (u east, v south, h up, each 0..1) for a block facing north and
turned to its facing.
"""

import io
from functools import cache

from PIL import Image, ImageDraw, ImageFont

from discogym.suites.redstone.blocks import (
    BUTTON,
    GLASS,
    HORIZONTAL,
    LAMP,
    REPEATER,
    STONE,
    TORCH,
    WALL_TORCH,
    WIRE,
    Block,
    is_true,
    prop,
)

RGB = tuple[int, int, int]
Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # (u0, v0, u1, v1)
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# ---------------------------------------------------------------------------------------------- colours

BACKGROUND: RGB = (242, 241, 236)
GRID: RGB = (206, 204, 196)
TEXT: RGB = (40, 40, 40)
STONE_COLOUR: RGB = (128, 128, 128)
GLASS_COLOUR: RGB = (196, 230, 242)
LAMP_LIT: RGB = (255, 221, 60)
LAMP_UNLIT: RGB = (108, 70, 42)
TORCH_LIT: RGB = (255, 64, 16)
TORCH_UNLIT: RGB = (84, 28, 22)
STICK: RGB = (122, 86, 50)
SLAB: RGB = (172, 170, 164)
SIGNAL_ON: RGB = (255, 40, 20)
SIGNAL_OFF: RGB = (104, 26, 20)
LOCK_BAR: RGB = (46, 46, 46)
BUTTON_UP: RGB = (150, 150, 146)
BUTTON_PRESSED: RGB = (240, 160, 40)
UNKNOWN: RGB = (255, 0, 255)
FULL_BLOCKS = frozenset({STONE, GLASS, LAMP})
PNG_COMPRESS_LEVEL = 6


def dust_colour(power: int) -> RGB:
    """Minecraft's colour of dust with this power: dark red at 0 to bright red at 15."""
    f = power / 15
    red = f * 0.6 + (0.4 if f > 0 else 0.3)
    green = min(max(f * f * 0.7 - 0.5, 0.0), 1.0)
    blue = min(max(f * f * 0.6 - 0.7, 0.0), 1.0)
    return round(red * 255), round(green * 255), round(blue * 255)


def block_colour(block: Block) -> RGB:
    """The main colour of a block in its state (a full block's face, dust's line, a torch's head)."""
    if block.id == LAMP:
        return LAMP_LIT if is_true(block, "lit") else LAMP_UNLIT
    if block.id == WIRE:
        return dust_colour(int(prop(block, "power")))
    if block.id == REPEATER:
        return SIGNAL_ON if is_true(block, "powered") else SIGNAL_OFF
    if block.id in (TORCH, WALL_TORCH):
        return TORCH_LIT if is_true(block, "lit") else TORCH_UNLIT
    if block.id == BUTTON:
        return BUTTON_PRESSED if is_true(block, "powered") else BUTTON_UP
    return {STONE: STONE_COLOUR, GLASS: GLASS_COLOUR}.get(block.id, UNKNOWN)


def mix(a: RGB, b: RGB, t: float) -> RGB:
    """``a`` moved a fraction ``t`` towards ``b``."""
    return round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t)


def shade(colour: RGB, factor: float) -> RGB:
    """``colour`` darkened to ``factor`` of its brightness."""
    return mix(colour, (0, 0, 0), 1 - factor)


@cache
def sized_font(size: int) -> Font:
    """Pillow's default font at ``size`` pixels."""
    return ImageFont.load_default(size)


def draw_text(draw: ImageDraw.ImageDraw, centre: Point, text: str, size: int, fill: RGB = TEXT) -> None:
    """``text`` centred on ``centre`` (works with Pillow's bitmap font too, which has no anchors)."""
    font = sized_font(max(size, 6))
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    draw.text((centre[0] - (left + right) / 2, centre[1] - (top + bottom) / 2), text, font=font, fill=fill)


def png_bytes(picture: Image.Image) -> bytes:
    """The picture as PNG bytes (the same picture always gives the same bytes)."""
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def check_scale(scale: int, least: int) -> None:
    """A ValueError if a picture's ``scale`` is below ``least`` pixels."""
    if scale < least:
        raise ValueError(f"scale must be at least {least} pixels, got {scale}")


# ---------------------------------------------------------------------------------------------- shapes


def turn(u: float, v: float, facing: str) -> Point:
    """A point of a north-facing shape, turned about the cell's centre to ``facing``."""
    a, b = u - 0.5, v - 0.5
    a, b = {"north": (a, b), "east": (-b, a), "south": (-a, -b), "west": (b, -a)}[facing]
    return a + 0.5, b + 0.5


def turn_rect(rect: Rect, facing: str) -> Rect:
    """A rectangle (u0, v0, u1, v1) of a north-facing shape, turned to ``facing``."""
    (a, b), (c, d) = turn(rect[0], rect[1], facing), turn(rect[2], rect[3], facing)
    return min(a, c), min(b, d), max(a, c), max(b, d)


ARROW = ((0.5, 0.12), (0.2, 0.5), (0.4, 0.5), (0.4, 0.86), (0.6, 0.86), (0.6, 0.5), (0.8, 0.5))  # points north
LOCK = (0.12, 0.56, 0.88, 0.7)
DUST_CENTRE = (0.34, 0.34, 0.66, 0.66)
DUST_ARM = (0.4, 0.0, 0.6, 0.5)  # towards the north side
WALL_STICK = (0.44, 0.5, 0.56, 1.0)  # a wall torch facing north hangs on the block to its south
FLOOR_BUTTON = (0.3, 0.38, 0.7, 0.62)
WALL_BUTTON = (0.3, 0.7, 1.0)  # u0, u1, and v of the wall it is on; it sticks out a depth from there
BUTTON_DEPTH, PRESSED_DEPTH = 0.18, 0.1


def dust_sides(block: Block) -> list[str]:
    """The sides dust points to; with no connections recorded, all four (a cross)."""
    sides = [side for side in HORIZONTAL if prop(block, side) != "none"]
    return sides or list(HORIZONTAL)


def button_depth(block: Block) -> float:
    """How far a button sticks out from the block it is on (less while pressed)."""
    return PRESSED_DEPTH if is_true(block, "powered") else BUTTON_DEPTH


def button_rect(block: Block) -> Rect:
    """Where a button sits in its cell, seen from above."""
    facing = prop(block, "facing")
    if prop(block, "face") != "wall":
        return turn_rect(FLOOR_BUTTON, facing)
    u0, u1, wall = WALL_BUTTON
    return turn_rect((u0, wall - button_depth(block), u1, wall), facing)
