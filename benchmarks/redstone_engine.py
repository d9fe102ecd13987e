"""Game ticks per second of the redstone simulator.

(a) sustained activity: a torch clock (period 20 gt) driving a trunk of 64 repeaters and 64 dust with 64
    branches of dust into lamps, on a stone floor (about 850 blocks); every clock edge changes 64 repeaters,
    128 dust and 64 lamps.
(b) press and trace: the same 64-lamp device fed by a button instead of the clock: load, press, run until
    everything is off again.

The baseline is the game's own 20 gt/s; figures are printed as rates and as multiples of it.
"""

import time

from discogym.suites.redstone.engine import Simulator
from discogym.suites.redstone.world import World, parse_world

GAME_RATE = 20.0  # gt/s of a Minecraft server
BRANCHES = 64


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


def sustained(ticks: int) -> tuple[float, int, int]:
    """Seconds for ``ticks`` game ticks of the clocked device, its block count and the changes traced."""
    sim = Simulator(clocked_world())
    started = time.perf_counter()
    sim.run(ticks)
    return time.perf_counter() - started, len(sim.kind), sim.change_count()


def press_and_trace(ticks: int, repeats: int) -> tuple[float, int]:
    """Mean seconds to load the button device, press it and run ``ticks`` game ticks; changes traced."""
    world = button_world()
    started = time.perf_counter()
    changes = 0
    for _ in range(repeats):
        sim = Simulator(world)
        sim.press((-1, 1, 0))
        sim.run(ticks)
        changes = sim.change_count()
    return (time.perf_counter() - started) / repeats, changes


def main() -> None:
    ticks = 2000
    seconds, blocks, changes = sustained(ticks)
    rate = ticks / seconds
    print(f"(a) sustained clock, {blocks} blocks: {ticks} gt in {seconds:.2f} s = {rate:,.0f} gt/s")
    print(f"    {changes} state changes traced; {rate / GAME_RATE:,.0f}x the game's 20 gt/s")
    run_ticks, repeats = 200, 10
    each, changes = press_and_trace(run_ticks, repeats)
    print(f"(b) press and trace, 64 lamps: load + press + {run_ticks} gt in {each * 1000:.1f} ms")
    rate = run_ticks / each
    print(f"    = {rate:,.0f} gt/s incl. loading; {changes} changes; {rate / GAME_RATE:,.0f}x the game")


if __name__ == "__main__":
    main()
