"""A world of palette blocks: placement rules, and reading and writing world files.

A world file lists one block per line, ``x y z minecraft:id[prop=value,...]`` (``#`` starts a comment), or
is YAML/JSON: a list of ``{"pos": [x, y, z], "block": "minecraft:..."}`` (or ``x``, ``y``, ``z`` keys), or
an object with such a list under ``blocks``.
"""

import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from discogym.core import UserError
from discogym.suites.redstone.blocks import (
    AIR,
    BUTTON,
    DIRECTIONS,
    OPPOSITE,
    REPEATER,
    SOLID,
    TORCH,
    WALL_TORCH,
    WIRE,
    Block,
    Pos,
    offset,
    parse_block,
)

NEEDS_FLOOR = frozenset({WIRE, REPEATER, TORCH})
# Limits on what a file may hold, so that a few bytes cannot ask for unbounded memory or time (docs/redstone.md):
MAX_COORD = 30_000_000  # |x|, |y|, |z|: Minecraft's world border
MAX_SIDE = 256  # blocks along each axis of a world's occupied box (the lab's devices span 21)
MAX_VOLUME = 2**21  # cells in that box (2,097,152, e.g. 256 x 32 x 256)


def support_of(pos: Pos, block: Block) -> Pos | None:
    """The block a component stands on or hangs from, or None for blocks that need no support."""
    if block.id in NEEDS_FLOOR:
        return offset(pos, "down")
    if block.id == WALL_TORCH:
        return offset(pos, OPPOSITE[block.get("facing")])
    if block.id == BUTTON:
        face = block.get("face")
        if face == "floor":
            return offset(pos, "down")
        if face == "ceiling":
            return offset(pos, "up")
        return offset(pos, OPPOSITE[block.get("facing")])
    return None


class World:
    """Blocks by position (air is absence). Placement checks that components have their support."""

    def __init__(self, blocks: Mapping[Pos, Block] | None = None) -> None:
        self.blocks: dict[Pos, Block] = {}
        for pos, block in sorted((blocks or {}).items()):
            if block.id != AIR:
                self.blocks[pos] = block
        for pos in sorted(self.blocks):
            self.check_support(pos, self.blocks[pos])

    def get(self, pos: Pos) -> Block | None:
        """The block at ``pos``, or None for air."""
        return self.blocks.get(pos)

    def check_support(self, pos: Pos, block: Block) -> None:
        """A UserError if ``block`` at ``pos`` would have nothing to stand on or hang from."""
        support = support_of(pos, block)
        if support is None:
            return
        below = self.blocks.get(support)
        if below is None or below.id not in SOLID:
            where = "on" if support[1] < pos[1] else "against"
            found = below.id if below is not None else "air"
            raise UserError(
                f"{block} at {format_pos(pos)} needs stone, glass or a lamp {where} {format_pos(support)}; "
                f"found {found}"
            )

    def place(self, pos: Pos, block: Block) -> list[Pos]:
        """Put ``block`` at ``pos`` (air removes); returns the positions of components that lost their support
        and were removed with it, as in the game (sorted). Nothing changes if the block itself has no support."""
        if block.id == AIR:
            self.blocks.pop(pos, None)
        else:
            self.check_support(pos, block)
            self.blocks[pos] = block
        return self._drop_unsupported(pos)

    def _drop_unsupported(self, changed: Pos) -> list[Pos]:
        """Remove what no longer has support after a change at ``changed``: only its neighbours can lose it,
        and then theirs."""
        dropped: list[Pos] = []
        todo = [changed]
        while todo:
            centre = todo.pop()
            for step in DIRECTIONS.values():
                pos = (centre[0] + step[0], centre[1] + step[1], centre[2] + step[2])
                block = self.blocks.get(pos)
                if block is None:
                    continue
                support = support_of(pos, block)
                if support is not None and self.blocks.get(support, Block(AIR)).id not in SOLID:
                    del self.blocks[pos]
                    dropped.append(pos)
                    todo.append(pos)
        return sorted(dropped)

    def __iter__(self) -> Iterator[tuple[Pos, Block]]:
        return iter(sorted(self.blocks.items()))

    def __len__(self) -> int:
        return len(self.blocks)

    def bounds(self) -> tuple[Pos, Pos]:
        """The smallest and largest corner of the occupied box."""
        if not self.blocks:
            return (0, 0, 0), (0, 0, 0)
        xs, ys, zs = zip(*self.blocks, strict=True)
        return (min(xs), min(ys), min(zs)), (max(xs), max(ys), max(zs))

    def to_text(self) -> str:
        """The world in the line format, sorted by position."""
        return "".join(f"{x} {y} {z} {block}\n" for (x, y, z), block in self)


