"""The components' rules in Python: the reference backend of the redstone engine.

:class:`Rules` holds the running state of a world (time, the components' computed states, the schedule,
the torch burnout log and the changes not yet traced) and applies Java Edition 1.21's rules to it: power,
dust settling, block updates and scheduled ticks. The compiled core (``_core.c``) mirrors these functions
one by one under the same names; a rule is changed in both places.

A state change notifies every component within Manhattan distance 2 (what Minecraft's neighbour updates
reach for these blocks), depth first, in a fixed order of offsets, so the result never depends on the order
in which blocks were placed. Dust settles at once: when a dust block is notified, its whole network is
recomputed to the fixed point ``power = max(source, strongest dust it reads - 1)``.
"""

from collections.abc import Iterable
from typing import Final

from discogym.suites.redstone.blocks import (
    BUTTON,
    CONDUCTORS,
    GLASS,
    HORIZONTAL,
    LAMP,
    OPPOSITE,
    REPEATER,
    TORCH,
    WALL_TORCH,
    WIRE,
    Pos,
    offset,
)
from discogym.suites.redstone.schedule import EngineState, Schedule
from discogym.suites.redstone.topology import Topology

BUTTON_TICKS: Final = 20
TORCH_DELAY: Final = 2
LAMP_OFF_DELAY: Final = 4
BURNOUT_WINDOW: Final = 60
BURNOUT_TOGGLES: Final = 8
BURNOUT_RETRY: Final = 160

RawChange = tuple[int, Pos, int, int]  # (tick, position, state code before, after); see Topology.block_with


