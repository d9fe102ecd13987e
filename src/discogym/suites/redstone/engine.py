"""The redstone engine: Java Edition 1.21 behaviour for the palette, tick by tick, deterministic.

Time is counted in game ticks (gt). ``state[t]`` is the world after tick ``t``'s scheduled ticks and the
inputs given at ``t``. :class:`Simulator` is the public face: build it from a world, press buttons, run
ticks, edit blocks, read blocks and the trace of every change. It is made of parts in their own modules:

- :mod:`~discogym.suites.redstone.topology`: the placed blocks and what they derive (neighbours, dust shapes
  and networks, who notifies whom), the same for both backends (``Simulator.topology``);
- :mod:`~discogym.suites.redstone.schedule`: scheduled ticks, and :class:`EngineState`, the running state
  (time, schedule, computed block states) one backend hands to the other (``Simulator.engine_state()``);
- :mod:`~discogym.suites.redstone.rules`: the components' rules in Python, the reference backend;
- :mod:`~discogym.suites.redstone.compiled`: the compiled core (``_core.c``), which mirrors the rules function
  by function and is built from the topology and an engine state.

Either backend gives the same trace, change for change; the tests run circuits through both.
"""

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Literal, cast

from discogym.core import UserError
from discogym.suites.redstone.blocks import AIR, BUTTON, LAMP, REPEATER, TORCH, WALL_TORCH, WIRE, Block, Pos
from discogym.suites.redstone.compiled import Core, TraceChunk, available
from discogym.suites.redstone.rules import Rules
from discogym.suites.redstone.schedule import EngineState
from discogym.suites.redstone.topology import RING, Topology, add, bool_text
from discogym.suites.redstone.world import World, format_pos

__all__ = ["BACKEND_VARIABLE", "SETTLE_LIMIT", "Backend", "Change", "Simulator"]

Backend = Literal["auto", "compiled", "python"]
BACKEND_VARIABLE: Final = "DISCOGYM_REDSTONE_BACKEND"
SETTLE_LIMIT: Final = 1000  # ticks run at load to reach a steady state (clocks never get there)


@dataclass(frozen=True)
class Change:
    """One block-state change at a game tick."""

    tick: int
    pos: Pos
    before: Block
    after: Block