def format_pos(pos: Pos) -> str:
    """``(1, 4, -2)`` -> ``1,4,-2``."""
    return ",".join(str(c) for c in pos)


def parse_pos(text: str) -> Pos:
    """``1,4,-2`` (or spaces) as a position."""
    parts = text.replace(",", " ").split()
    if len(parts) != 3:
        raise UserError(f"position {text!r} must be three integers X,Y,Z")
    try:
        x, y, z = (int(p) for p in parts)
    except ValueError:
        raise UserError(f"position {text!r} must be three integers X,Y,Z") from None
    if max(abs(x), abs(y), abs(z)) > MAX_COORD:
        raise UserError(f"position {text!r} is outside the world (coordinates are at most {MAX_COORD:,} from 0)")
    return (x, y, z)


def check_extent(positions: Collection[Pos], source: str) -> None:
    """A UserError if the box around ``positions`` has a side over :data:`MAX_SIDE` or more than
    :data:`MAX_VOLUME` cells (views and schematics are as large as that box)."""
    if not positions:
        return
    xs, ys, zs = zip(*positions, strict=True)
    size = (max(xs) - min(xs) + 1, max(ys) - min(ys) + 1, max(zs) - min(zs) + 1)
    if max(size) > MAX_SIDE or size[0] * size[1] * size[2] > MAX_VOLUME:
        raise UserError(
            f"{source}: the blocks span {size[0]}x{size[1]}x{size[2]}; a world spans at most {MAX_SIDE} blocks "
            f"along each axis and {MAX_VOLUME:,} cells in all"
        )


def _entries_from_lines(text: str, source: str) -> Iterator[tuple[Pos, Block]]:
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(maxsplit=3)
        if len(parts) != 4:
            raise UserError(f"{source}:{number}: expected 'x y z minecraft:id[...]', got {raw.strip()!r}")
        try:
            pos = parse_pos(" ".join(parts[:3]))
            yield pos, parse_block(parts[3])
        except UserError as err:
            raise UserError(f"{source}:{number}: {err}") from None


def _entries_from_data(document: Any, source: str) -> Iterator[tuple[Pos, Block]]:
    rows = document.get("blocks") if isinstance(document, dict) else document
    if not isinstance(rows, list):
        raise UserError(f"{source}: expected a list of blocks (or an object with 'blocks')")
    for number, row in enumerate(rows):
        if not isinstance(row, dict) or "block" not in row:
            raise UserError(f"{source}: block {number} must be an object with 'block' and 'pos' (or x, y, z)")
        try:
            coords = row["pos"] if "pos" in row else [row["x"], row["y"], row["z"]]
            pos = parse_pos(" ".join(str(c) for c in coords))
            yield pos, parse_block(str(row["block"]))
        except KeyError as err:
            raise UserError(f"{source}: block {number} has no {err}") from None
        except (UserError, TypeError) as err:
            raise UserError(f"{source}: block {number}: {err}") from None


def read_world(path: Path) -> World:
    """A world from a line, YAML or JSON file (by suffix; ``.txt`` or anything else is the line format)."""
    return World(read_blocks(path))


def read_blocks(path: Path) -> dict[Pos, Block]:
    """The blocks a world file lists, before any placement rule is checked."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(f"cannot read world {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise UserError(
            f"world {path} is not UTF-8 text (byte {err.start}): give a .txt, .json or .yaml file"
        ) from None
    return parse_blocks(text, path.name, path.suffix.lower())


def parse_world(text: str, source: str = "world", suffix: str = ".txt") -> World:
    """A world from text in the format the suffix names."""
    return World(parse_blocks(text, source, suffix))


def parse_blocks(text: str, source: str = "world", suffix: str = ".txt") -> dict[Pos, Block]:
    """The blocks listed in text of the format the suffix names (no placement rule checked)."""
    entries: Iterable[tuple[Pos, Block]]
    if suffix in (".json", ".yaml", ".yml"):
        try:
            document = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as err:
            raise UserError(f"{source} is not valid {suffix[1:].upper()}: {err}") from None
        except RecursionError:
            raise UserError(f"{source} is nested too deeply to be a world") from None
        entries = _entries_from_data(document, source)
    else:
        entries = _entries_from_lines(text, source)
    blocks: dict[Pos, Block] = {}
    for pos, block in entries:
        if pos in blocks:
            raise UserError(f"{source}: two blocks at {format_pos(pos)}")
        blocks[pos] = block
    check_extent(blocks, source)
    return blocks
