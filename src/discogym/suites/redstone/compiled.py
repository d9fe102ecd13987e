"""The bridge to the engine's compiled core (``_core.c``), loaded with ctypes.

The Python :class:`~discogym.suites.redstone.engine.Simulator` keeps the world, its topology and the reference
rules. A :class:`Core` is built from a simulator's public :class:`~discogym.suites.redstone.topology.Topology`
(sent as flat arrays indexed by sorted position) and its :class:`~discogym.suites.redstone.schedule.EngineState`,
runs ticks and presses in C, and gives back the state it reached (another ``EngineState``) and the trace.
"""

import ctypes
import importlib.util
import weakref
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from discogym.suites.redstone.blocks import (
    BUTTON,
    COMPONENTS,
    DIRECTIONS,
    GLASS,
    LAMP,
    REPEATER,
    STONE,
    TORCH,
    WALL_TORCH,
    WIRE,
    Pos,
)
from discogym.suites.redstone.schedule import EngineState, ScheduledTick
from discogym.suites.redstone.topology import Topology

MODULE = "discogym.suites.redstone._core"
KIND_CODES = {WIRE: 1, REPEATER: 2, TORCH: 3, WALL_TORCH: 4, LAMP: 5, BUTTON: 6, STONE: 7, GLASS: 8}
OTHER_KIND = 9
DIRECTION_INDEX = {name: index for index, name in enumerate(DIRECTIONS)}
STEPS = tuple(DIRECTIONS.values())

_P = ctypes.c_void_p
_I32 = ctypes.c_int32
_I64 = ctypes.c_int64
_SIGNATURES: dict[str, tuple[list[Any], Any]] = {
    "rs_new": ([_I32, *[_P] * 16], _P),
    "rs_free": ([_P], None),
    "rs_failed": ([_P], ctypes.c_int),
    "rs_time": ([_P], _I64),
    "rs_order": ([_P], _I64),
    "rs_queue_len": ([_P], _I64),
    "rs_toggles_len": ([_P], _I64),
    "rs_trace_len": ([_P], _I64),
    "rs_set_recording": ([_P, ctypes.c_int], None),
    "rs_load": ([_P, _I64, _I64, _I64, _P, _P, _P, _P, _I64, _P, _P], None),
    "rs_export": ([_P, _P, _P, _P, _P, _P, _P], None),
    "rs_take_trace": ([_P, _P, _P, _P], None),
    "rs_notify_all": ([_P], None),
    "rs_run": ([_P, _I64], None),
    "rs_settle": ([_P, _I64], None),
    "rs_press": ([_P, _I32], ctypes.c_int),
}


