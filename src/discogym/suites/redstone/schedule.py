"""Scheduled ticks, and the running state a backend takes over and hands back.

Each game tick runs the scheduled ticks that are due, ordered by priority and then by the order they were
scheduled; a position has at most one pending tick. :class:`Schedule` keeps them for the Python rules. An
:class:`EngineState` is the running state of a world at one moment (its time, schedule and the components'
computed states), apart from the static :class:`~discogym.suites.redstone.topology.Topology`: the Python
rules give it to the compiled core when the core is built, and the core gives it back when Python reads.
"""

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from discogym.suites.redstone.blocks import Pos


class ScheduledTick(NamedTuple):
    """A pending tick of the block at ``pos``. Ticks run in the order of these tuples: by the game tick they
    are due, then priority (lower first), then the order they were scheduled in (unique)."""

    due: int
    priority: int
    order: int
    pos: Pos


class Schedule:
    """The pending ticks: a heap, at most one tick per position."""

    def __init__(self) -> None:
        self._heap: list[ScheduledTick] = []
        self._pending: set[Pos] = set()
        self.order = 0  # how many ticks were ever scheduled; the next gets order + 1

    def __len__(self) -> int:
        return len(self._heap)

    def __contains__(self, pos: object) -> bool:
        return pos in self._pending

    def add(self, pos: Pos, due: int, priority: int) -> None:
        """Schedule a tick at ``pos``, unless one is already pending there."""
        if pos in self._pending:
            return
        self.order += 1
        self._pending.add(pos)
        heapq.heappush(self._heap, ScheduledTick(due, priority, self.order, pos))

    def pop_due(self, time: int) -> list[ScheduledTick]:
        """Take out every tick due at or before ``time``, in run order."""
        heap = self._heap
        due: list[ScheduledTick] = []
        while heap and heap[0].due <= time:
            entry = heapq.heappop(heap)
            self._pending.discard(entry.pos)
            due.append(entry)
        return due

    def entries(self) -> tuple[ScheduledTick, ...]:
        """The pending ticks in run order."""
        return tuple(sorted(self._heap))

    def load(self, entries: Iterable[ScheduledTick], order: int) -> None:
        """Replace the pending ticks and the schedule counter."""
        self._heap = list(entries)
        heapq.heapify(self._heap)
        self._pending = {entry.pos for entry in self._heap}
        self.order = order

    def shift(self, ticks: int) -> None:
        """Move every pending tick ``ticks`` earlier (when the clock is reset)."""
        self.load((entry._replace(due=entry.due - ticks) for entry in self._heap), self.order)


@dataclass(frozen=True)
class EngineState:
    """The running state of a world at one moment: everything that changes as it runs, apart from the placed
    blocks and their topology.

    The maps hold every component of their kind: ``power`` every dust block; ``on`` every lamp and torch
    (lit) and every repeater and button (powered); ``locked`` every repeater."""

    time: int  # the game tick the world is at
    order: int  # the schedule counter (see :class:`Schedule`)
    recording: bool  # whether changes go into the trace (not while a loaded world settles)
    power: Mapping[Pos, int]
    on: Mapping[Pos, bool]
    locked: Mapping[Pos, bool]
    scheduled: tuple[ScheduledTick, ...]  # the pending ticks, in run order
    toggles: tuple[tuple[int, Pos], ...]  # recent torch turn-offs (tick, position), oldest first (burnout)
