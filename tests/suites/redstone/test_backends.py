"""The compiled core against the Python reference: random circuits, presses and edits give the same trace."""

import contextlib

import numpy as np
import pytest

from discogym.core import UserError
from discogym.suites.redstone.blocks import BUTTON, HORIZONTAL, Block, Pos, make_block, parse_block
from discogym.suites.redstone.compiled import Core, available
from discogym.suites.redstone.engine import BACKEND_VARIABLE, Backend, Simulator
from discogym.suites.redstone.world import World

SIZE = 7  # x and z of the random region; blocks stand on a stone floor at y=0 and go up to y=3


@pytest.fixture
def backend() -> str:
    """These tests name their backends themselves (overrides the conftest's parametrized fixture)."""
    return "explicit"


def test_the_compiled_core_is_built() -> None:
    # The package builds it on install; without it every "compiled" run below would quietly be Python.
    assert available()
    assert Simulator(World(), backend="compiled").backend == "compiled"


def random_block(rng: np.random.Generator) -> Block:
    facing = str(rng.choice(HORIZONTAL))
    choice = rng.choice(9, p=[0.15, 0.3, 0.1, 0.04, 0.06, 0.12, 0.07, 0.06, 0.1])
    if choice == 0:
        return make_block("air")
    if choice == 5:
        return make_block("redstone_repeater", facing=facing, delay=str(rng.integers(1, 5)))
    if choice == 7:
        return make_block("redstone_wall_torch", facing=facing)
    if choice == 8:
        return make_block("stone_button", face=str(rng.choice(["floor", "wall", "ceiling"])), facing=facing)
    names = ["air", "redstone_wire", "stone", "glass", "redstone_lamp", "", "redstone_torch"]
    return make_block(names[choice])


def random_world(seed: int) -> World:
    rng = np.random.default_rng(seed)
    world = World({(x, 0, z): make_block("stone") for x in range(SIZE) for z in range(SIZE)})
    for y in range(1, 4):
        for x in range(SIZE):
            for z in range(SIZE):
                with contextlib.suppress(UserError):  # no support there: leave the air
                    world.place((x, y, z), random_block(rng))
    return world


def random_inputs(world: World, seed: int) -> tuple[dict[int, list[Pos]], list[tuple[int, Block]]]:
    """Presses by tick, and edits (tick, block) at random positions of the region."""
    rng = np.random.default_rng(seed + 10_000)
    buttons = [pos for pos, block in world if block.id == "minecraft:stone_button"]
    presses: dict[int, list[Pos]] = {}
    for _ in range(20 if buttons else 0):
        presses.setdefault(int(rng.integers(0, 230)), []).append(buttons[rng.integers(len(buttons))])
    edits = [(int(rng.integers(1, 150)), random_block(rng)) for _ in range(6)]
    return presses, edits


def still_there(sim: Simulator, presses: dict[int, list[Pos]]) -> dict[int, list[Pos]]:
    """The presses of buttons an edit has not removed."""
    return {when: [pos for pos in buttons if sim.kind.get(pos) == BUTTON] for when, buttons in presses.items()}


def run(world: World, backend: Backend, seed: int) -> tuple[object, ...]:
    sim = Simulator(world, backend=backend)
    assert sim.backend == backend
    presses, edits = random_inputs(world, seed)
    rng = np.random.default_rng(seed + 20_000)
    refused = []
    for when, block in sorted(edits, key=lambda edit: edit[0]):
        sim.run(when - sim.time, still_there(sim, presses))
        pos = (int(rng.integers(SIZE)), int(rng.integers(1, 4)), int(rng.integers(SIZE)))
        try:
            sim.set_block(pos, block)
        except UserError as error:
            refused.append(str(error))
    sim.run(250 - sim.time, still_there(sim, presses))
    # the whole running state too: pending ticks in order, the schedule counter, torch burnout log, states
    return sim.trace, sim.snapshot().to_text(), sim.engine_state(), refused


@pytest.mark.parametrize("seed", range(40))
def test_random_circuits_give_the_same_trace(seed: int) -> None:
    world = random_world(seed)
    reference = run(world, "python", seed)
    assert run(world, "compiled", seed) == reference
    assert len(reference[0]) > 0  # type: ignore[arg-type]


def test_a_clock_gives_the_same_trace_over_many_periods() -> None:
    lines = [
        ((-2, 1, 0), "stone"),
        ((-1, 1, 0), "redstone_wall_torch[facing=east]"),
        ((-1, 1, -1), "redstone_wire"),
        ((-1, 1, -2), "redstone_wire"),
        ((-2, 1, -2), "redstone_wire"),
        ((-2, 1, -1), "redstone_repeater[facing=north,delay=4]"),
        ((0, 1, 0), "redstone_wire"),
        ((1, 1, 0), "redstone_lamp"),
    ]
    blocks = {(x, 0, z): make_block("stone") for x in range(-3, 3) for z in range(-3, 2)}
    blocks.update({pos: parse_block(text) for pos, text in lines})
    results = []
    for backend in ("python", "compiled"):
        sim = Simulator(World(blocks), backend=backend)
        sim.run(1000)
        results.append((sim.trace, sim.snapshot().to_text(), sim.engine_state()))
    assert results[0] == results[1]
    assert sum(change.pos == (1, 1, 0) for change in results[0][0]) > 50  # the lamp keeps blinking


def test_the_backend_variable_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKEND_VARIABLE, "python")
    assert Simulator(World()).backend == "python"
    assert Simulator(World(), backend="compiled").backend == "compiled"  # an explicit choice wins
    monkeypatch.setenv(BACKEND_VARIABLE, "fast")
    with pytest.raises(UserError, match="must be auto, compiled or python"):
        Simulator(World())


def test_a_core_built_from_the_public_topology_and_state_carries_on_like_the_simulator() -> None:
    # Taken mid-run, with ticks pending: the core gets only Simulator.topology and Simulator.engine_state().
    world = random_world(4)
    sim = Simulator(world, backend="python")
    buttons = [pos for pos, block in world if block.id == BUTTON]
    sim.press(buttons[0])
    sim.run(5)
    state = sim.engine_state()
    assert state.scheduled and state.time == 5 and state.recording
    core = Core(sim.topology, state)
    assert core.state() == state
    core.run(60)
    sim.run(60)
    assert core.state() == sim.engine_state()
    assert core.state().time == 65
