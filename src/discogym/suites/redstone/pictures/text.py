"""The text view of a redstone world: one grid of characters per y layer.

Each layer is a grid over the world's x and z extent, x to the right and z downwards, each block one character
(see :data:`LEGEND`); under each grid, one line for every block whose character does not say everything.
"""

from collections.abc import Sequence

from discogym.suites.redstone.blocks import (
    BUTTON,
    GLASS,
    LAMP,
    OPPOSITE,
    REPEATER,
    STONE,
    TORCH,
    WALL_TORCH,
    WIRE,
    Block,
    Pos,
    is_true,
    prop,
)
from discogym.suites.redstone.world import World, format_pos

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


def block_char(block: Block | None) -> str:
    """The block's character in :func:`text_layers` (``?`` for a block outside the palette)."""
    if block is None:
        return "."
    if block.id == WIRE:
        return HEX[int(prop(block, "power"))]
    if block.id == REPEATER:
        return ARROWS[OPPOSITE[prop(block, "facing")]]
    if block.id in (TORCH, WALL_TORCH):
        return "T" if is_true(block, "lit") else "t"
    if block.id == LAMP:
        return "L" if is_true(block, "lit") else "l"
    if block.id == BUTTON:
        return "P" if is_true(block, "powered") else "p"
    return {STONE: "#", GLASS: "G"}.get(block.id, "?")


def block_note(pos: Pos, block: Block) -> str | None:
    """What a block's character leaves out (repeater delay and state, where a wall torch or button hangs)."""
    where = format_pos(pos)
    if block.id == REPEATER:
        states = "".join(f", {name}" for name in ("powered", "locked") if is_true(block, name))
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
