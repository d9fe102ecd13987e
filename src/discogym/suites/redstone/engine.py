"""The redstone engine: Java Edition 1.21 behaviour for the palette, tick by tick, deterministic.

Time is counted in game ticks (gt). ``state[t]`` is the world after tick ``t``'s scheduled ticks and the
inputs given at ``t``. Each tick runs the scheduled ticks that are due, ordered by priority and then by the
order they were scheduled; a position has at most one pending tick; a tick whose block changed type is
skipped. Priorities: -3 a repeater whose front is a repeater not pointing back, -2 a repeater turning off,
-1 other repeater ticks, 0 torches, lamps and buttons.

A state change notifies every component within Manhattan distance 2 (what Minecraft's neighbour updates
reach for these blocks), depth first, in a fixed order of offsets, so the result never depends on the order
in which blocks were placed. Dust settles at once: when a dust block is notified, its whole network is
recomputed to the fixed point ``power = max(source, strongest dust it reads - 1)``.

Two backends run these rules: this module's Python code, the reference, and a compiled core (``_core.c``,
through :mod:`discogym.suites.redstone.compiled`) that mirrors it function by function and is used when it
was built. Either gives the same trace, change for change; the tests run circuits through both.
"""

import functools
import heapq
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Literal, cast

from discogym.core.errors import UserError
from discogym.suites.redstone.blocks import (
    AIR,
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
from discogym.suites.redstone.compiled import Core, TraceChunk, available
from discogym.suites.redstone.world import World, format_pos, support_of

Backend = Literal["auto", "compiled", "python"]
BACKEND_VARIABLE: Final = "DISCOGYM_REDSTONE_BACKEND"

BUTTON_TICKS: Final = 20
TORCH_DELAY: Final = 2
LAMP_OFF_DELAY: Final = 4
BURNOUT_WINDOW: Final = 60
BURNOUT_TOGGLES: Final = 8
BURNOUT_RETRY: Final = 160
SETTLE_LIMIT: Final = 1000  # ticks run at load to reach a steady state (clocks never get there)

# Minecraft's neighbour update order, and the order in which a change reaches its neighbours' neighbours.
UPDATE_ORDER = ("west", "east", "down", "up", "north", "south")
SECOND_RING_ORDER = ("down", "up", "north", "south", "west", "east")


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


@dataclass(frozen=True)
class Change:
    """One block-state change at a game tick."""

    tick: int
    pos: Pos
    before: Block
    after: Block


@dataclass(order=True)
class _Scheduled:
    due: int
    priority: int
    order: int
    pos: Pos


def _add(pos: Pos, delta: Pos) -> Pos:
    return (pos[0] + delta[0], pos[1] + delta[1], pos[2] + delta[2])


class Simulator:
    """A world running under the redstone rules. Build it from a :class:`World`; press buttons, step ticks,
    read blocks and the trace of every change.

    ``backend``: ``"compiled"`` runs ticks in the compiled core, ``"python"`` in this module (the reference),
    ``"auto"`` (the default) what ``$DISCOGYM_REDSTONE_BACKEND`` names, else the compiled core where it was
    built."""

    def __init__(self, world: World, *, settle: bool = True, backend: Backend = "auto") -> None:
        self.backend = _choose_backend(backend)
        self.kind: dict[Pos, str] = {}
        self.static: dict[Pos, Block] = {}  # each block with its placed (non-computed) properties
        self._on: dict[Pos, bool] = {}  # lamp/torch lit, repeater/button powered
        self._power: dict[Pos, int] = {}
        self._locked: dict[Pos, bool] = {}
        # Placed properties read on every update, kept apart from the Block objects for speed.
        self._facing: dict[Pos, str] = {}
        self._support_side: dict[Pos, str] = {}  # the side of a torch or button where its support is
        self._delay_gt: dict[Pos, int] = {}  # a repeater's delay in game ticks
        self.time = 0
        self._trace: list[Change] = []
        self._raw: list[tuple[int, Pos, int, int]] = []  # (tick, pos, state code before, after), not yet Changes
        self._recording = False
        self._queue: list[_Scheduled] = []
        self._pending: set[Pos] = set()
        self._running: set[Pos] = set()
        self._order = 0
        self._toggles: list[tuple[int, Pos]] = []
        self._wire_cache: dict[Pos, tuple[frozenset[str], dict[str, str], tuple[Pos, ...]]] = {}
        self._readers: dict[Pos, list[Pos]] | None = None
        self._networks: dict[Pos, tuple[Pos, ...]] = {}
        self._around: dict[Pos, tuple[Pos, ...]] = {}  # components within distance 2, in notification order
        self._sides: dict[Pos, tuple[tuple[Pos, str], ...]] = {}  # occupied neighbours and the side facing back
        self._dust_taps: dict[Pos, tuple[tuple[Pos, str], ...]] = {}  # a dust block's neighbours other than dust
        # A dust network needs settling again only after some other component changed (a new "wave").
        self._wave = 0
        self._settled_in: dict[Pos, int] = {}
        # With the compiled backend the core holds the running state; the maps above are brought up to date
        # from it when Python reads them (``_core_ahead``), and its trace arrives in chunks. The core is built
        # when ticks are to run and dropped by an edit, so a run of edits with nothing scheduled costs nothing.
        self._core: Core | None = None
        self._core_ahead = False
        self._chunks: list[TraceChunk] = []
        self._world = World(dict(world.blocks))  # the placed blocks, kept for the placement rules of edits
        for pos, block in world:
            self._place(pos, block)
        self._refresh_topology()
        if settle:
            self.settle()
        self._recording = True
        if self._core is not None:
            self._core.set_recording(True)

    def _running_core(self) -> Core:
        """The compiled core, built from the current state if an edit dropped it."""
        if self._core is None:
            self._core = Core(self)
        return self._core

    def _sync(self) -> None:
        """Bring the Python state up to date with the compiled core."""
        core = self._core
        if core is None or not self._core_ahead:
            return
        self._core_ahead = False
        self.time = core.time
        core.pull(self._power, self._on, self._locked)
        entries, self._toggles, self._order = core.schedule()
        self._queue = [_Scheduled(*entry) for entry in entries]
        heapq.heapify(self._queue)
        self._pending = {entry.pos for entry in self._queue}
        self._settled_in.clear()  # the core settled dust this side has not seen
        self._take_chunk()

    def _take_chunk(self) -> None:
        if self._core is not None and self._core.trace_length():
            self._chunks.append(self._core.take_trace())

    @property
    def on(self) -> Mapping[Pos, bool]:
        """Whether each lamp and torch is lit, each repeater and button powered."""
        self._sync()
        return self._on

    @property
    def power(self) -> Mapping[Pos, int]:
        """The power level of each dust block."""
        self._sync()
        return self._power

    @property
    def locked(self) -> Mapping[Pos, bool]:
        """Whether each repeater is locked."""
        self._sync()
        return self._locked

    # ----------------------------------------------------------------------------------------------
    # Reading the world

    def block(self, pos: Pos) -> Block:
        """The block at ``pos`` with its current computed properties (air where there is nothing)."""
        kind = self.kind.get(pos)
        if kind is None:
            return Block(AIR)
        self._sync()
        base = self.static[pos]
        if kind == WIRE:
            shape = self._wire(pos)[1]
            return base.with_props(power=str(self._power[pos]), **shape)
        if kind in (LAMP, TORCH, WALL_TORCH):
            return base.with_props(lit=_bool(self._on[pos]))
        if kind == REPEATER:
            return base.with_props(powered=_bool(self._on[pos]), locked=_bool(self._locked[pos]))
        if kind == BUTTON:
            return base.with_props(powered=_bool(self._on[pos]))
        return base

    def _code(self, pos: Pos) -> int:
        """The computed part of a block's state as a small integer: dust power, or lit/powered + 2 x locked."""
        kind = self.kind.get(pos)
        if kind == WIRE:
            return self._power[pos]
        if pos in self._on:
            return int(self._on[pos]) + 2 * int(self._locked.get(pos, False))
        return 0

    def _block_with(self, pos: Pos, code: int) -> Block:
        kind = self.kind[pos]
        base = self.static[pos]
        if kind == WIRE:
            return base.with_props(power=str(code), **self._wire(pos)[1])
        on = _bool(bool(code & 1))
        if kind == REPEATER:
            return base.with_props(powered=on, locked=_bool(bool(code & 2)))
        return base.with_props(**{"powered" if kind == BUTTON else "lit": on})

    @property
    def trace(self) -> list[Change]:
        """Every block-state change so far, in the order it happened."""
        self._flush_trace()
        return self._trace

    def _flush_trace(self) -> None:
        for tick, pos, before, after in self._raw:
            self._trace.append(Change(tick, pos, self._block_with(pos, before), self._block_with(pos, after)))
        self._raw.clear()
        self._take_chunk()
        for chunk in self._chunks:
            changes = zip(chunk.ticks.tolist(), chunk.indices.tolist(), chunk.codes.tolist(), strict=True)
            for tick, index, codes in changes:
                pos = chunk.positions[index]
                old, new = self._block_with(pos, codes >> 8), self._block_with(pos, codes & 255)
                self._trace.append(Change(tick, pos, old, new))
        self._chunks.clear()

    def snapshot(self) -> World:
        """The world as it is now, computed properties included."""
        return World({pos: self.block(pos) for pos in sorted(self.kind)})

    # ----------------------------------------------------------------------------------------------
    # Inputs and time

    def press(self, pos: Pos) -> bool:
        """Press the button at ``pos`` (an input between ticks); False if it was already on."""
        if self.kind.get(pos) != BUTTON:
            raise UserError(f"there is no stone_button at {format_pos(pos)} to press")
        if self.backend == "compiled":
            self._core_ahead = True
            return self._running_core().press(pos)
        if self._on[pos]:
            return False
        self._set_on(pos, True)
        self._schedule(pos, BUTTON_TICKS, 0)
        return True

    def step(self) -> None:
        """Advance one game tick and run the scheduled ticks that are due."""
        if self.backend == "compiled":
            self._advance(1)
            return
        self.time += 1
        due: list[_Scheduled] = []
        while self._queue and self._queue[0].due <= self.time:
            entry = heapq.heappop(self._queue)
            self._pending.discard(entry.pos)
            due.append(entry)
        self._running = {entry.pos for entry in due}
        for entry in due:  # already in (due, priority, order) order
            self._running.discard(entry.pos)
            self._run_tick(entry.pos)
        self._running = set()

    def run(self, ticks: int, presses: Mapping[int, Iterable[Pos]] | None = None) -> None:
        """Run ``ticks`` more game ticks; ``presses`` maps a tick (absolute) to the buttons pressed at it."""
        presses = presses or {}
        end = self.time + ticks
        for pos in presses.get(self.time, ()):
            self.press(pos)
        for when in sorted(t for t in presses if self.time < t <= end):
            self._advance(when - self.time)
            for pos in presses[when]:
                self.press(pos)
        self._advance(end - self.time)

    def _advance(self, ticks: int) -> None:
        if self.backend == "python":
            for _ in range(ticks):
                self.step()
        elif ticks > 0:
            self._running_core().run(ticks)
            self._core_ahead = True
            self.time += ticks

    def settle(self) -> None:
        """Bring a freshly loaded world to its steady state (untraced), then call that tick 0."""
        if self.backend == "compiled":
            self._running_core().settle(SETTLE_LIMIT)
            self._core_ahead = True
            self.time = 0
            return
        for pos in sorted(self.kind):
            self._notify_one(pos)
        for _ in range(SETTLE_LIMIT):
            if not self._queue:
                break
            self.step()
        shift = self.time
        self.time = 0
        self._queue = [_Scheduled(e.due - shift, e.priority, e.order, e.pos) for e in self._queue]
        heapq.heapify(self._queue)
        self._toggles = [(when - shift, pos) for when, pos in self._toggles]

    def run_until_quiet(self, limit: int, at_least: int = 0, chunk: int = 20) -> None:
        """Run in chunks of ``chunk`` ticks until nothing is scheduled and ``at_least`` ticks have passed, or
        ``limit`` ticks (a clock is never quiet)."""
        start = self.time
        while self.time - start < limit and (self.pending or self.time - start < at_least):
            self.run(min(chunk, limit - (self.time - start)))

    @property
    def pending(self) -> int:
        """How many scheduled ticks are waiting."""
        self._sync()
        return len(self._queue)

    # ----------------------------------------------------------------------------------------------
    # Editing

    def set_block(self, pos: Pos, block: Block) -> list[Pos]:
        """Place or remove (air) a block while the world runs, as a player would; returns the positions of
        components that lost their support and were removed."""
        self._sync()
        self._flush_trace()  # raw entries read dust shapes, which an edit may change
        dropped = self._world.place(pos, block)
        edited = sorted({pos, *dropped})
        nearby = sorted({_add(p, d) for p in edited for d in RING} | set(edited))
        before = {p: self.block(p) for p in nearby}
        for gone in edited:
            self._remove(gone)
        if block.id != AIR:
            self._place(pos, block)
        self._refresh_topology()
        for changed in nearby:
            after = self.block(changed)
            if after != before[changed] and self._recording:
                self._trace.append(Change(self.time, changed, before[changed], after))
        self._core = None  # the edit's own updates run here; the next ticks rebuild the core
        for changed in edited:
            self._notify_one(changed)
            self._notify_around(changed)
        return dropped

    def _place(self, pos: Pos, block: Block) -> None:
        kind = block.id
        if kind == AIR:
            return
        self.kind[pos] = kind
        self.static[pos] = static = _static_part(block)
        if kind in (REPEATER, WALL_TORCH, BUTTON):
            self._facing[pos] = static.get("facing")
        if kind == REPEATER:
            self._delay_gt[pos] = 2 * int(static.get("delay"))
        support = support_of(pos, static)
        if kind in (TORCH, WALL_TORCH, BUTTON) and support is not None:
            self._support_side[pos] = next(name for name, d in DIRECTIONS.items() if _add(pos, d) == support)
        if kind == WIRE:
            self._power[pos] = 0
        elif kind in (LAMP, REPEATER, BUTTON):
            self._on[pos] = False
            if kind == REPEATER:
                self._locked[pos] = False
        elif kind in (TORCH, WALL_TORCH):
            self._on[pos] = True

    def _remove(self, pos: Pos) -> None:
        self.kind.pop(pos, None)
        self.static.pop(pos, None)
        self._on.pop(pos, None)
        self._power.pop(pos, None)
        self._locked.pop(pos, None)
        self._facing.pop(pos, None)
        self._support_side.pop(pos, None)
        self._delay_gt.pop(pos, None)

    def _refresh_topology(self) -> None:
        self._wire_cache.clear()
        self._readers = None
        self._networks.clear()
        self._around.clear()
        self._sides.clear()
        self._dust_taps.clear()
        self._wave += 1

    # ----------------------------------------------------------------------------------------------
    # Power

    def _neighbours(self, pos: Pos) -> tuple[tuple[Pos, str], ...]:
        """The occupied neighbours of ``pos``, each with the side of it that faces ``pos`` (cached)."""
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

    def _conductor_power(self, pos: Pos, for_dust: bool) -> int:
        """The strongest strong power any neighbour drives into a conductor (dust counts except for dust)."""
        best = 0
        for source, side in self._neighbours(pos):
            power = self._emitted(source, side, strong=True, for_dust=for_dust)
            if power > best:
                if power >= 15:
                    return 15
                best = power
        return best

    def _emitted(self, source: Pos, towards: str, *, strong: bool, for_dust: bool) -> int:
        """The power the component at ``source`` gives the neighbour on its ``towards`` side."""
        kind = self.kind[source]
        if kind == WIRE:
            if for_dust:
                return 0
            power = self._power[source]
            if power == 0 or towards == "up":
                return 0
            return power if towards == "down" or towards in self._wire(source)[0] else 0
        if not self._on.get(source, False):
            return 0
        if kind == REPEATER:
            return 15 if towards == OPPOSITE[self._facing[source]] else 0
        if kind in (TORCH, WALL_TORCH):
            if strong:
                return 15 if towards == "up" else 0
            return 0 if towards == self._support_side[source] else 15
        if kind == BUTTON:
            if strong:
                return 15 if towards == self._support_side[source] else 0
            return 15
        return 0

    def _signal_from(self, neighbour: Pos, towards: str, for_dust: bool = False) -> int:
        """What a block reading its neighbour gets from it: a conductor's strong power, or an emitter's."""
        kind = self.kind.get(neighbour)
        if kind is None or kind == GLASS:
            return 0
        if kind in CONDUCTORS:
            return self._conductor_power(neighbour, for_dust)
        return self._emitted(neighbour, towards, strong=False, for_dust=for_dust)

    def _has_neighbor_signal(self, pos: Pos) -> bool:
        return any(self._signal_from(source, side) > 0 for source, side in self._neighbours(pos))

    def _torch_powered(self, pos: Pos) -> bool:
        side = self._support_side[pos]
        return self._signal_from(offset(pos, side), OPPOSITE[side]) > 0

    def _repeater_input(self, pos: Pos) -> int:
        facing = self._facing[pos]
        back = offset(pos, facing)
        signal = self._signal_from(back, OPPOSITE[facing])
        if signal < 15 and self.kind.get(back) == WIRE:
            signal = max(signal, self._power[back])
        return signal

    def _repeater_locked(self, pos: Pos) -> bool:
        for side in _sides(self._facing[pos]):
            neighbour = offset(pos, side)
            # a powered repeater whose output (the side opposite its facing) points into this one
            is_repeater = self.kind.get(neighbour) == REPEATER
            if is_repeater and self._on[neighbour] and self._facing[neighbour] == side:
                return True
        return False

    # ----------------------------------------------------------------------------------------------
    # Dust shape and networks

    def _wire(self, pos: Pos) -> tuple[frozenset[str], dict[str, str], tuple[Pos, ...]]:
        """A dust block's pointing directions, its connection properties and the dust it reads power from."""
        cached = self._wire_cache.get(pos)
        if cached is None:
            cached = self._wire_cache[pos] = self._compute_wire(pos)
        return cached

    def _compute_wire(self, pos: Pos) -> tuple[frozenset[str], dict[str, str], tuple[Pos, ...]]:
        above = offset(pos, "up")
        open_above = self.kind.get(above) not in CONDUCTORS
        shape: dict[str, str] = {}
        reads: list[Pos] = []
        for side in HORIZONTAL:
            beside = offset(pos, side)
            beside_kind = self.kind.get(beside)
            beside_conducts = beside_kind in CONDUCTORS
            up = offset(beside, "up")
            down = offset(beside, "down")
            connection = "none"
            if open_above and beside_kind in (STONE, LAMP, GLASS) and self.kind.get(up) == WIRE:
                connection = "up"
            elif self._connects_to(beside, side) or (not beside_conducts and self.kind.get(down) == WIRE):
                connection = "side"
            shape[side] = connection
            if beside_kind == WIRE:
                reads.append(beside)
            if beside_conducts and open_above and self.kind.get(up) == WIRE:
                reads.append(up)
            elif not beside_conducts and self.kind.get(down) == WIRE:
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
        return points, shape, tuple(reads)

    def _connects_to(self, pos: Pos, side: str) -> bool:
        kind = self.kind.get(pos)
        if kind == WIRE:
            return True
        if kind == REPEATER:
            return self._facing[pos] in (side, OPPOSITE[side])
        return kind in (TORCH, WALL_TORCH, BUTTON)

    def _dust_readers(self) -> dict[Pos, list[Pos]]:
        if self._readers is None:
            readers: dict[Pos, list[Pos]] = {pos: [] for pos, kind in self.kind.items() if kind == WIRE}
            for pos in sorted(readers):
                for source in self._wire(pos)[2]:
                    readers[source].append(pos)
            self._readers = readers
        return self._readers

    def _network(self, start: Pos) -> tuple[Pos, ...]:
        """The dust connected to ``start`` by reading in either direction (cached until the world is edited)."""
        cached = self._networks.get(start)
        if cached is not None:
            return cached
        readers = self._dust_readers()
        seen = {start}
        todo = [start]
        while todo:
            pos = todo.pop()
            for other in (*self._wire(pos)[2], *readers[pos]):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        network = tuple(sorted(seen))
        for pos in network:
            self._networks[pos] = network
        return network

    def _settle_dust(self, start: Pos) -> list[Pos]:
        """Recompute the network's power; returns the dust whose power changed (already set and traced)."""
        network = self._network(start)
        for pos in network:
            self._settled_in[pos] = self._wave
        readers = self._dust_readers()
        best = {pos: self._dust_source(pos) for pos in network}
        if len(network) == 1:
            return self._apply_dust(best)
        # Spread power along the reading edges, strongest first (a block's power is final when it is taken).
        level = 15
        current = [pos for pos in network if best[pos] == 15]
        waiting = sorted((pos for pos in network if 1 < best[pos] < 15), key=best.__getitem__, reverse=True)
        next_waiting = 0
        while level > 1:
            following: list[Pos] = []
            for pos in current:
                if best[pos] != level:
                    continue
                for reader in readers[pos]:
                    if best[reader] < level - 1:
                        best[reader] = level - 1
                        following.append(reader)
            level -= 1
            while next_waiting < len(waiting) and best[waiting[next_waiting]] >= level:
                following.append(waiting[next_waiting])
                next_waiting += 1
            current = following
        return self._apply_dust(best)

    def _dust_source(self, pos: Pos) -> int:
        """The strongest power a dust block gets from anything but other dust."""
        source = 0
        for neighbour, side in self._non_dust_neighbours(pos):
            signal = self._signal_from(neighbour, side, for_dust=True)
            if signal > source:
                if signal >= 15:
                    return 15
                source = signal
        return source

    def _non_dust_neighbours(self, pos: Pos) -> tuple[tuple[Pos, str], ...]:
        found = self._dust_taps.get(pos)
        if found is None:
            found = self._dust_taps[pos] = tuple(n for n in self._neighbours(pos) if self.kind[n[0]] != WIRE)
        return found

    def _apply_dust(self, best: dict[Pos, int]) -> list[Pos]:
        changed = [pos for pos, power in best.items() if power != self._power[pos]]
        for pos in changed:
            before = self._power[pos]
            self._power[pos] = best[pos]
            self._record(pos, before)
        return changed

    # ----------------------------------------------------------------------------------------------
    # Updates and scheduled ticks

    def _notify_around(self, *centres: Pos) -> None:
        """Notify the components within distance 2 of each changed position, depth first."""
        if len(centres) == 1:
            targets: Iterable[Pos] = self._components_around(centres[0])
        else:
            targets = dict.fromkeys(target for centre in centres for target in self._components_around(centre))
        for target in targets:
            if target in self.kind:
                self._notify_one(target)

    def _components_around(self, centre: Pos) -> tuple[Pos, ...]:
        found = self._around.get(centre)
        if found is None:
            x, y, z = centre
            found = tuple(
                (x + dx, y + dy, z + dz) for dx, dy, dz in RING if self.kind.get((x + dx, y + dy, z + dz)) in COMPONENTS
            )
            self._around[centre] = found
        return found

    def _notify_one(self, pos: Pos) -> None:
        kind = self.kind.get(pos)
        if kind == WIRE:
            if self._settled_in.get(pos) == self._wave:  # nothing feeding it changed since it was settled
                return
            changed = self._settle_dust(pos)
            if changed:
                self._notify_around(*changed)
        elif kind == REPEATER:
            self._repeater_neighbor(pos)
        elif kind in (TORCH, WALL_TORCH):
            if self._on[pos] == self._torch_powered(pos) and pos not in self._running:
                self._schedule(pos, TORCH_DELAY, 0)
        elif kind == LAMP:
            lit, powered = self._on[pos], self._has_neighbor_signal(pos)
            if lit and not powered:
                self._schedule(pos, LAMP_OFF_DELAY, 0)
            elif powered and not lit:
                self._set_on(pos, True, notify=False)  # a lamp's light changes no power

    def _repeater_neighbor(self, pos: Pos) -> None:
        locked = self._repeater_locked(pos)
        if locked != self._locked[pos]:
            before = self._code(pos)
            self._locked[pos] = locked
            self._record(pos, before)
        if locked:
            return
        should = self._repeater_input(pos) > 0
        if self._on[pos] != should and pos not in self._running:
            self._schedule(pos, self._delay_gt[pos], self._repeater_priority(pos))

    def _repeater_priority(self, pos: Pos) -> int:
        facing = self._facing[pos]
        front = offset(pos, OPPOSITE[facing])
        if self.kind.get(front) == REPEATER and self._facing[front] != OPPOSITE[facing]:
            return -3
        return -2 if self._on[pos] else -1

    def _schedule(self, pos: Pos, delay: int, priority: int) -> None:
        if pos in self._pending:
            return
        self._order += 1
        self._pending.add(pos)
        heapq.heappush(self._queue, _Scheduled(self.time + delay, priority, self._order, pos))

    def _run_tick(self, pos: Pos) -> None:
        kind = self.kind.get(pos)
        if kind == REPEATER:
            self._repeater_tick(pos)
        elif kind in (TORCH, WALL_TORCH):
            self._torch_tick(pos)
        elif kind == LAMP:
            if self._on[pos] and not self._has_neighbor_signal(pos):
                self._set_on(pos, False, notify=False)
        elif kind == BUTTON and self._on[pos]:
            self._set_on(pos, False)

    def _repeater_tick(self, pos: Pos) -> None:
        if self._repeater_locked(pos):
            return
        should = self._repeater_input(pos) > 0
        if self._on[pos] and not should:
            self._set_on(pos, False)
        elif not self._on[pos]:
            self._set_on(pos, True)
            if not should:
                self._schedule(pos, self._delay_gt[pos], -3)

    def _torch_tick(self, pos: Pos) -> None:
        powered = self._torch_powered(pos)
        while self._toggles and self.time - self._toggles[0][0] > BURNOUT_WINDOW:
            self._toggles.pop(0)
        if self._on[pos]:
            if powered:
                self._set_on(pos, False)
                self._toggles.append((self.time, pos))
                if self._recent_toggles(pos) >= BURNOUT_TOGGLES:
                    self._schedule(pos, BURNOUT_RETRY, 0)
        elif not powered and self._recent_toggles(pos) < BURNOUT_TOGGLES:
            self._set_on(pos, True)

    def _recent_toggles(self, pos: Pos) -> int:
        return sum(1 for _, where in self._toggles if where == pos)

    def _set_on(self, pos: Pos, value: bool, *, notify: bool = True) -> None:
        before = self._code(pos)
        self._on[pos] = value
        self._record(pos, before)
        if notify:
            self._wave += 1
            self._notify_around(pos)

    def _record(self, pos: Pos, before: int) -> None:
        if self._recording:
            self._raw.append((self.time, pos, before, self._code(pos)))

    def changes_since(self, tick: int) -> Iterator[Change]:
        """The trace from ``tick`` on."""
        return (change for change in self.trace if change.tick >= tick)

    def change_count(self) -> int:
        """How many changes the trace holds (without building them)."""
        waiting = self._core.trace_length() if self._core is not None else 0
        return len(self._trace) + len(self._raw) + sum(map(len, self._chunks)) + waiting


def _choose_backend(backend: Backend) -> Literal["compiled", "python"]:
    if backend == "auto":
        named = os.environ.get(BACKEND_VARIABLE, "auto")
        if named not in ("auto", "compiled", "python"):
            raise UserError(f"${BACKEND_VARIABLE} is {named!r}; it must be auto, compiled or python")
        backend = cast(Backend, named)
    if backend == "python":
        return "python"
    if available():
        return "compiled"
    if backend == "compiled":
        raise UserError("the compiled redstone core is not built (reinstall discogym with a C compiler)")
    return "python"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _sides(facing: str) -> tuple[str, str]:
    index = HORIZONTAL.index(facing)
    return HORIZONTAL[(index + 1) % 4], HORIZONTAL[(index + 3) % 4]


@functools.cache
def _static_part(block: Block) -> Block:
    return placed_part(block)
