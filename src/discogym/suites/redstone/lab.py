"""The task lab: a flat world with a stone floor and a bounded build region, as in SciCrafter.

The paper's lab is a flat, empty world; the build region is the radius-10 cube around the anchor (0,4,0).
Ours: a stone floor one block below the anchor (y=3) under the cube's footprint, and the region is the part
of the cube on and above the floor's top (|x| <= 10, |z| <= 10, 4 <= y <= 14). The floor is the ground, not
part of a device: it cannot be edited and is left out of device files, scans and checks.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from discogym.suites.redstone.blocks import BUTTON, LAMP, STONE, Block, Pos, make_block
from discogym.suites.redstone.world import World, format_pos, read_blocks

ANCHOR: Pos = (0, 4, 0)
RADIUS = 10
FLOOR = make_block(STONE)


@dataclass(frozen=True)
class Region:
    """The build region: the cube of ``radius`` around ``anchor``, from the anchor's height up."""

    anchor: Pos = ANCHOR
    radius: int = RADIUS

    @property
    def floor_y(self) -> int:
        """The height of the floor's blocks (one below the anchor)."""
        return self.anchor[1] - 1

    def contains(self, pos: Pos) -> bool:
        """Whether a device block may stand at ``pos``."""
        ax, ay, az = self.anchor
        x, y, z = pos
        return abs(x - ax) <= self.radius and abs(z - az) <= self.radius and ay <= y <= ay + self.radius

    def describe(self) -> str:
        ax, ay, az = self.anchor
        r = self.radius
        return f"x {ax - r}..{ax + r}, y {ay}..{ay + r}, z {az - r}..{az + r}"

    def floor(self) -> dict[Pos, Block]:
        """The floor's stone blocks under the region's footprint."""
        ax, _, az = self.anchor
        r = self.radius
        y = self.floor_y
        return {(x, y, z): FLOOR for x in range(ax - r, ax + r + 1) for z in range(az - r, az + r + 1)}

    def is_floor(self, pos: Pos) -> bool:
        """Whether ``pos`` is one of the floor's blocks."""
        ax, _, az = self.anchor
        x, y, z = pos
        return y == self.floor_y and abs(x - ax) <= self.radius and abs(z - az) <= self.radius

    def outside(self, positions: Iterable[Pos]) -> list[Pos]:
        """The positions that are not in the region, sorted."""
        return sorted(pos for pos in positions if not self.contains(pos))


LAB = Region()


def lab_world(device: Mapping[Pos, Block], region: Region = LAB) -> World:
    """The floor with ``device`` on it (a device block on a floor position replaces the floor block)."""
    return World({**region.floor(), **device})


def device_of(world: World, region: Region = LAB) -> dict[Pos, Block]:
    """A world's blocks other than the floor."""
    return {pos: block for pos, block in world if not (region.is_floor(pos) and block == FLOOR)}


def device_text(device: Mapping[Pos, Block]) -> str:
    """A device in the world line format, sorted by position (the floor left out)."""
    return "".join(f"{x} {y} {z} {block}\n" for (x, y, z), block in sorted(device.items()))


def read_device(path: Path, region: Region = LAB) -> dict[Pos, Block]:
    """A device file (a world file without the floor; a floor in it is ignored). Placement rules are checked
    with the floor in place."""
    blocks = read_blocks(path)
    return device_of(lab_world({pos: b for pos, b in blocks.items() if not region.is_floor(pos)}, region), region)


def positions_of(device: Mapping[Pos, Block], block_id: str) -> list[Pos]:
    """Where the device has blocks of ``block_id``, sorted."""
    return sorted(pos for pos, block in device.items() if block.id == block_id)


def lamps_of(device: Mapping[Pos, Block]) -> list[Pos]:
    """The device's lamps, sorted."""
    return positions_of(device, LAMP)


def the_button(device: Mapping[Pos, Block]) -> Pos | str:
    """The device's only button, or why there is not exactly one."""
    buttons = positions_of(device, BUTTON)
    if len(buttons) == 1:
        return buttons[0]
    if not buttons:
        return "the device has no stone_button"
    return f"the device has {len(buttons)} stone_buttons ({', '.join(map(format_pos, buttons))}); it needs one"
