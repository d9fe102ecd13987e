"""Game ticks per second of the redstone simulator.

(a) sustained activity: a torch clock (period 20 gt) driving a trunk of 64 repeaters and 64 dust with 64
    branches of dust into lamps, on a stone floor (about 850 blocks); every clock edge changes 64 repeaters,
    128 dust and 64 lamps.
(b) press and trace: the same 64-lamp device fed by a button instead of the clock: load, press, run until
    everything is off again.

Both engine backends run in the same process: the compiled core (the default) and the Python reference. Rates
are printed as gt/s, as multiples of the game's own 20 gt/s and as the compiled/python ratio.
"""

import time

from discogym.suites.redstone.compiled import available
from discogym.suites.redstone.engine import Backend, Simulator
from discogym.suites.redstone.world import World, parse_world

GAME_RATE = 20.0  # gt/s of a Minecraft server
BRANCHES = 64
BACKENDS: tuple[Backend, ...] = ("compiled", "python")


def device_lines(source: list[str]) -> list[str]:
    """A trunk along x (repeater, dust, repeater, ...) with a dust branch south to a lamp at every dust."""
    lines = list(source)
    for i in range(BRANCHES):
        x = 2 * i
        lines += [f"{x} 1 0 redstone_repeater[facing=west]", f"{x + 1} 1 0 redstone_wire"]
        lines += [f"{x + 1} 1 1 redstone_wire", f"{x + 1} 1 2 redstone_lamp"]
    occupied = {tuple(int(c) for c in line.split()[:3]) for line in lines}
    floor = [f"{x} 0 {z} stone" for x in range(-3, 2 * BRANCHES + 1) for z in range(-2, 3) if (x, 0, z) not in occupied]
    return floor + lines


CLOCK = [
    "-2 1 0 stone",
    "-1 1 0 redstone_wall_torch[facing=east]",
    "-1 1 -1 redstone_wire",
    "-1 1 -2 redstone_wire",
    "-2 1 -2 redstone_wire",
    "-2 1 -1 redstone_repeater[facing=north,delay=4]",
]
BUTTON = ["-1 1 0 stone_button[face=floor]"]


def clocked_world() -> World:
    return parse_world("\n".join(device_lines(CLOCK)))


def button_world() -> World:
    return parse_world("\n".join(device_lines(BUTTON)))


def sustained(ticks: int, backend: Backend) -> tuple[float, int, int]:
    """Seconds for ``ticks`` game ticks of the clocked device, its block count and the changes traced."""
    sim = Simulator(clocked_world(), backend=backend)
    started = time.perf_counter()
    sim.run(ticks)
    return time.perf_counter() - started, len(sim.kind), sim.change_count()


def press_and_trace(ticks: int, repeats: int, backend: Backend) -> tuple[float, int]:
    """Mean seconds to load the button device, press it and run ``ticks`` game ticks; changes traced."""
    world = button_world()
    started = time.perf_counter()
    changes = 0
    for _ in range(repeats):
        sim = Simulator(world, backend=backend)
        sim.press((-1, 1, 0))
        sim.run(ticks)
        changes = sim.change_count()
    return (time.perf_counter() - started) / repeats, changes


def main() -> None:
    if not available():
        print("the compiled core is not built; reinstall discogym (pip install -e .) with a C compiler")
        return
    print("backends: compiled (the default) and python (the reference), same run; the game runs 20 gt/s")
    rates: dict[str, float] = {}
    for backend in BACKENDS:
        ticks = 20_000 if backend == "compiled" else 2_000
        seconds, blocks, changes = sustained(ticks, backend)
        rates[backend] = ticks / seconds
        print(
            f"(a) sustained clock, {blocks} blocks, {backend}: {ticks} gt in {seconds:.3f} s = {rates[backend]:,.0f} "
            f"gt/s ({rates[backend] / GAME_RATE:,.0f}x the game); {changes} changes traced"
        )
    print(f"    compiled/python: {rates['compiled'] / rates['python']:.1f}x")
    run_ticks = 200
    for backend in BACKENDS:
        each, changes = press_and_trace(run_ticks, 20, backend)
        rates[backend] = run_ticks / each
        print(
            f"(b) press and trace, 64 lamps, {backend}: load + press + {run_ticks} gt in {each * 1000:.1f} ms "
            f"= {rates[backend]:,.0f} gt/s incl. loading ({rates[backend] / GAME_RATE:,.0f}x the game); "
            f"{changes} changes"
        )
    print(f"    compiled/python: {rates['compiled'] / rates['python']:.1f}x")


if __name__ == "__main__":
    main()
