"""The static structure of a running world: which block is where, and who reads and notifies whom.

A :class:`Topology` holds the placed blocks (their kinds and placed properties) and derives from them, on
demand and cached until the next edit, everything the rules look up but never change: each block's occupied
neighbours, dust shapes and the dust each dust block reads, dust networks, and the components a change
notifies. It depends only on which blocks are where, never on power, so both engine backends share it: the
Python rules read it directly and the compiled core receives it as flat arrays.
"""

import functools
from collections.abc import Mapping
from typing import Final, NamedTuple

from discogym.suites.redstone.blocks import (
    BUTTON,
    COMPONENTS,
    CONDUCTORS,
    DIRECTIONS,
    GLASS,
    HORIZONTAL,
    LAMP,
    OPPOSITE,
    REPEATER,
    STONE,
    TORCH,
    WALL_TORCH,
    WIRE,
    Block,
    Pos,
    offset,
    placed_part,
)
from discogym.suites.redstone.world import support_of

# Minecraft's neighbour update order, and the order in which a change reaches its neighbours' neighbours.
UPDATE_ORDER: Final = ("west", "east", "down", "up", "north", "south")
SECOND_RING_ORDER: Final = ("down", "up", "north", "south", "west", "east")


def _ring_offsets() -> tuple[Pos, ...]:
    seen: dict[Pos, None] = {}
    for name in UPDATE_ORDER:
        seen[DIRECTIONS[name]] = None
    for first in SECOND_RING_ORDER:
        fx, fy, fz = DIRECTIONS[first]
        for second in UPDATE_ORDER:
            sx, sy, sz = DIRECTIONS[second]
            seen[(fx + sx, fy + sy, fz + sz)] = None
    seen.pop((0, 0, 0), None)
    return tuple(seen)


RING: Final = _ring_offsets()  # the 24 positions within Manhattan distance 2, in notification order


def add(pos: Pos, delta: Pos) -> Pos:
    """``pos`` moved by ``delta``."""
    return (pos[0] + delta[0], pos[1] + delta[1], pos[2] + delta[2])


def bool_text(value: bool) -> str:
    """A boolean as a block-state value."""
    return "true" if value else "false"


class WireShape(NamedTuple):
    """What a dust block's neighbours make of it."""

    points: frozenset[str]  # the horizontal sides it powers
    connections: dict[str, str]  # its north/east/south/west properties: none, side or up
    reads: tuple[Pos, ...]  # the dust it reads power from (beside it, and up or down a step)