@cache
def library() -> ctypes.CDLL | None:
    """The compiled core, or None where it was not built (the Python engine is used then)."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or spec.origin is None:
        return None
    try:
        lib = ctypes.CDLL(spec.origin)
    except OSError:  # built for another platform or damaged: the Python engine still works
        return None
    for name, (argtypes, restype) in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype
    return lib


def available() -> bool:
    """Whether the compiled core was built with the package."""
    return library() is not None


@dataclass(frozen=True)
class TraceChunk:
    """Changes recorded by a core: ticks, indices into ``positions`` and codes (before * 256 + after)."""

    positions: Sequence[Pos]
    ticks: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int32]
    codes: npt.NDArray[np.int32]

    def __len__(self) -> int:
        return len(self.ticks)


def _address(array: npt.NDArray[Any]) -> int:
    return int(array.ctypes.data)


class Core:
    """A world and its running state in the compiled core.

    Built from a :class:`Topology` and an :class:`EngineState` (what a simulator's Python side holds), it
    runs presses and ticks in C; :meth:`state` and :meth:`take_trace` give the results back."""

    def __init__(self, topology: Topology, state: EngineState) -> None:
        lib = library()
        if lib is None:
            raise RuntimeError("the compiled redstone core is not built")
        self._lib = lib
        kind = topology.kind
        # Positions with a pending tick or a torch toggle but no block any more keep an index (as air).
        self.positions = positions = sorted({*kind, *(e.pos for e in state.scheduled), *(p for _, p in state.toggles)})
        self.index = {pos: i for i, pos in enumerate(positions)}
        n = len(positions)
        self._kind = np.zeros(n, np.int8)
        self._nbr = np.full((n, 6), -1, np.int32)
        self._facing = np.zeros(n, np.int8)
        self._support = np.zeros(n, np.int8)
        self._delay = np.zeros(n, np.int16)
        self._points = np.zeros(n, np.int8)
        self.on = np.zeros(n, np.int8)
        self.power = np.zeros(n, np.int8)
        self.locked = np.zeros(n, np.int8)
        for i, pos in enumerate(positions):
            self._describe(topology, state, i, pos)
        readers = topology.dust_readers()
        self._readers_start, self._readers = self._csr(topology, readers.__getitem__, {WIRE})
        self._around_start, self._around = self._csr(topology, topology.components_around, COMPONENTS)
        self._networks(topology, n)
        # Where to read back dust power, lit/powered and locked states: (indices, their positions).
        self._wire = self._where(lambda pos: kind.get(pos) == WIRE)
        self._lit = self._where(state.on.__contains__)
        self._repeaters = self._where(state.locked.__contains__)
        self._handle = lib.rs_new(
            n,
            *(
                _address(a)
                for a in (
                    self._kind,
                    self._nbr,
                    self._facing,
                    self._support,
                    self._delay,
                    self._points,
                    self._readers_start,
                    self._readers,
                    self._net_of,
                    self._net_start,
                    self._net_members,
                    self._around_start,
                    self._around,
                    self.on,
                    self.power,
                    self.locked,
                )
            ),
        )
        if not self._handle:
            raise MemoryError("the compiled redstone core could not allocate its state")
        self._finalizer = weakref.finalize(self, lib.rs_free, self._handle)
        self._load_schedule(state)
        self.set_recording(state.recording)
        self._check()

    def _where(self, test: Callable[[Pos], bool]) -> tuple[npt.NDArray[np.int64], list[Pos]]:
        chosen = [pos for pos in self.positions if test(pos)]
        return np.array([self.index[pos] for pos in chosen], np.int64), chosen

    def _describe(self, topology: Topology, state: EngineState, i: int, pos: Pos) -> None:
        kind = topology.kind.get(pos)
        if kind is None:  # a position with a pending tick but no block any more
            return
        self._kind[i] = KIND_CODES.get(kind, OTHER_KIND)
        x, y, z = pos
        for d, (dx, dy, dz) in enumerate(STEPS):
            neighbour = (x + dx, y + dy, z + dz)
            if neighbour in topology.kind:
                self._nbr[i, d] = self.index[neighbour]
        if pos in topology.facing:
            self._facing[i] = DIRECTION_INDEX[topology.facing[pos]]
        if pos in topology.support_side:
            self._support[i] = DIRECTION_INDEX[topology.support_side[pos]]
        self._delay[i] = topology.delay_gt.get(pos, 0)
        if kind == WIRE:
            self._points[i] = sum(1 << DIRECTION_INDEX[side] for side in topology.wire(pos).points)
            self.power[i] = state.power[pos]
        self.on[i] = state.on.get(pos, False)
        self.locked[i] = state.locked.get(pos, False)

    def _csr(
        self, topology: Topology, lists: Callable[[Pos], Iterable[Pos]], kinds: Collection[str]
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """Per position, the positions ``lists`` gives for it (for blocks of the given kinds), as start offsets
        into one flat array."""
        start = np.zeros(len(self.positions) + 1, np.int32)
        flat: list[int] = []
        for i, pos in enumerate(self.positions):
            if topology.kind.get(pos) in kinds:
                flat += [self.index[other] for other in lists(pos)]
            start[i + 1] = len(flat)
        return start, np.array(flat, np.int32)

    def _networks(self, topology: Topology, n: int) -> None:
        self._net_of = np.full(n, -1, np.int32)
        starts = [0]
        members: list[int] = []
        for i, pos in enumerate(self.positions):
            if topology.kind.get(pos) != WIRE or self._net_of[i] >= 0:
                continue
            network = [self.index[p] for p in topology.network(pos)]
            self._net_of[network] = len(starts) - 1
            members += network
            starts.append(len(members))
        self._net_start = np.array(starts, np.int32)
        self._net_members = np.array(members, np.int32)

    def _load_schedule(self, state: EngineState) -> None:
        queued = state.scheduled
        due = np.array([entry.due for entry in queued], np.int64)
        priority = np.array([entry.priority for entry in queued], np.int32)
        order = np.array([entry.order for entry in queued], np.int64)
        idx = np.array([self.index[entry.pos] for entry in queued], np.int32)
        toggle_time = np.array([when for when, _ in state.toggles], np.int64)
        toggle_idx = np.array([self.index[pos] for _, pos in state.toggles], np.int32)
        self._lib.rs_load(
            self._handle,
            state.time,
            state.order,
            len(queued),
            *(_address(a) for a in (due, priority, order, idx)),
            len(toggle_time),
            _address(toggle_time),
            _address(toggle_idx),
        )

    def _check(self) -> None:
        if self._lib.rs_failed(self._handle):
            raise MemoryError("the compiled redstone core ran out of memory")

    # ----------------------------------------------------------------------------------------------

    @property
    def time(self) -> int:
        """The game tick the core is at."""
        return int(self._lib.rs_time(self._handle))

    def set_recording(self, recording: bool) -> None:
        """Whether changes from now on go into the trace."""
        self._recording = recording
        self._lib.rs_set_recording(self._handle, int(recording))

    def settle(self, limit: int) -> None:
        """Notify every block, run until nothing is scheduled (at most ``limit`` ticks), call that tick 0."""
        self._lib.rs_notify_all(self._handle)
        self._lib.rs_settle(self._handle, limit)
        self._check()

    def run(self, ticks: int) -> None:
        """Run ``ticks`` game ticks."""
        self._lib.rs_run(self._handle, ticks)
        self._check()

    def press(self, pos: Pos) -> bool:
        """Press the button at ``pos``; False if it was already on."""
        pressed = bool(self._lib.rs_press(self._handle, self.index[pos]))
        self._check()
        return pressed

    def trace_length(self) -> int:
        """How many changes the core holds that :meth:`take_trace` has not taken yet."""
        return int(self._lib.rs_trace_len(self._handle))

    def take_trace(self) -> TraceChunk:
        """The changes recorded since the last call."""
        length = self.trace_length()
        ticks = np.empty(length, np.int64)
        indices = np.empty(length, np.int32)
        codes = np.empty(length, np.int32)
        self._lib.rs_take_trace(self._handle, *(_address(a) for a in (ticks, indices, codes)))
        return TraceChunk(self.positions, ticks, indices, codes)

    def state(self) -> EngineState:
        """The running state the core has reached (for the simulator's Python side to take over)."""
        queued = int(self._lib.rs_queue_len(self._handle))
        toggles = int(self._lib.rs_toggles_len(self._handle))
        due, order, toggle_time = (np.empty(k, np.int64) for k in (queued, queued, toggles))
        priority, idx, toggle_idx = (np.empty(k, np.int32) for k in (queued, queued, toggles))
        self._lib.rs_export(self._handle, *(_address(a) for a in (due, priority, order, idx, toggle_time, toggle_idx)))
        positions = self.positions
        scheduled = sorted(
            ScheduledTick(d, p, o, positions[i])
            for d, p, o, i in zip(due.tolist(), priority.tolist(), order.tolist(), idx.tolist(), strict=True)
        )
        toggled = tuple((when, positions[i]) for when, i in zip(toggle_time.tolist(), toggle_idx.tolist(), strict=True))
        return EngineState(
            time=self.time,
            order=int(self._lib.rs_order(self._handle)),
            recording=self._recording,
            power=dict(zip(self._wire[1], self.power[self._wire[0]].tolist(), strict=True)),
            on=self._flags(self._lit, self.on),
            locked=self._flags(self._repeaters, self.locked),
            scheduled=tuple(scheduled),
            toggles=toggled,
        )

    @staticmethod
    def _flags(where: tuple[npt.NDArray[np.int64], list[Pos]], values: npt.NDArray[np.int8]) -> dict[Pos, bool]:
        indices, positions = where
        return dict(zip(positions, map(bool, values[indices].tolist()), strict=True))
