"""Small circuits for the engine tests: a stone floor at y=0 and blocks written as in world files."""

from discogym.suites.redstone.engine import Simulator
from discogym.suites.redstone.world import parse_world

Pos = tuple[int, int, int]


def build(*blocks: str, floor: tuple[range, range] = (range(-2, 20), range(-3, 6))) -> Simulator:
    """A simulator for ``x y z block`` lines on a stone floor (y=0) covering ``floor`` (x range, z range)."""
    xs, zs = floor
    taken = {tuple(int(c) for c in line.split()[:3]) for line in blocks}
    ground = [f"{x} 0 {z} minecraft:stone" for x in xs for z in zs if (x, 0, z) not in taken]
    return Simulator(parse_world("\n".join([*ground, *blocks])))


def history(sim: Simulator, pos: Pos, prop: str) -> list[tuple[int, str]]:
    """Every change of one property of the block at ``pos``: (tick, new value)."""
    out = []
    for change in sim.trace:
        if change.pos == pos and change.before.props and change.before.get(prop) != change.after.get(prop):
            out.append((change.tick, change.after.get(prop)))
    return out


def wire_line(x0: int, x1: int, y: int = 1, z: int = 0) -> list[str]:
    """Dust from x0 to x1 (inclusive) along x."""
    return [f"{x} {y} {z} redstone_wire" for x in range(x0, x1 + 1)]
