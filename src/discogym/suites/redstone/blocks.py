"""Blocks of the redstone palette with Minecraft's ids and block-state properties.

Coordinates: x grows east, y up, z south. A block is written as in Minecraft commands:
``minecraft:redstone_repeater[delay=2,facing=west]``. Properties a block does not name take Minecraft's
defaults; properties the simulator computes (dust power and connections, ``lit``, ``powered``, ``locked``)
are recomputed when a world is loaded.

Names: the palette uses the paper's ids, which are the game's own for every block but one. The paper (and so
the task files) calls the repeater ``minecraft:redstone_repeater``; Minecraft's id is ``minecraft:repeater``.
Blocks are read under either name (:func:`palette_id`) and held under the paper's; schematics, which the game
reads, are written with the game's (:func:`game_id`). Every id, property and value here is checked against the
game's block report for 1.21 (see docs/redstone.md, "Block ids").
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from discogym.core import UserError

Pos = tuple[int, int, int]

AIR: Final = "minecraft:air"
STONE: Final = "minecraft:stone"
GLASS: Final = "minecraft:glass"
LAMP: Final = "minecraft:redstone_lamp"
WIRE: Final = "minecraft:redstone_wire"
REPEATER: Final = "minecraft:redstone_repeater"
TORCH: Final = "minecraft:redstone_torch"
WALL_TORCH: Final = "minecraft:redstone_wall_torch"
BUTTON: Final = "minecraft:stone_button"

# The game's id for each palette block whose palette id differs, and the reverse.
GAME_IDS: Final[Mapping[str, str]] = {REPEATER: "minecraft:repeater"}
PALETTE_IDS: Final[Mapping[str, str]] = {game: palette for palette, game in GAME_IDS.items()}

HORIZONTAL = ("north", "east", "south", "west")
DIRECTIONS: dict[str, Pos] = {
    "north": (0, 0, -1),
    "east": (1, 0, 0),
    "south": (0, 0, 1),
    "west": (-1, 0, 0),
    "up": (0, 1, 0),
    "down": (0, -1, 0),
}
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "up": "down", "down": "up"}

# Every property of every palette block: its allowed values, the default first.
PROPERTIES: dict[str, dict[str, tuple[str, ...]]] = {
    AIR: {},
    STONE: {},
    GLASS: {},
    LAMP: {"lit": ("false", "true")},
    WIRE: {
        "power": tuple(str(n) for n in range(16)),
        **{side: ("none", "side", "up") for side in HORIZONTAL},
    },
    REPEATER: {
        "facing": HORIZONTAL,
        "delay": ("1", "2", "3", "4"),
        "locked": ("false", "true"),
        "powered": ("false", "true"),
    },
    TORCH: {"lit": ("true", "false")},
    WALL_TORCH: {"facing": HORIZONTAL, "lit": ("true", "false")},
    BUTTON: {"face": ("wall", "floor", "ceiling"), "facing": HORIZONTAL, "powered": ("false", "true")},
}
# Properties the simulator derives from the world; a world file may leave them out.
COMPUTED = {"power", "north", "east", "south", "west", "lit", "powered", "locked"}
COMPONENTS = frozenset({WIRE, REPEATER, TORCH, WALL_TORCH, LAMP, BUTTON})  # blocks with redstone behaviour
CONDUCTORS = frozenset({STONE, LAMP})  # full opaque blocks that carry power; glass does not
SOLID = frozenset({STONE, LAMP, GLASS})  # full cubes other blocks can stand on or hang from

_BLOCK = re.compile(r"\s*(?:minecraft:)?([a-z_]+)\s*(?:\[([^\]]*)\])?\s*")


@dataclass(frozen=True, order=True)
class Block:
    """A block id with every one of its properties (sorted by name)."""

    id: str
    props: tuple[tuple[str, str], ...] = ()

    def get(self, name: str) -> str:
        """A property's value."""
        for key, value in self.props:
            if key == name:
                return value
        raise KeyError(f"{self.id} has no property {name!r}")

    def with_props(self, **changes: str) -> "Block":
        """The same block with some properties changed."""
        values = dict(self.props)
        values.update(changes)
        return Block(self.id, tuple(sorted(values.items())))

    def __str__(self) -> str:
        if not self.props:
            return self.id
        return f"{self.id}[{','.join(f'{k}={v}' for k, v in self.props)}]"

    @property
    def name(self) -> str:
        """The id without ``minecraft:``."""
        return self.id.removeprefix("minecraft:")


def game_id(block_id: str) -> str:
    """The id the game uses for a palette block (``minecraft:redstone_repeater`` -> ``minecraft:repeater``)."""
    return GAME_IDS.get(block_id, block_id)


def palette_id(block_id: str) -> str:
    """The palette's id for a full block id given under either name (``minecraft:repeater`` ->
    ``minecraft:redstone_repeater``); any other id unchanged."""
    return PALETTE_IDS.get(block_id, block_id)


def make_block(block_id: str, **props: str) -> Block:
    """A palette block with Minecraft's defaults for the properties not given; a UserError for anything else.
    The id may leave out ``minecraft:`` and may be the game's name for the block (``repeater``)."""
    full_id = palette_id(block_id if block_id.startswith("minecraft:") else f"minecraft:{block_id}")
    allowed = PROPERTIES.get(full_id)
    if allowed is None:
        palette = ", ".join(sorted(PROPERTIES))
        raise UserError(f"{full_id} is not in the redstone palette ({palette})")
    values = {name: options[0] for name, options in allowed.items()}
    for name, value in props.items():
        if name not in allowed:
            known = ", ".join(allowed) or "none"
            raise UserError(f"{full_id} has no property {name!r} (its properties: {known})")
        if value not in allowed[name]:
            raise UserError(f"{full_id}[{name}={value}]: {name} must be one of {', '.join(allowed[name])}")
        values[name] = value
    return Block(full_id, tuple(sorted(values.items())))


def prop(block: Block, name: str) -> str:
    """A property's value, or Minecraft's default when the block does not carry it."""
    try:
        return block.get(name)
    except KeyError:
        return PROPERTIES[block.id][name][0]


def is_true(block: Block, name: str) -> bool:
    """Whether a boolean property (``lit``, ``powered``, ``locked``) is true, its default counting when absent."""
    return prop(block, name) == "true"


def placed_part(block: Block) -> Block:
    """The block with its computed properties at their defaults (they are the simulator's to set)."""
    return make_block(block.id, **{name: value for name, value in block.props if name not in COMPUTED})


def parse_block(text: str) -> Block:
    """``minecraft:id[prop=value,...]`` (the namespace may be left out) as a Block."""
    match = _BLOCK.fullmatch(text)
    if match is None:
        raise UserError(f"cannot read block {text!r}; write it like minecraft:redstone_repeater[facing=west,delay=2]")
    props: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (match.group(2) or "").split(","))):
        name, equals, value = part.partition("=")
        if not equals:
            raise UserError(f"block {text!r}: property {part!r} needs a value (name=value)")
        props[name.strip()] = value.strip()
    return make_block(match.group(1), **props)


def offset(pos: Pos, direction: str) -> Pos:
    """The neighbour of ``pos`` in ``direction``."""
    dx, dy, dz = DIRECTIONS[direction]
    return (pos[0] + dx, pos[1] + dy, pos[2] + dz)
