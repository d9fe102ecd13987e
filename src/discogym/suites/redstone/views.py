"""Views of a redstone world: text layers, and top-down, per-layer and isometric PNG pictures.

Every view takes a :class:`World` and shows the block states it holds (the simulator computes dust power
and connections, ``lit``, ``powered`` and ``locked``); nothing here simulates. Coordinates: x east, y up,
z south. Views are deterministic: the same world gives the same text and the same PNG bytes.

Text (:func:`text_layers`): one grid per y layer, lowest layer first (the order one builds in), x to the
right and z downwards, each block one character:

====================  ===========================================================================
``.``                 air
``#`` / ``G``         stone / glass
``L`` / ``l``         lamp, lit / unlit
``0``-``f``           redstone dust: its power in hexadecimal (``0`` off, ``f`` = 15)
``>`` ``<`` ``^`` v   repeater, the arrow pointing where the signal leaves (facing=west: ``>``)
``T`` / ``t``         torch or wall torch, lit / unlit
``P`` / ``p``         stone button, pressed / not pressed (``B``/``b`` would clash with dust power 11)
====================  ===========================================================================

Under each grid, one line for every block whose character does not say everything: a repeater's delay and
whether it is powered or locked, the wall a wall torch hangs on, the wall or ceiling a button is on.

Pictures: :func:`top_down_png` (one layer, or the topmost block of each column), :func:`layers_png` (every
layer with blocks, side by side) and :func:`iso_png` (a 3D view from above the south-east corner: east runs
down-right, south down-left). Colours: stone grey, glass pale blue, lamp bright yellow when lit and brown
when not, dust from dark to bright red by power (Minecraft's own dust colours), repeaters a grey slab with
an arrow (red when powered, a dark bar across when locked) and, top-down, the delay in the corner; torches
red when lit, dark when not; buttons grey, orange while pressed. Components are drawn over a pale tint of
the block they stand on.
"""

import io
from collections.abc import Iterable, Sequence
from functools import cache
from math import ceil

from PIL import Image, ImageDraw, ImageFont

from discogym.suites.redstone.blocks import (
    BUTTON,
    GLASS,
    HORIZONTAL,
    LAMP,
    OPPOSITE,
    PROPERTIES,
    REPEATER,
    STONE,
    TORCH,
    WALL_TORCH,
    WIRE,
    Block,
    Pos,
)
from discogym.suites.redstone.world import World, format_pos

RGB = tuple[int, int, int]
Point = tuple[float, float]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# ---------------------------------------------------------------------------------------------- text

HEX = "0123456789abcdef"
ARROWS = {"east": ">", "west": "<", "north": "^", "south": "v"}  # by the side the signal leaves from
LEGEND: tuple[tuple[str, str, str], ...] = (  # (how it is shown, its characters, meaning)
    (".", ".", "air"),
    ("#", "#", "stone"),
    ("G", "G", "glass"),
    ("L l", "Ll", "lamp, lit / unlit"),
    ("0-f", HEX, "redstone dust, its power in hex (0 = off, f = 15)"),
    ("> < ^ v", "><^v", "repeater, the arrow pointing where the signal leaves"),
    ("T t", "Tt", "torch or wall torch, lit / unlit"),
    ("P p", "Pp", "stone button, pressed / not pressed"),
)


def prop(block: Block, name: str) -> str:
    """A property's value, or Minecraft's default when the block does not carry it."""
    try:
        return block.get(name)
    except KeyError:
        return PROPERTIES[block.id][name][0]


def _on(block: Block, name: str) -> bool:
    return prop(block, name) == "true"


def block_char(block: Block | None) -> str:
    """The block's character in :func:`text_layers` (``?`` for a block outside the palette)."""
    if block is None:
        return "."
    if block.id == WIRE:
        return HEX[int(prop(block, "power"))]
    if block.id == REPEATER:
        return ARROWS[OPPOSITE[prop(block, "facing")]]
    if block.id in (TORCH, WALL_TORCH):
        return "T" if _on(block, "lit") else "t"
    if block.id == LAMP:
        return "L" if _on(block, "lit") else "l"
    if block.id == BUTTON:
        return "P" if _on(block, "powered") else "p"
    return {STONE: "#", GLASS: "G"}.get(block.id, "?")


