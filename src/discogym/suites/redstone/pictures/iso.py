"""The 3D (isometric) picture of a redstone world, seen from above its south-east corner."""

from collections.abc import Iterable
from math import ceil

from PIL import Image, ImageDraw

from discogym.suites.redstone.blocks import (
    BUTTON,
    GLASS,
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
    LOCK,
    LOCK_BAR,
    RGB,
    SLAB,
    STICK,
    UNKNOWN,
    Point,
    Rect,
    block_colour,
    button_depth,
    button_rect,
    check_scale,
    dust_sides,
    png_bytes,
    shade,
    turn,
    turn_rect,
)
from discogym.suites.redstone.world import World

EAST_SHADE, SOUTH_SHADE = 0.8, 0.62  # brightness of the faces turned east and south (the top is 1)
GLASS_ALPHA = 110
SMALLEST_SCALE = 16  # the default pixels per block (half a top face's width)
MIN_WIDTH = 400  # the default picture's least width in pixels
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


def readable_scale(world: World) -> int:
    """The default scale of the pictures: :data:`SMALLEST_SCALE`, raised for a small world until its picture is
    :data:`MIN_WIDTH` pixels wide (with the world's extent X and Z, ``ceil(MIN_WIDTH / (X + Z + 2))``), so that a
    few blocks are not a thumbnail; a large world keeps the smallest scale."""
    (x0, _, z0), (x1, _, z1) = world.bounds()
    return max(SMALLEST_SCALE, ceil(MIN_WIDTH / (x1 - x0 + 1 + z1 - z0 + 1 + 2)))


def iso_size(world: World, scale: int | None = None) -> tuple[int, int]:
    """The (width, height) of :func:`iso_png`'s picture: with the world's extent X, Y, Z in blocks,
    ``((X + Z) * scale + 2 * scale, ceil((X + Z) * scale / 2) + Y * scale + 2 * scale)``; ``scale`` defaults to
    :func:`readable_scale`."""
    return _Iso(world, readable_scale(world) if scale is None else scale).size()


def iso_pixel(world: World, point: tuple[float, float, float], scale: int | None = None) -> tuple[int, int]:
    """The pixel of :func:`iso_png`'s picture where a world point (block corners at whole numbers) lands."""
    x, y = _Iso(world, readable_scale(world) if scale is None else scale).point(*point)
    return int(x), int(y)


class _IsoPainter:
    """Draws boxes and flat quads of one block into the isometric picture."""

    def __init__(self, iso: _Iso, draw: ImageDraw.ImageDraw, pos: Pos) -> None:
        self.iso, self.draw, self.pos = iso, draw, pos

    def quad(self, corners: Iterable[tuple[float, float, float]], fill: RGB, alpha: int, outline: bool) -> None:
        x, y, z = self.pos
        points = [self.iso.point(x + u, y + h, z + v) for u, h, v in corners]
        edge = (*shade(fill, 0.6), min(255, alpha + 80)) if outline else None
        self.draw.polygon(points, fill=(*fill, alpha), outline=edge)

    def box(self, box: Box, colour: RGB, alpha: int = 255, outline: bool = True) -> None:
        """The three faces of a box one sees from above the south-east (cell coordinates u, h, v)."""
        (a, b, c), (d, e, f) = box
        self.quad(((d, b, c), (d, e, c), (d, e, f), (d, b, f)), shade(colour, EAST_SHADE), alpha, outline)
        self.quad(((a, b, f), (d, b, f), (d, e, f), (a, e, f)), shade(colour, SOUTH_SHADE), alpha, outline)
        self.quad(((a, e, c), (d, e, c), (d, e, f), (a, e, f)), colour, alpha, outline)

    def flat(self, rect: Rect, h0: float, h1: float, colour: RGB, outline: bool) -> None:
        """A box over a rectangle (u0, v0, u1, v1) of the cell, from height h0 to h1."""
        self.box(((rect[0], h0, rect[1]), (rect[2], h1, rect[3])), colour, outline=outline)


def _iso_dust(paint: _IsoPainter, block: Block) -> None:
    colour = block_colour(block)
    for side in dust_sides(block):
        paint.flat(turn_rect(DUST_ARM, side), 0, 1 / 16, colour, False)
        if prop(block, side) == "up":  # up the face of the block on that side
            paint.flat(turn_rect((0.4, 0.0, 0.6, 1 / 32), side), 0, 1, colour, False)
    paint.flat(DUST_CENTRE, 0, 1 / 16, colour, False)


def _iso_repeater(paint: _IsoPainter, block: Block) -> None:
    out = OPPOSITE[prop(block, "facing")]
    top = 2 / 16
    paint.flat((0, 0, 1, 1), 0, top, SLAB, True)
    if is_true(block, "locked"):
        paint.flat(turn_rect(LOCK, out), top, top + 1 / 16, LOCK_BAR, False)
    x, y, z = paint.pos
    points = [turn(u, v, out) for u, v in ARROW]
    arrow = [paint.iso.point(x + u, y + top, z + v) for u, v in points]
    paint.draw.polygon(arrow, fill=(*block_colour(block), 255))


def _iso_torch(paint: _IsoPainter, block: Block) -> None:
    stick, base = (0.44, 0.44, 0.56, 0.56), 0.0
    if block.id == WALL_TORCH:  # leaning from the wall: drawn as a pillar near it, raised
        stick, base = turn_rect((0.44, 0.7, 0.56, 0.82), prop(block, "facing")), 0.2
    paint.flat(stick, base, base + 0.5, STICK, False)
    head = (stick[0] - 0.04, stick[1] - 0.04, stick[2] + 0.04, stick[3] + 0.04)
    paint.flat(head, base + 0.5, base + 0.66, block_colour(block), True)


def _iso_button(paint: _IsoPainter, block: Block) -> None:
    depth = button_depth(block)
    rect, face = button_rect(block), prop(block, "face")
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


def iso_png(world: World, scale: int | None = None) -> bytes:
    """An isometric PNG of the whole world, seen from above its south-east corner (x runs down-right, z
    down-left); a block's top face is ``2 * scale`` pixels wide (by default :func:`readable_scale`: 16, or
    more for a small world, so that its picture is at least 400 pixels wide). Blocks are painted back to front (by
    x + y + z, which is exact for blocks of a grid seen along (1, 1, 1)): full cubes for stone, glass
    (see-through) and lamps, flat shapes for dust and repeaters, small pillars for torches, small boxes
    for buttons. See :func:`iso_size` and :func:`iso_pixel` for the layout."""
    scale = readable_scale(world) if scale is None else scale
    check_scale(scale, 4)
    iso = _Iso(world, scale)
    picture = Image.new("RGB", iso.size(), BACKGROUND)
    draw = ImageDraw.Draw(picture, "RGBA")
    for pos, block in sorted(world, key=lambda item: (sum(item[0]), item[0])):
        _iso_block(_IsoPainter(iso, draw, pos), block)
    return png_bytes(picture)
