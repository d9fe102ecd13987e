"""Top-down pictures of a redstone world: one layer, the topmost block of each column, or every layer."""

from collections.abc import Iterable
from math import ceil

from PIL import Image, ImageDraw

from discogym.suites.redstone.blocks import (
    BUTTON,
    GLASS,
    LAMP,
    OPPOSITE,
    REPEATER,
    TORCH,
    WALL_TORCH,
    WIRE,
    Block,
    Pos,
    is_true,
    prop,
)
from discogym.suites.redstone.pictures.paint import (
    ARROW,
    BACKGROUND,
    DUST_ARM,
    DUST_CENTRE,
    FULL_BLOCKS,
    GRID,
    LOCK,
    LOCK_BAR,
    RGB,
    SLAB,
    STICK,
    TEXT,
    UNKNOWN,
    WALL_STICK,
    Point,
    Rect,
    block_colour,
    button_rect,
    check_scale,
    draw_text,
    dust_sides,
    mix,
    png_bytes,
    shade,
    sized_font,
    turn,
    turn_rect,
)
from discogym.suites.redstone.pictures.text import layer_ys
from discogym.suites.redstone.world import World


class _Cell:
    """A cell of a top-down picture: maps the cell's (u, v) to pixels."""

    def __init__(self, draw: ImageDraw.ImageDraw, left: int, top: int, scale: int) -> None:
        self.draw, self.left, self.top, self.scale = draw, left, top, scale

    def point(self, u: float, v: float) -> Point:
        return self.left + u * self.scale, self.top + v * self.scale

    def rect(self, r: Rect, fill: RGB, outline: RGB | None = None) -> None:
        (a, b), (c, d) = self.point(r[0], r[1]), self.point(r[2], r[3])
        self.draw.rectangle((a, b, max(a, c - 1), max(b, d - 1)), fill=fill, outline=outline)

    def polygon(self, points: Iterable[Point], fill: RGB, facing: str = "north") -> None:
        self.draw.polygon([self.point(*turn(u, v, facing)) for u, v in points], fill=fill)

    def disc(self, u: float, v: float, radius: float, fill: RGB, outline: RGB | None = None) -> None:
        x, y = self.point(u, v)
        r = radius * self.scale
        self.draw.ellipse((x - r, y - r, x + r, y + r), fill=fill, outline=outline)

    def label(self, text: str) -> None:
        draw_text(self.draw, self.point(0.2, 0.22), text, round(self.scale * 0.38))


def _draw_full(cell: _Cell, block: Block) -> None:
    """Stone, glass or a lamp filling the cell (inside the grid lines)."""
    colour = block_colour(block)
    inset = 1 / cell.scale
    cell.rect((inset, inset, 1, 1), colour)
    if block.id == LAMP:
        ring = max(1, cell.scale // 10) / cell.scale
        cell.draw.rectangle(
            (*cell.point(inset + ring, inset + ring), *cell.point(1 - ring, 1 - ring)), outline=shade(colour, 0.75)
        )
    elif block.id == GLASS:
        cell.draw.line((*cell.point(0.25, 0.75), *cell.point(0.75, 0.25)), fill=(255, 255, 255), width=2)


def _draw_dust(cell: _Cell, block: Block) -> None:
    colour = block_colour(block)
    for side in dust_sides(block):
        cell.rect(turn_rect(DUST_ARM, side), colour)
        if prop(block, side) == "up":  # climbs the block on that side: a pale mark at the arm's end
            cell.rect(turn_rect((0.4, 0.0, 0.6, 0.1), side), mix(colour, (255, 255, 255), 0.6))
    cell.rect(DUST_CENTRE, colour)
    cell.label(prop(block, "power"))


def _draw_repeater(cell: _Cell, block: Block) -> None:
    out = OPPOSITE[prop(block, "facing")]
    cell.rect((0.06, 0.06, 0.94, 0.94), SLAB, outline=shade(SLAB, 0.7))
    if is_true(block, "locked"):
        cell.rect(turn_rect(LOCK, out), LOCK_BAR)
    cell.polygon(ARROW, block_colour(block), out)
    cell.label(prop(block, "delay"))


def _draw_torch(cell: _Cell, block: Block) -> None:
    head = (0.5, 0.5)
    if block.id == WALL_TORCH:
        facing = prop(block, "facing")
        cell.rect(turn_rect(WALL_STICK, facing), STICK)
        head = turn(0.5, 0.42, facing)
    else:
        cell.rect((0.42, 0.42, 0.58, 0.58), STICK)
    colour = block_colour(block)
    glow = mix(colour, (255, 230, 120), 0.5) if is_true(block, "lit") else shade(colour, 0.6)
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
        cell.rect(button_rect(block), block_colour(block), outline=shade(block_colour(block), 0.55))
    else:
        cell.rect((0.2, 0.2, 0.8, 0.8), UNKNOWN)


def _draw_block(cell: _Cell, block: Block, below: Block | None) -> None:
    """A block in its cell; a component over a pale tint of the full block under it."""
    if block.id in FULL_BLOCKS:
        _draw_full(cell, block)
        return
    if below is not None and below.id in FULL_BLOCKS:
        inset = 1 / cell.scale
        cell.rect((inset, inset, 1, 1), mix(block_colour(below), BACKGROUND, 0.45))
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
    draw.text((2, 2), title, font=sized_font(max(round(scale * 0.55), 6)), fill=TEXT)
    for x in range(x0, x1 + 1):
        draw_text(draw, (left + (x - x0 + 0.5) * scale, top - scale / 2), str(x), size)
    for z in range(z0, z1 + 1):
        draw_text(draw, (left - scale / 2, top + (z - z0 + 0.5) * scale), str(z), size)


def top_down_png(world: World, layer: int | None = None, scale: int = 24) -> bytes:
    """A top-down PNG of layer ``y = layer``, or with None the topmost block of each column (a map).

    Cells are ``scale`` pixels (at least 8), x to the right and z downwards over the world's x and z
    extent, with grid lines, x and z labels and the title ``y=N`` (or ``top view``); see
    :func:`top_down_size` and :func:`top_down_cell` for the layout.
    """
    check_scale(scale, 8)
    return png_bytes(_top_down(world, world.bounds(), layer, scale))


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
    check_scale(scale, 8)
    size, panels = layers_layout(world, scale)
    picture, bounds = Image.new("RGB", size, BACKGROUND), world.bounds()
    for y, corner in panels:
        picture.paste(_top_down(world, bounds, y, scale), corner)
    return png_bytes(picture)