def block_note(pos: Pos, block: Block) -> str | None:
    """What a block's character leaves out (repeater delay and state, where a wall torch or button hangs)."""
    where = format_pos(pos)
    if block.id == REPEATER:
        states = "".join(f", {name}" for name in ("powered", "locked") if _on(block, name))
        return f"repeater at {where}: delay {prop(block, 'delay')}{states}"
    if block.id == WALL_TORCH:
        return f"wall torch at {where}: on the block to its {OPPOSITE[prop(block, 'facing')]}"
    if block.id == BUTTON and prop(block, "face") != "floor":
        face = prop(block, "face")
        support = "the block above" if face == "ceiling" else f"the block to its {OPPOSITE[prop(block, 'facing')]}"
        return f"button at {where}: on {support}"
    return None


def _layer_text(world: World, y: int, xs: range, zs: range) -> list[str]:
    """One layer: its title, the x labels, a row per z, then the notes."""
    width = max(len(str(x)) for x in xs) + 1
    label = max(3, *(len(str(z)) for z in zs))
    lines = [f"y={y}", "z\\x".rjust(label) + "".join(str(x).rjust(width) for x in xs)]
    for z in zs:
        lines.append(str(z).rjust(label) + "".join(block_char(world.get((x, y, z))).rjust(width) for x in xs))
    notes = (block_note(pos, block) for pos, block in world if pos[1] == y)
    lines.extend(f"  {note}" for note in notes if note is not None)
    return lines


def _legend(used: str) -> list[str]:
    """The legend lines for the characters that appear."""
    entries = [(shown, meaning) for shown, chars, meaning in LEGEND if any(c in used for c in chars)]
    width = max((len(shown) for shown, _ in entries), default=0)
    return ["legend:", *(f"  {shown.ljust(width)}  {meaning}" for shown, meaning in entries)]


def layer_ys(world: World) -> list[int]:
    """The y of every layer that holds a block, lowest first."""
    return sorted({y for _, y, _ in world.blocks})


def text_layers(world: World, layers: Sequence[int] | None = None) -> str:
    """The world as one text grid per y layer (lowest first; by default every layer with a block).

    All grids span the world's x and z extent, x to the right and z downwards, labelled with coordinates;
    a legend of the characters used follows. See the module docstring for the characters.
    """
    ys = sorted(set(layers)) if layers is not None else layer_ys(world)
    if not ys:
        return "empty world\n"
    (x0, _, z0), (x1, _, z1) = world.bounds()
    xs, zs = range(x0, x1 + 1), range(z0, z1 + 1)
    lines: list[str] = []
    for y in ys:
        lines.extend(_layer_text(world, y, xs, zs))
    lines.extend(_legend("".join(block_char(world.get((x, y, z))) for y in ys for x in xs for z in zs)))
    return "\n".join(lines) + "\n"


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
        return LAMP_LIT if _on(block, "lit") else LAMP_UNLIT
    if block.id == WIRE:
        return dust_colour(int(prop(block, "power")))
    if block.id == REPEATER:
        return SIGNAL_ON if _on(block, "powered") else SIGNAL_OFF
    if block.id in (TORCH, WALL_TORCH):
        return TORCH_LIT if _on(block, "lit") else TORCH_UNLIT
    if block.id == BUTTON:
        return BUTTON_PRESSED if _on(block, "powered") else BUTTON_UP
    return {STONE: STONE_COLOUR, GLASS: GLASS_COLOUR}.get(block.id, UNKNOWN)


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    """``a`` moved a fraction ``t`` towards ``b``."""
    return round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t)


def _shade(colour: RGB, factor: float) -> RGB:
    return _mix(colour, (0, 0, 0), 1 - factor)


@cache
def _font(size: int) -> Font:
    return ImageFont.load_default(size)