class Topology:
    """The placed blocks of a running world and the structure derived from them.

    ``kind``, ``static``, ``facing``, ``support_side`` and ``delay_gt`` are the placed blocks; the methods
    answer from caches that :meth:`place`, :meth:`remove` and :meth:`invalidate` keep right. The mappings are
    never replaced, only changed in place, so a reader may keep a reference to them.
    """

    def __init__(self) -> None:
        self.kind: dict[Pos, str] = {}  # each block's id
        self.static: dict[Pos, Block] = {}  # each block with its placed (non-computed) properties
        # Placed properties read on every update, kept apart from the Block objects for speed.
        self.facing: dict[Pos, str] = {}  # repeaters, wall torches and buttons
        self.support_side: dict[Pos, str] = {}  # the side of a torch or button where its support is
        self.delay_gt: dict[Pos, int] = {}  # a repeater's delay in game ticks
        self._wires: dict[Pos, WireShape] = {}
        self._readers: dict[Pos, list[Pos]] | None = None
        self._networks: dict[Pos, tuple[Pos, ...]] = {}
        self._around: dict[Pos, tuple[Pos, ...]] = {}
        self._sides: dict[Pos, tuple[tuple[Pos, str], ...]] = {}
        self._dust_taps: dict[Pos, tuple[tuple[Pos, str], ...]] = {}

    # ----------------------------------------------------------------------------------------------
    # Placing and removing

    def place(self, pos: Pos, block: Block) -> None:
        """Record ``block`` (not air) at ``pos``; call :meth:`invalidate` once the edit is complete."""
        kind = block.id
        self.kind[pos] = kind
        self.static[pos] = static = _placed_part(block)
        if kind in (REPEATER, WALL_TORCH, BUTTON):
            self.facing[pos] = static.get("facing")
        if kind == REPEATER:
            self.delay_gt[pos] = 2 * int(static.get("delay"))
        support = support_of(pos, static)
        if kind in (TORCH, WALL_TORCH, BUTTON) and support is not None:
            self.support_side[pos] = next(name for name, d in DIRECTIONS.items() if add(pos, d) == support)

    def remove(self, pos: Pos) -> None:
        """Forget the block at ``pos`` (nothing happens where there is none)."""
        for table in (self.kind, self.static, self.facing, self.support_side, self.delay_gt):
            table.pop(pos, None)

    def invalidate(self) -> None:
        """Drop everything derived from the blocks (after an edit)."""
        self._wires.clear()
        self._readers = None
        self._networks.clear()
        self._around.clear()
        self._sides.clear()
        self._dust_taps.clear()

    # ----------------------------------------------------------------------------------------------
    # Neighbours

    def neighbours(self, pos: Pos) -> tuple[tuple[Pos, str], ...]:
        """The occupied neighbours of ``pos``, each with the side of it that faces ``pos``."""
        found = self._sides.get(pos)
        if found is None:
            x, y, z = pos
            found = tuple(
                ((x + dx, y + dy, z + dz), OPPOSITE[name])
                for name, (dx, dy, dz) in DIRECTIONS.items()
                if (x + dx, y + dy, z + dz) in self.kind
            )
            self._sides[pos] = found
        return found

    def non_dust_neighbours(self, pos: Pos) -> tuple[tuple[Pos, str], ...]:
        """:meth:`neighbours` without the dust (what a dust block takes power from directly)."""
        found = self._dust_taps.get(pos)
        if found is None:
            found = self._dust_taps[pos] = tuple(n for n in self.neighbours(pos) if self.kind[n[0]] != WIRE)
        return found

    def components_around(self, centre: Pos) -> tuple[Pos, ...]:
        """The components within Manhattan distance 2 of ``centre``, in notification order."""
        found = self._around.get(centre)
        if found is None:
            x, y, z = centre
            kind = self.kind
            found = tuple(
                (x + dx, y + dy, z + dz) for dx, dy, dz in RING if kind.get((x + dx, y + dy, z + dz)) in COMPONENTS
            )
            self._around[centre] = found
        return found

    # ----------------------------------------------------------------------------------------------
    # Dust shape and networks

    def wire(self, pos: Pos) -> WireShape:
        """The shape of the dust block at ``pos``."""
        cached = self._wires.get(pos)
        if cached is None:
            cached = self._wires[pos] = self._compute_wire(pos)
        return cached

    def _compute_wire(self, pos: Pos) -> WireShape:
        kind = self.kind
        above = offset(pos, "up")
        open_above = kind.get(above) not in CONDUCTORS
        shape: dict[str, str] = {}
        reads: list[Pos] = []
        for side in HORIZONTAL:
            beside = offset(pos, side)
            beside_kind = kind.get(beside)
            beside_conducts = beside_kind in CONDUCTORS
            up = offset(beside, "up")
            down = offset(beside, "down")
            connection = "none"
            if open_above and beside_kind in (STONE, LAMP, GLASS) and kind.get(up) == WIRE:
                connection = "up"
            elif self._connects_to(beside, side) or (not beside_conducts and kind.get(down) == WIRE):
                connection = "side"
            shape[side] = connection
            if beside_kind == WIRE:
                reads.append(beside)
            if beside_conducts and open_above and kind.get(up) == WIRE:
                reads.append(up)
            elif not beside_conducts and kind.get(down) == WIRE:
                reads.append(down)
        connected = [side for side in HORIZONTAL if shape[side] != "none"]
        if not connected:
            points = frozenset(HORIZONTAL)
            shape = dict.fromkeys(HORIZONTAL, "side")
        elif len(connected) == 1:  # a line through: the far side points on too
            points = frozenset({connected[0], OPPOSITE[connected[0]]})
            shape[OPPOSITE[connected[0]]] = "side"
        else:
            points = frozenset(connected)
        return WireShape(points, shape, tuple(reads))

    def _connects_to(self, pos: Pos, side: str) -> bool:
        kind = self.kind.get(pos)
        if kind == WIRE:
            return True
        if kind == REPEATER:
            return self.facing[pos] in (side, OPPOSITE[side])
        return kind in (TORCH, WALL_TORCH, BUTTON)

    def dust_readers(self) -> Mapping[Pos, list[Pos]]:
        """For every dust block, the dust that reads power from it (in position order)."""
        if self._readers is None:
            readers: dict[Pos, list[Pos]] = {pos: [] for pos, kind in self.kind.items() if kind == WIRE}
            for pos in sorted(readers):
                for source in self.wire(pos).reads:
                    readers[source].append(pos)
            self._readers = readers
        return self._readers

    def network(self, start: Pos) -> tuple[Pos, ...]:
        """The dust connected to ``start`` by reading in either direction, sorted."""
        cached = self._networks.get(start)
        if cached is not None:
            return cached
        readers = self.dust_readers()
        seen = {start}
        todo = [start]
        while todo:
            pos = todo.pop()
            for other in (*self.wire(pos).reads, *readers[pos]):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        network = tuple(sorted(seen))
        for pos in network:
            self._networks[pos] = network
        return network

    # ----------------------------------------------------------------------------------------------
    # State codes

    def block_with(self, pos: Pos, code: int) -> Block:
        """The block at ``pos`` with the computed state ``code``: a dust block's power, or for the others
        lit/powered + 2 x locked (the form in which both backends record changes)."""
        kind = self.kind[pos]
        base = self.static[pos]
        if kind == WIRE:
            return base.with_props(power=str(code), **self.wire(pos).connections)
        on = bool_text(bool(code & 1))
        if kind == REPEATER:
            return base.with_props(powered=on, locked=bool_text(bool(code & 2)))
        return base.with_props(**{"powered" if kind == BUTTON else "lit": on})


@functools.cache
def _placed_part(block: Block) -> Block:
    return placed_part(block)  # cached: a world repeats the same few blocks, and loading is on the hot path