class Rules:
    """A world's running state under the redstone rules, on the blocks of ``topology``."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        # The topology's tables, read on every update (the same objects: it changes them only in place).
        self.kind = topology.kind
        self._facing = topology.facing
        self._support_side = topology.support_side
        self._delay_gt = topology.delay_gt
        self.on: dict[Pos, bool] = {}  # lamp/torch lit, repeater/button powered
        self.power: dict[Pos, int] = {}
        self.locked: dict[Pos, bool] = {}
        self.time = 0
        self.schedule = Schedule()
        self._running: set[Pos] = set()
        self._toggles: list[tuple[int, Pos]] = []
        self.raw: list[RawChange] = []  # changes not yet turned into the trace
        self.recording = False
        # A dust network needs settling again only after some other component changed (a new "wave").
        self._wave = 0
        self._settled_in: dict[Pos, int] = {}

    # ----------------------------------------------------------------------------------------------
    # Blocks and state

    def add_block(self, pos: Pos, kind: str) -> None:
        """Give a newly placed block its initial computed state."""
        if kind == WIRE:
            self.power[pos] = 0
        elif kind in (LAMP, REPEATER, BUTTON):
            self.on[pos] = False
            if kind == REPEATER:
                self.locked[pos] = False
        elif kind in (TORCH, WALL_TORCH):
            self.on[pos] = True

    def remove_block(self, pos: Pos) -> None:
        """Forget the computed state of a removed block."""
        self.on.pop(pos, None)
        self.power.pop(pos, None)
        self.locked.pop(pos, None)

    def topology_changed(self) -> None:
        """Every dust network must settle again (call after an edit)."""
        self._wave += 1

    def code(self, pos: Pos) -> int:
        """The computed part of a block's state as a small integer: dust power, or lit/powered + 2 x locked."""
        kind = self.kind.get(pos)
        if kind == WIRE:
            return self.power[pos]
        if pos in self.on:
            return int(self.on[pos]) + 2 * int(self.locked.get(pos, False))
        return 0

    def state(self) -> EngineState:
        """A copy of the running state."""
        return EngineState(
            time=self.time,
            order=self.schedule.order,
            recording=self.recording,
            power=dict(self.power),
            on=dict(self.on),
            locked=dict(self.locked),
            scheduled=self.schedule.entries(),
            toggles=tuple(self._toggles),
        )

    def restore(self, state: EngineState) -> None:
        """Take over a running state another backend reached on the same topology."""
        self.time = state.time
        self.power.update(state.power)
        self.on.update(state.on)
        self.locked.update(state.locked)
        self.schedule.load(state.scheduled, state.order)
        self._toggles = list(state.toggles)
        self._settled_in.clear()  # the other backend settled dust this side has not seen

    # ----------------------------------------------------------------------------------------------
    # Inputs and time

    def press(self, pos: Pos) -> bool:
        """Press the button at ``pos``; False if it was already on."""
        if self.on[pos]:
            return False
        self._set_on(pos, True)
        self._schedule(pos, BUTTON_TICKS, 0)
        return True

    def step(self) -> None:
        """Advance one game tick and run the scheduled ticks that are due."""
        self.time += 1
        due = self.schedule.pop_due(self.time)
        self._running = {entry.pos for entry in due}
        for entry in due:  # already in (due, priority, order) order
            self._running.discard(entry.pos)
            self._run_tick(entry.pos)
        self._running = set()

    def settle(self, limit: int) -> None:
        """Notify every block and run until nothing is scheduled (at most ``limit`` ticks); call that tick 0."""
        for pos in sorted(self.kind):
            self.notify_one(pos)
        for _ in range(limit):
            if not self.schedule:
                break
            self.step()
        shift = self.time
        self.time = 0
        self.schedule.shift(shift)
        self._toggles = [(when - shift, pos) for when, pos in self._toggles]

    # ----------------------------------------------------------------------------------------------
    # Power

    def _conductor_power(self, pos: Pos, for_dust: bool) -> int:
        """The strongest strong power any neighbour drives into a conductor (dust counts except for dust)."""
        best = 0
        for source, side in self.topology.neighbours(pos):
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
            power = self.power[source]
            if power == 0 or towards == "up":
                return 0
            return power if towards == "down" or towards in self.topology.wire(source).points else 0
        if not self.on.get(source, False):
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
        return any(self._signal_from(source, side) > 0 for source, side in self.topology.neighbours(pos))

    def _torch_powered(self, pos: Pos) -> bool:
        side = self._support_side[pos]
        return self._signal_from(offset(pos, side), OPPOSITE[side]) > 0

    def _repeater_input(self, pos: Pos) -> int:
        facing = self._facing[pos]
        back = offset(pos, facing)
        signal = self._signal_from(back, OPPOSITE[facing])
        if signal < 15 and self.kind.get(back) == WIRE:
            signal = max(signal, self.power[back])
        return signal

    def _repeater_locked(self, pos: Pos) -> bool:
        for side in _sides(self._facing[pos]):
            neighbour = offset(pos, side)
            # a powered repeater whose output (the side opposite its facing) points into this one
            is_repeater = self.kind.get(neighbour) == REPEATER
            if is_repeater and self.on[neighbour] and self._facing[neighbour] == side:
                return True
        return False

    # ----------------------------------------------------------------------------------------------
    # Dust

    def _settle_dust(self, start: Pos) -> list[Pos]:
        """Recompute the network's power; returns the dust whose power changed (already set and traced)."""
        network = self.topology.network(start)
        for pos in network:
            self._settled_in[pos] = self._wave
        readers = self.topology.dust_readers()
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
        for neighbour, side in self.topology.non_dust_neighbours(pos):
            signal = self._signal_from(neighbour, side, for_dust=True)
            if signal > source:
                if signal >= 15:
                    return 15
                source = signal
        return source

    def _apply_dust(self, best: dict[Pos, int]) -> list[Pos]:
        changed = [pos for pos, power in best.items() if power != self.power[pos]]
        for pos in changed:
            before = self.power[pos]
            self.power[pos] = best[pos]
            self._record(pos, before)
        return changed

    # ----------------------------------------------------------------------------------------------
    # Updates and scheduled ticks

    def notify_around(self, *centres: Pos) -> None:
        """Notify the components within distance 2 of each changed position, depth first."""
        around = self.topology.components_around
        if len(centres) == 1:
            targets: Iterable[Pos] = around(centres[0])
        else:
            targets = dict.fromkeys(target for centre in centres for target in around(centre))
        for target in targets:
            if target in self.kind:
                self.notify_one(target)

    def notify_one(self, pos: Pos) -> None:
        """A block update at ``pos``: the component there re-checks its inputs."""
        kind = self.kind.get(pos)
        if kind == WIRE:
            if self._settled_in.get(pos) == self._wave:  # nothing feeding it changed since it was settled
                return
            changed = self._settle_dust(pos)
            if changed:
                self.notify_around(*changed)
        elif kind == REPEATER:
            self._repeater_neighbor(pos)
        elif kind in (TORCH, WALL_TORCH):
            if self.on[pos] == self._torch_powered(pos) and pos not in self._running:
                self._schedule(pos, TORCH_DELAY, 0)
        elif kind == LAMP:
            lit, powered = self.on[pos], self._has_neighbor_signal(pos)
            if lit and not powered:
                self._schedule(pos, LAMP_OFF_DELAY, 0)
            elif powered and not lit:
                self._set_on(pos, True, notify=False)  # a lamp's light changes no power

    def _repeater_neighbor(self, pos: Pos) -> None:
        locked = self._repeater_locked(pos)
        if locked != self.locked[pos]:
            before = self.code(pos)
            self.locked[pos] = locked
            self._record(pos, before)
        if locked:
            return
        should = self._repeater_input(pos) > 0
        if self.on[pos] != should and pos not in self._running:
            self._schedule(pos, self._delay_gt[pos], self._repeater_priority(pos))

    def _repeater_priority(self, pos: Pos) -> int:
        facing = self._facing[pos]
        front = offset(pos, OPPOSITE[facing])
        if self.kind.get(front) == REPEATER and self._facing[front] != OPPOSITE[facing]:
            return -3
        return -2 if self.on[pos] else -1

    def _schedule(self, pos: Pos, delay: int, priority: int) -> None:
        self.schedule.add(pos, self.time + delay, priority)

    def _run_tick(self, pos: Pos) -> None:
        kind = self.kind.get(pos)
        if kind == REPEATER:
            self._repeater_tick(pos)
        elif kind in (TORCH, WALL_TORCH):
            self._torch_tick(pos)
        elif kind == LAMP:
            if self.on[pos] and not self._has_neighbor_signal(pos):
                self._set_on(pos, False, notify=False)
        elif kind == BUTTON and self.on[pos]:
            self._set_on(pos, False)

    def _repeater_tick(self, pos: Pos) -> None:
        if self._repeater_locked(pos):
            return
        should = self._repeater_input(pos) > 0
        if self.on[pos] and not should:
            self._set_on(pos, False)
        elif not self.on[pos]:
            self._set_on(pos, True)
            if not should:
                self._schedule(pos, self._delay_gt[pos], -3)

    def _torch_tick(self, pos: Pos) -> None:
        powered = self._torch_powered(pos)
        while self._toggles and self.time - self._toggles[0][0] > BURNOUT_WINDOW:
            self._toggles.pop(0)
        if self.on[pos]:
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
        before = self.code(pos)
        self.on[pos] = value
        self._record(pos, before)
        if notify:
            self._wave += 1
            self.notify_around(pos)

    def _record(self, pos: Pos, before: int) -> None:
        if self.recording:
            self.raw.append((self.time, pos, before, self.code(pos)))


def _sides(facing: str) -> tuple[str, str]:
    """The two sides of a repeater facing ``facing`` (where a locking repeater can point in)."""
    index = HORIZONTAL.index(facing)
    return HORIZONTAL[(index + 1) % 4], HORIZONTAL[(index + 3) % 4]