def _text(draw: ImageDraw.ImageDraw, centre: Point, text: str, size: int, fill: RGB = TEXT) -> None:
    """``text`` centred on ``centre`` (works with Pillow's bitmap font too, which has no anchors)."""
    font = _font(max(size, 6))
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    draw.text((centre[0] - (left + right) / 2, centre[1] - (top + bottom) / 2), text, font=font, fill=fill)


def _png(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def _check_scale(scale: int, least: int) -> None:
    if scale < least:
        raise ValueError(f"scale must be at least {least} pixels, got {scale}")


# ---------------------------------------------------------------------------------------------- shapes

# Shapes are drawn in a cell's own coordinates (u east, v south, h up, each 0..1) for a block facing north
# and turned to its facing.


def _turn(u: float, v: float, facing: str) -> Point:
    """A point of a north-facing shape, turned about the cell's centre to ``facing``."""
    a, b = u - 0.5, v - 0.5
    a, b = {"north": (a, b), "east": (-b, a), "south": (-a, -b), "west": (b, -a)}[facing]
    return a + 0.5, b + 0.5


def _turn_rect(rect: tuple[float, float, float, float], facing: str) -> tuple[float, float, float, float]:
    """A rectangle (u0, v0, u1, v1) of a north-facing shape, turned to ``facing``."""
    (a, b), (c, d) = _turn(rect[0], rect[1], facing), _turn(rect[2], rect[3], facing)
    return min(a, c), min(b, d), max(a, c), max(b, d)


ARROW = ((0.5, 0.12), (0.2, 0.5), (0.4, 0.5), (0.4, 0.86), (0.6, 0.86), (0.6, 0.5), (0.8, 0.5))  # points north
LOCK = (0.12, 0.56, 0.88, 0.7)
DUST_CENTRE = (0.34, 0.34, 0.66, 0.66)
DUST_ARM = (0.4, 0.0, 0.6, 0.5)  # towards the north side
WALL_STICK = (0.44, 0.5, 0.56, 1.0)  # a wall torch facing north hangs on the block to its south
FLOOR_BUTTON = (0.3, 0.38, 0.7, 0.62)
WALL_BUTTON = (0.3, 0.7, 1.0)  # u0, u1, and v of the wall it is on; it sticks out a depth from there
BUTTON_DEPTH, PRESSED_DEPTH = 0.18, 0.1


def _dust_sides(block: Block) -> list[str]:
    """The sides dust points to; with no connections recorded, all four (a cross)."""
    sides = [side for side in HORIZONTAL if prop(block, side) != "none"]
    return sides or list(HORIZONTAL)


def _button_depth(block: Block) -> float:
    """How far a button sticks out from the block it is on (less while pressed)."""
    return PRESSED_DEPTH if _on(block, "powered") else BUTTON_DEPTH


def _button_rect(block: Block) -> tuple[float, float, float, float]:
    """Where a button sits in its cell, seen from above."""
    facing = prop(block, "facing")
    if prop(block, "face") != "wall":
        return _turn_rect(FLOOR_BUTTON, facing)
    u0, u1, wall = WALL_BUTTON
    return _turn_rect((u0, wall - _button_depth(block), u1, wall), facing)


# ---------------------------------------------------------------------------------------------- top-down


class _Cell:
    """A cell of a top-down picture: maps the cell's (u, v) to pixels."""

    def __init__(self, draw: ImageDraw.ImageDraw, left: int, top: int, scale: int) -> None:
        self.draw, self.left, self.top, self.scale = draw, left, top, scale

    def point(self, u: float, v: float) -> Point:
        return self.left + u * self.scale, self.top + v * self.scale

    def rect(self, r: tuple[float, float, float, float], fill: RGB, outline: RGB | None = None) -> None:
        (a, b), (c, d) = self.point(r[0], r[1]), self.point(r[2], r[3])
        self.draw.rectangle((a, b, max(a, c - 1), max(b, d - 1)), fill=fill, outline=outline)

    def polygon(self, points: Iterable[Point], fill: RGB, facing: str = "north") -> None:
        self.draw.polygon([self.point(*_turn(u, v, facing)) for u, v in points], fill=fill)

    def disc(self, u: float, v: float, radius: float, fill: RGB, outline: RGB | None = None) -> None:
        x, y = self.point(u, v)
        r = radius * self.scale
        self.draw.ellipse((x - r, y - r, x + r, y + r), fill=fill, outline=outline)

    def label(self, text: str) -> None:
        _text(self.draw, self.point(0.2, 0.22), text, round(self.scale * 0.38))


def _draw_full(cell: _Cell, block: Block) -> None:
    """Stone, glass or a lamp filling the cell (inside the grid lines)."""
    colour = block_colour(block)
    inset = 1 / cell.scale
    cell.rect((inset, inset, 1, 1), colour)
    if block.id == LAMP:
        ring = max(1, cell.scale // 10) / cell.scale
        cell.draw.rectangle(
            (*cell.point(inset + ring, inset + ring), *cell.point(1 - ring, 1 - ring)), outline=_shade(colour, 0.75)
        )
    elif block.id == GLASS:
        cell.draw.line((*cell.point(0.25, 0.75), *cell.point(0.75, 0.25)), fill=(255, 255, 255), width=2)


def _draw_dust(cell: _Cell, block: Block) -> None:
    colour = block_colour(block)
    for side in _dust_sides(block):
        cell.rect(_turn_rect(DUST_ARM, side), colour)
        if prop(block, side) == "up":  # climbs the block on that side: a pale mark at the arm's end
            cell.rect(_turn_rect((0.4, 0.0, 0.6, 0.1), side), _mix(colour, (255, 255, 255), 0.6))
    cell.rect(DUST_CENTRE, colour)
    cell.label(prop(block, "power"))


def _draw_repeater(cell: _Cell, block: Block) -> None:
    out = OPPOSITE[prop(block, "facing")]
    cell.rect((0.06, 0.06, 0.94, 0.94), SLAB, outline=_shade(SLAB, 0.7))
    if _on(block, "locked"):
        cell.rect(_turn_rect(LOCK, out), LOCK_BAR)
    cell.polygon(ARROW, block_colour(block), out)
    cell.label(prop(block, "delay"))


def _draw_torch(cell: _Cell, block: Block) -> None:
    head = (0.5, 0.5)
    if block.id == WALL_TORCH:
        facing = prop(block, "facing")
        cell.rect(_turn_rect(WALL_STICK, facing), STICK)
        head = _turn(0.5, 0.42, facing)
    else:
        cell.rect((0.42, 0.42, 0.58, 0.58), STICK)
    colour = block_colour(block)
    glow = _mix(colour, (255, 230, 120), 0.5) if _on(block, "lit") else _shade(colour, 0.6)
    cell.disc(*head, 0.2, colour, outline=glow)


def _draw_component(cell: _Cell, block: Block) -> None:
    """Dust, a repeater, a torch, a button, or an unknown block."""
    if block.id == WIRE:
        _draw_dust(cell, block)
    elif block.id == REPEATER:
        _draw_repeater(cell, block)
    elif block.id in (TORCH, WALL_TORCH):
        _draw_torch(cell, block)
    elif block.id == BUTTON:
        cell.rect(_button_rect(block), block_colour(block), outline=_shade(block_colour(block), 0.55))
    else:
        cell.rect((0.2, 0.2, 0.8, 0.8), UNKNOWN)


def _draw_block(cell: _Cell, block: Block, below: Block | None) -> None:
    """A block in its cell; a component over a pale tint of the full block under it."""
    if block.id in FULL_BLOCKS:
        _draw_full(cell, block)
        return
    if below is not None and below.id in FULL_BLOCKS:
        inset = 1 / cell.scale
        cell.rect((inset, inset, 1, 1), _mix(block_colour(below), BACKGROUND, 0.45))
    _draw_component(cell, block)


def _column_top(world: World, x: int, z: int, ys: range) -> Pos | None:
    """The position of the highest block in a column, or None."""
    return next(((x, y, z) for y in reversed(ys) if (x, y, z) in world.blocks), None)


def top_down_size(world: World, scale: int = 24) -> tuple[int, int]:
    """The (width, height) of :func:`top_down_png`'s picture: a label band of one cell on the left, two
    (title and x labels) on top, the grid, and one pixel for the closing grid line."""
    (x0, _, z0), (x1, _, z1) = world.bounds()
    return (x1 - x0 + 2) * scale + 1, (z1 - z0 + 3) * scale + 1


Bounds = tuple[Pos, Pos]


def _corner(bounds: Bounds, x: int, z: int, scale: int) -> tuple[int, int]:
    (x0, _, z0), _ = bounds
    return (x - x0 + 1) * scale, (z - z0 + 2) * scale


def top_down_cell(world: World, x: int, z: int, scale: int = 24) -> tuple[int, int]:
    """The top-left pixel of column (x, z)'s cell in :func:`top_down_png` (on its grid lines)."""
    return _corner(world.bounds(), x, z, scale)


def _top_down(world: World, bounds: Bounds, layer: int | None, scale: int) -> Image.Image:
    """The picture of :func:`top_down_png` (``bounds`` are the world's)."""
    (x0, y0, z0), (x1, y1, z1) = bounds
    picture = Image.new("RGB", top_down_size(world, scale), BACKGROUND)
    draw = ImageDraw.Draw(picture)
    _grid_and_labels(draw, bounds, scale, "top view" if layer is None else f"y={layer}")
    for x in range(x0, x1 + 1):
        for z in range(z0, z1 + 1):
            pos = (x, layer, z) if layer is not None else _column_top(world, x, z, range(y0, y1 + 1))
            block = world.get(pos) if pos is not None else None
            if pos is not None and block is not None:
                cell = _Cell(draw, *_corner(bounds, x, z, scale), scale)
                _draw_block(cell, block, world.get((x, pos[1] - 1, z)))
    return picture


def _grid_and_labels(draw: ImageDraw.ImageDraw, bounds: Bounds, scale: int, title: str) -> None:
    """Grid lines, the title and the x and z labels of a top-down picture."""
    (x0, _, z0), (x1, _, z1) = bounds
    left, top = _corner(bounds, x0, z0, scale)
    right, bottom = _corner(bounds, x1 + 1, z1 + 1, scale)
    for x in range(x0, x1 + 2):
        draw.line((left + (x - x0) * scale, top, left + (x - x0) * scale, bottom), fill=GRID)
    for z in range(z0, z1 + 2):
        draw.line((left, top + (z - z0) * scale, right, top + (z - z0) * scale), fill=GRID)
    size = round(scale * 0.42)
    draw.text((2, 2), title, font=_font(max(round(scale * 0.55), 6)), fill=TEXT)
    for x in range(x0, x1 + 1):
        _text(draw, (left + (x - x0 + 0.5) * scale, top - scale / 2), str(x), size)
    for z in range(z0, z1 + 1):
        _text(draw, (left - scale / 2, top + (z - z0 + 0.5) * scale), str(z), size)


def top_down_png(world: World, layer: int | None = None, scale: int = 24) -> bytes:
    """A top-down PNG of layer ``y = layer``, or with None the topmost block of each column (a map).

    Cells are ``scale`` pixels (at least 8), x to the right and z downwards over the world's x and z
    extent, with grid lines, x and z labels and the title ``y=N`` (or ``top view``); see
    :func:`top_down_size` and :func:`top_down_cell` for the layout.
    """
    _check_scale(scale, 8)
    return _png(_top_down(world, world.bounds(), layer, scale))


LAYERS_PER_ROW = 4


def layers_layout(world: World, scale: int = 24) -> tuple[tuple[int, int], list[tuple[int, tuple[int, int]]]]:
    """The size of :func:`layers_png`'s picture and each layer's panel: (y, top-left pixel), lowest first.
    Panels (each a :func:`top_down_png` picture) go left to right, at most four to a row, half a cell apart."""
    width, height = top_down_size(world, scale)
    ys = layer_ys(world) or [0]
    gap = scale // 2
    columns, rows = min(len(ys), LAYERS_PER_ROW), ceil(len(ys) / LAYERS_PER_ROW)
    panels = [
        (y, ((i % LAYERS_PER_ROW) * (width + gap), (i // LAYERS_PER_ROW) * (height + gap))) for i, y in enumerate(ys)
    ]
    return (columns * width + (columns - 1) * gap, rows * height + (rows - 1) * gap), panels


def layers_png(world: World, scale: int = 24) -> bytes:
    """Every layer that holds a block as a top-down picture labelled ``y=N``, lowest first, side by side
    (four to a row); all panels span the same x and z, so a column is at the same place in each."""
    _check_scale(scale, 8)
    size, panels = layers_layout(world, scale)
    picture, bounds = Image.new("RGB", size, BACKGROUND), world.bounds()
    for y, corner in panels:
        picture.paste(_top_down(world, bounds, y, scale), corner)
    return _png(picture)


# ---------------------------------------------------------------------------------------------- isometric

EAST_SHADE, SOUTH_SHADE = 0.8, 0.62  # brightness of the faces turned east and south (the top is 1)
GLASS_ALPHA = 110
Box = tuple[tuple[float, float, float], tuple[float, float, float]]


class _Iso:
    """Projects world points to the isometric picture: x runs down-right, z down-left, y up."""

    def __init__(self, world: World, scale: int) -> None:
        (x0, y0, z0), (x1, y1, z1) = world.bounds()
        self.scale, self.margin = scale, scale
        self.dx, self.dy, self.dz = x1 - x0 + 1, y1 - y0 + 1, z1 - z0 + 1
        self.origin = (z1 + 1 - x0) * scale + self.margin, (y1 + 1) * scale - (x0 + z0) * scale / 2 + self.margin

    def size(self) -> tuple[int, int]:
        span = self.dx + self.dz
        return span * self.scale + 2 * self.margin, ceil(span * self.scale / 2) + self.dy * self.scale + 2 * self.margin

    def point(self, x: float, y: float, z: float) -> Point:
        return self.origin[0] + (x - z) * self.scale, self.origin[1] + (x + z) * self.scale / 2 - y * self.scale


def iso_size(world: World, scale: int = 16) -> tuple[int, int]:
    """The (width, height) of :func:`iso_png`'s picture: with the world's extent X, Y, Z in blocks,
    ``((X + Z) * scale + 2 * scale, ceil((X + Z) * scale / 2) + Y * scale + 2 * scale)``."""
    return _Iso(world, scale).size()


def iso_pixel(world: World, point: tuple[float, float, float], scale: int = 16) -> tuple[int, int]:
    """The pixel of :func:`iso_png`'s picture where a world point (block corners at whole numbers) lands."""
    x, y = _Iso(world, scale).point(*point)
    return int(x), int(y)


class _IsoPainter:
    """Draws boxes and flat quads of one block into the isometric picture."""

    def __init__(self, iso: _Iso, draw: ImageDraw.ImageDraw, pos: Pos) -> None:
        self.iso, self.draw, self.pos = iso, draw, pos

    def quad(self, corners: Iterable[tuple[float, float, float]], fill: RGB, alpha: int, outline: bool) -> None:
        x, y, z = self.pos
        points = [self.iso.point(x + u, y + h, z + v) for u, h, v in corners]
        edge = (*_shade(fill, 0.6), min(255, alpha + 80)) if outline else None
        self.draw.polygon(points, fill=(*fill, alpha), outline=edge)

    def box(self, box: Box, colour: RGB, alpha: int = 255, outline: bool = True) -> None:
        """The three faces of a box one sees from above the south-east (cell coordinates u, h, v)."""
        (a, b, c), (d, e, f) = box
        self.quad(((d, b, c), (d, e, c), (d, e, f), (d, b, f)), _shade(colour, EAST_SHADE), alpha, outline)
        self.quad(((a, b, f), (d, b, f), (d, e, f), (a, e, f)), _shade(colour, SOUTH_SHADE), alpha, outline)
        self.quad(((a, e, c), (d, e, c), (d, e, f), (a, e, f)), colour, alpha, outline)

    def flat(self, rect: tuple[float, float, float, float], h0: float, h1: float, colour: RGB, outline: bool) -> None:
        """A box over a rectangle (u0, v0, u1, v1) of the cell, from height h0 to h1."""
        self.box(((rect[0], h0, rect[1]), (rect[2], h1, rect[3])), colour, outline=outline)


def _iso_dust(paint: _IsoPainter, block: Block) -> None:
    colour = block_colour(block)
    for side in _dust_sides(block):
        paint.flat(_turn_rect(DUST_ARM, side), 0, 1 / 16, colour, False)
        if prop(block, side) == "up":  # up the face of the block on that side
            paint.flat(_turn_rect((0.4, 0.0, 0.6, 1 / 32), side), 0, 1, colour, False)
    paint.flat(DUST_CENTRE, 0, 1 / 16, colour, False)


def _iso_repeater(paint: _IsoPainter, block: Block) -> None:
    out = OPPOSITE[prop(block, "facing")]
    top = 2 / 16
    paint.flat((0, 0, 1, 1), 0, top, SLAB, True)
    if _on(block, "locked"):
        paint.flat(_turn_rect(LOCK, out), top, top + 1 / 16, LOCK_BAR, False)
    x, y, z = paint.pos
    points = [_turn(u, v, out) for u, v in ARROW]
    arrow = [paint.iso.point(x + u, y + top, z + v) for u, v in points]
    paint.draw.polygon(arrow, fill=(*block_colour(block), 255))


def _iso_torch(paint: _IsoPainter, block: Block) -> None:
    stick, base = (0.44, 0.44, 0.56, 0.56), 0.0
    if block.id == WALL_TORCH:  # leaning from the wall: drawn as a pillar near it, raised
        stick, base = _turn_rect((0.44, 0.7, 0.56, 0.82), prop(block, "facing")), 0.2
    paint.flat(stick, base, base + 0.5, STICK, False)
    head = (stick[0] - 0.04, stick[1] - 0.04, stick[2] + 0.04, stick[3] + 0.04)
    paint.flat(head, base + 0.5, base + 0.66, block_colour(block), True)


def _iso_button(paint: _IsoPainter, block: Block) -> None:
    depth = _button_depth(block)
    rect, face = _button_rect(block), prop(block, "face")
    if face == "wall":
        paint.flat(rect, 0.38, 0.62, block_colour(block), True)
    elif face == "floor":
        paint.flat(rect, 0, depth, block_colour(block), True)
    else:
        paint.flat(rect, 1 - depth, 1, block_colour(block), True)


def _iso_block(paint: _IsoPainter, block: Block) -> None:
    """One block: a full cube, or the component's shape."""
    if block.id in FULL_BLOCKS:
        alpha = GLASS_ALPHA if block.id == GLASS else 255
        paint.box(((0, 0, 0), (1, 1, 1)), block_colour(block), alpha)
    elif block.id == WIRE:
        _iso_dust(paint, block)
    elif block.id == REPEATER:
        _iso_repeater(paint, block)
    elif block.id in (TORCH, WALL_TORCH):
        _iso_torch(paint, block)
    elif block.id == BUTTON:
        _iso_button(paint, block)
    else:
        paint.box(((0.2, 0.2, 0.2), (0.8, 0.8, 0.8)), UNKNOWN)


def iso_png(world: World, scale: int = 16) -> bytes:
    """An isometric PNG of the whole world, seen from above its south-east corner (x runs down-right, z
    down-left); a block's top face is ``2 * scale`` pixels wide. Blocks are painted back to front (by
    x + y + z, which is exact for blocks of a grid seen along (1, 1, 1)): full cubes for stone, glass
    (see-through) and lamps, flat shapes for dust and repeaters, small pillars for torches, small boxes
    for buttons. See :func:`iso_size` and :func:`iso_pixel` for the layout."""
    _check_scale(scale, 4)
    iso = _Iso(world, scale)
    picture = Image.new("RGB", iso.size(), BACKGROUND)
    draw = ImageDraw.Draw(picture, "RGBA")
    for pos, block in sorted(world, key=lambda item: (sum(item[0]), item[0])):
        _iso_block(_IsoPainter(iso, draw, pos), block)
    return _png(picture)