class Simulator:
    """A world running under the redstone rules. Build it from a :class:`World`; press buttons, step ticks,
    read blocks and the trace of every change.

    ``backend``: ``"compiled"`` runs ticks in the compiled core, ``"python"`` in
    :mod:`~discogym.suites.redstone.rules` (the reference), ``"auto"`` (the default) what
    ``$DISCOGYM_REDSTONE_BACKEND`` names, else the compiled core where it was built.

    ``topology`` is the world's static structure and :meth:`engine_state` its running state: together, what
    a backend needs to run it."""

    def __init__(self, world: World, *, settle: bool = True, backend: Backend = "auto") -> None:
        self.backend = _choose_backend(backend)
        self.topology = Topology()
        self._rules = Rules(self.topology)
        self._trace: list[Change] = []
        # With the compiled backend the core holds the running state; the Python side is brought up to date
        # from it when it is read (``_core_ahead``), and its trace arrives in chunks. The core is built when
        # ticks are to run and dropped by an edit, so a run of edits with nothing scheduled costs nothing.
        self._core: Core | None = None
        self._core_ahead = False
        self._chunks: list[TraceChunk] = []
        self._world = World(dict(world.blocks))  # the placed blocks, kept for the placement rules of edits
        for pos, block in world:
            self._place(pos, block)
        self._refresh_topology()
        if settle:
            self.settle()
        self._rules.recording = True
        if self._core is not None:
            self._core.set_recording(True)

    # ----------------------------------------------------------------------------------------------
    # The state, for backends and readers

    def engine_state(self) -> EngineState:
        """A copy of the running state (time, schedule, computed block states): with :attr:`topology`,
        everything a backend needs to carry on from here."""
        self._sync()
        return self._rules.state()

    def _running_core(self) -> Core:
        """The compiled core, built from the current state if an edit dropped it."""
        if self._core is None:
            self._core = Core(self.topology, self._rules.state())
        return self._core

    def _sync(self) -> None:
        """Bring the Python state up to date with the compiled core."""
        core = self._core
        if core is None or not self._core_ahead:
            return
        self._core_ahead = False
        self._rules.restore(core.state())
        self._take_chunk()

    def _take_chunk(self) -> None:
        if self._core is not None and self._core.trace_length():
            self._chunks.append(self._core.take_trace())

    @property
    def time(self) -> int:
        """The game tick the world is at."""
        return self._rules.time

    @property
    def kind(self) -> Mapping[Pos, str]:
        """Each block's id, by position."""
        return self.topology.kind

    @property
    def static(self) -> Mapping[Pos, Block]:
        """Each block with its placed (non-computed) properties, by position."""
        return self.topology.static

    @property
    def on(self) -> Mapping[Pos, bool]:
        """Whether each lamp and torch is lit, each repeater and button powered."""
        self._sync()
        return self._rules.on

    @property
    def power(self) -> Mapping[Pos, int]:
        """The power level of each dust block."""
        self._sync()
        return self._rules.power

    @property
    def locked(self) -> Mapping[Pos, bool]:
        """Whether each repeater is locked."""
        self._sync()
        return self._rules.locked

    @property
    def pending(self) -> int:
        """How many scheduled ticks are waiting."""
        self._sync()
        return len(self._rules.schedule)

    # ----------------------------------------------------------------------------------------------
    # Reading the world

    def block(self, pos: Pos) -> Block:
        """The block at ``pos`` with its current computed properties (air where there is nothing)."""
        kind = self.topology.kind.get(pos)
        if kind is None:
            return Block(AIR)
        self._sync()
        rules = self._rules
        base = self.topology.static[pos]
        if kind == WIRE:
            return base.with_props(power=str(rules.power[pos]), **self.topology.wire(pos).connections)
        if kind in (LAMP, TORCH, WALL_TORCH):
            return base.with_props(lit=bool_text(rules.on[pos]))
        if kind == REPEATER:
            return base.with_props(powered=bool_text(rules.on[pos]), locked=bool_text(rules.locked[pos]))
        if kind == BUTTON:
            return base.with_props(powered=bool_text(rules.on[pos]))
        return base

    @property
    def trace(self) -> list[Change]:
        """Every block-state change so far, in the order it happened."""
        self._flush_trace()
        return self._trace

    def _flush_trace(self) -> None:
        block_with = self.topology.block_with
        raw = self._rules.raw
        for tick, pos, before, after in raw:
            self._trace.append(Change(tick, pos, block_with(pos, before), block_with(pos, after)))
        raw.clear()
        self._take_chunk()
        for chunk in self._chunks:
            changes = zip(chunk.ticks.tolist(), chunk.indices.tolist(), chunk.codes.tolist(), strict=True)
            for tick, index, codes in changes:
                pos = chunk.positions[index]
                self._trace.append(Change(tick, pos, block_with(pos, codes >> 8), block_with(pos, codes & 255)))
        self._chunks.clear()

    def snapshot(self) -> World:
        """The world as it is now, computed properties included."""
        return World({pos: self.block(pos) for pos in sorted(self.topology.kind)})

    def changes_since(self, tick: int) -> Iterator[Change]:
        """The trace from ``tick`` on."""
        return (change for change in self.trace if change.tick >= tick)

    def change_count(self) -> int:
        """How many changes the trace holds (without building them)."""
        waiting = self._core.trace_length() if self._core is not None else 0
        return len(self._trace) + len(self._rules.raw) + sum(map(len, self._chunks)) + waiting

    # ----------------------------------------------------------------------------------------------
    # Inputs and time

    def press(self, pos: Pos) -> bool:
        """Press the button at ``pos`` (an input between ticks); False if it was already on."""
        if self.topology.kind.get(pos) != BUTTON:
            raise UserError(f"there is no stone_button at {format_pos(pos)} to press")
        if self.backend == "compiled":
            self._core_ahead = True
            return self._running_core().press(pos)
        return self._rules.press(pos)

    def step(self) -> None:
        """Advance one game tick and run the scheduled ticks that are due."""
        if self.backend == "compiled":
            self._advance(1)
        else:
            self._rules.step()

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
                self._rules.step()
        elif ticks > 0:
            self._running_core().run(ticks)
            self._core_ahead = True
            self._rules.time += ticks  # the clock stays current; the rest of the state follows on reading

    def settle(self) -> None:
        """Bring a freshly loaded world to its steady state (untraced), then call that tick 0."""
        if self.backend == "compiled":
            self._running_core().settle(SETTLE_LIMIT)
            self._core_ahead = True
            self._rules.time = 0
        else:
            self._rules.settle(SETTLE_LIMIT)

    def run_until_quiet(self, limit: int, at_least: int = 0, chunk: int = 20) -> None:
        """Run in chunks of ``chunk`` ticks until nothing is scheduled and ``at_least`` ticks have passed, or
        ``limit`` ticks (a clock is never quiet)."""
        start = self.time
        while self.time - start < limit and (self.pending or self.time - start < at_least):
            self.run(min(chunk, limit - (self.time - start)))

    # ----------------------------------------------------------------------------------------------
    # Editing

    def set_block(self, pos: Pos, block: Block) -> list[Pos]:
        """Place or remove (air) a block while the world runs, as a player would; returns the positions of
        components that lost their support and were removed."""
        self._sync()
        self._flush_trace()  # raw entries read dust shapes, which an edit may change
        dropped = self._world.place(pos, block)
        edited = sorted({pos, *dropped})
        nearby = sorted({add(p, d) for p in edited for d in RING} | set(edited))
        before = {p: self.block(p) for p in nearby}
        for gone in edited:
            self._remove(gone)
        if block.id != AIR:
            self._place(pos, block)
        self._refresh_topology()
        for changed in nearby:
            after = self.block(changed)
            if after != before[changed] and self._rules.recording:
                self._trace.append(Change(self.time, changed, before[changed], after))
        self._core = None  # the edit's own updates run here; the next ticks rebuild the core
        for changed in edited:
            self._rules.notify_one(changed)
            self._rules.notify_around(changed)
        return dropped

    def _place(self, pos: Pos, block: Block) -> None:
        if block.id == AIR:
            return
        self.topology.place(pos, block)
        self._rules.add_block(pos, block.id)

    def _remove(self, pos: Pos) -> None:
        self.topology.remove(pos)
        self._rules.remove_block(pos)

    def _refresh_topology(self) -> None:
        self.topology.invalidate()
        self._rules.topology_changed()


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
