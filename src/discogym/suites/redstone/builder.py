"""The reference builder: a passing device for every task, designed from the task's parameters.

Four designs (coordinates relative to the anchor; y = 0 is the layer on the floor; x east, z south):

- **Comb** (families A, B, D, E): a dust trunk along x through the source at (0, 0), with branches along z.
  A branch of length L at (x, side) ends in a *fed* lamp at (x, side * (L + 1)); dust points into it, which
  powers it strongly, so it lights up to three lamps next to it as well (lamps conduct): a cluster of four
  lamps, all lit in the same tick as the trunk. Branches stand at even x (x != 0), their lengths alternating
  1 and 3, so neighbouring clusters never touch. One dust network: every lamp lights at the press tick.
  - A: the button at (0, 0) on the floor.
  - B: the button at (0, -10); a dust line down x = 0 and a repeater at (0, -1) feed the trunk, whose
    junction at (0, 0) is the T-junction; far clusters first, so the farthest lamp is 23 blocks away.
  - D: the cluster for distance b sits at |x| = b/2 with L = b/2 - 1, so its lamps are at b - 1, b, b + 1.
  - E: a rising-edge detector replaces the button: its output torch T2 at (0, 0) hangs on Y at (0, -1),
    which two paths keep powered at rest: dust from torch T1 (on X, which the button powers) on top of Y,
    and a repeater line from the button into Y from the north. A press turns T1 off (2 gt), then T2 on
    (4 gt): the lamps light. The repeater line reaches Y after (tau - 1) rt and T2 turns off 2 gt later;
    lamps go off 4 gt after that, so each is on tau rt. For tau = 12 the button's own 20 gt plus the lamps'
    4 gt give the 24 gt, and the button drives the trunk directly.
- **Serpentine** (family C): button, repeater, lamp, repeater, lamp, ... along rows two apart, turning at the
  ends on lamps; the repeater after lamp i has the delay between lamps i and i + 1.

The designs take the mechanics they rely on as a :class:`~discogym.suites.redstone.facts.Physics` (the game's own
by default): the ``self-taught`` engineer builds from the numbers its knowledge book gives, so a wrong number
gives a wrong device (or none, where the designs cannot meet the task with it).
"""

from collections.abc import Iterator
from dataclasses import dataclass

from discogym.core import UserError
from discogym.suites.redstone.blocks import Block, Pos, make_block
from discogym.suites.redstone.evaluator import region_of
from discogym.suites.redstone.facts import MINECRAFT, Physics
from discogym.suites.redstone.lab import Region
from discogym.suites.redstone.tasks import MAX_STAGE_DELAY, TaskSpec

Device = dict[Pos, Block]
WIRE = make_block("redstone_wire")
LAMP = make_block("redstone_lamp")
STONE = make_block("stone")
GLASS = make_block("glass")
FLOOR_BUTTON = make_block("stone_button", face="floor")


def repeater(facing: str, delay: int = 1) -> Block:
    """A repeater whose input comes from ``facing``."""
    return make_block("redstone_repeater", facing=facing, delay=str(delay))


@dataclass(frozen=True)
class Cluster:
    """A branch off the trunk and the lamps it lights: the fed lamp first, then its neighbours."""

    x: int
    side: int  # +1 south, -1 north
    length: int
    lamps: tuple[tuple[int, int], ...] = ()  # the lamps it lights (chosen by _pick)

    def dust(self) -> Iterator[tuple[int, int]]:
        for k in range(1, self.length + 1):
            yield self.x, self.side * k

    def lamp_cells(self, conducting: bool = True) -> list[tuple[int, int]]:
        """Where its lamps can go: fed lamp, the one toward x = 0, the one away from it, the one beyond (the fed
        lamp alone when lamps do not pass power on)."""
        row = self.side * (self.length + 1)
        step = 1 if self.x > 0 else -1
        cells = [(self.x, row), (self.x - step, row), (self.x + step, row), (self.x, row + self.side)]
        return cells if conducting else cells[:1]


class _Layout:
    """Blocks placed relative to the anchor, kept inside the region."""

    def __init__(self, region: Region, physics: Physics = MINECRAFT) -> None:
        self.region = region
        self.physics = physics
        self.blocks: Device = {}

    def put(self, x: int, z: int, block: Block, up: int = 0) -> None:
        ax, ay, az = self.region.anchor
        pos = (ax + x, ay + up, az + z)
        if not self.region.contains(pos):
            raise UserError(f"the reference design does not fit the build region at {pos}")
        self.blocks[pos] = block

    def fits(self, x: int, z: int) -> bool:
        ax, ay, az = self.region.anchor
        return self.region.contains((ax + x, ay, az + z))


def build_device(spec: TaskSpec, physics: Physics = MINECRAFT) -> Device:
    """A device that passes ``spec`` if the game's mechanics are ``physics`` (UserError where the designs cannot
    reach its parameters with them)."""
    layout = _Layout(region_of(spec), physics)
    if spec.family == "C":
        _serpentine(layout, spec.contract.delays_ticks or [])
    elif spec.family == "A":
        layout.put(0, 0, FLOOR_BUTTON)
        _comb(layout, _pick(layout, _slots(layout), spec.lamps))
    elif spec.family == "B":
        _branch_feed(layout)
        _comb(layout, _pick(layout, _slots(layout, far_first=True), spec.lamps), junction=True)
    elif spec.family == "D":
        layout.put(0, 0, FLOOR_BUTTON)
        _comb(layout, _bucket_clusters(layout, spec.contract.target_distances or [], spec.lamps))
    else:
        tau = spec.contract.tau_ticks or 0
        if 2 * tau == physics.button_pulse + physics.lamp_off_delay:
            layout.put(0, 0, FLOOR_BUTTON)
            slots = _slots(layout)
        else:
            _edge_detector(layout, tau)
            slots = [slot for slot in _slots(layout) if (slot.x, slot.side) != (-2, -1)]  # the detector is there
        _comb(layout, _pick(layout, slots, spec.lamps))
    return layout.blocks


def _slots(layout: _Layout, far_first: bool = False) -> list[Cluster]:
    """Every branch position, nearest first (or, south side first, farthest first)."""
    xs = [x for d in range(2, 11, 2) for x in (d, -d)]
    sides = (1, -1)
    if far_first:
        xs = [x for d in range(10, 1, -2) for x in (d, -d)]
        return [Cluster(x, side, 1 if abs(x) % 4 == 2 else 3) for side in sides for x in xs if layout.fits(x, 0)]
    return [Cluster(x, side, 1 if abs(x) % 4 == 2 else 3) for x in xs for side in sides if layout.fits(x, 0)]


def _pick(layout: _Layout, slots: list[Cluster], lamps: int) -> list[Cluster]:
    """Clusters from ``slots`` in order until they hold ``lamps`` lamps (the last one perhaps partial)."""
    chosen: list[Cluster] = []
    left = lamps
    for slot in slots:
        if left == 0:
            break
        cells = [cell for cell in slot.lamp_cells(layout.physics.lamp_conducts == 3) if layout.fits(*cell)][:left]
        chosen.append(Cluster(slot.x, slot.side, slot.length, tuple(cells)))
        left -= len(cells)
    if left:
        raise UserError(f"the reference comb holds at most {lamps - left} lamps; the task asks for {lamps}")
    return chosen


def _bucket_clusters(layout: _Layout, distances: list[int], lamps: int) -> list[Cluster]:
    """For each target distance b, clusters at |x| = b/2 (rounded to even) on both sides of the trunk."""
    each = lamps // max(1, len(distances))
    clusters: list[Cluster] = []
    for distance in distances:
        x = max(2, 2 * round(distance / 4))
        length = distance - x - 1
        if length < 1:
            raise UserError(f"the reference design cannot place lamps at distance {distance}")
        slots = [Cluster(sx, side, length) for sx in (x, -x) for side in (1, -1)]
        clusters += _pick(layout, slots, each)
    return clusters


def _comb(layout: _Layout, clusters: list[Cluster], junction: bool = False) -> None:
    """The trunk along z = 0 (through the source at x = 0), the branches and their lamps."""
    longest = max((abs(c.x) + c.length for c in clusters), default=0)
    if longest > layout.physics.dust_reach:
        raise UserError(
            f"the comb needs dust runs of {longest} blocks; dust carries a signal {layout.physics.dust_reach}"
        )
    xs = [c.x for c in clusters]
    for x in range(min([0, *xs]), max([0, *xs]) + 1):
        if x != 0 or junction:
            layout.put(x, 0, WIRE)
    for cluster in clusters:
        for x, z in cluster.dust():
            layout.put(x, z, WIRE)
        for x, z in cluster.lamps:
            layout.put(x, z, LAMP)


def _branch_feed(layout: _Layout) -> None:
    """Family B's source: the button at (0, -10), dust down x = 0, a repeater into the junction at (0, 0)."""
    layout.put(0, -10, FLOOR_BUTTON)
    for z in range(-9, -1):
        layout.put(0, z, WIRE)
    layout.put(0, -1, repeater("north"))


def _edge_detector(layout: _Layout, tau: int) -> None:
    """A pulse from torch T2 at (0, 0) that keeps the lamps lit tau rt: T2 turns on two torch delays after the
    press and off one torch delay after the repeater line (D settings) reaches Y; the lamps go dark a lamp
    off-delay later, so they are lit D * repeater + lamp off-delay - torch gt, which sets D."""
    physics = layout.physics
    settings, rest = divmod(2 * tau - physics.lamp_off_delay + physics.torch_delay, physics.repeater_delay)
    if rest:
        raise UserError(f"no whole number of repeater settings gives tau = {tau} rt")
    delay = settings  # repeater settings on the line into Y
    stages = [(0, -2), (0, -3), (0, -4), (0, -5)]
    if not 3 <= delay <= MAX_STAGE_DELAY * len(stages):
        raise UserError(f"the reference pulse shaper makes tau from 4 to {MAX_STAGE_DELAY * len(stages) + 1} rt")
    layout.put(0, 0, make_block("redstone_wall_torch", facing="south"))  # T2, on Y
    layout.put(0, -1, STONE)  # Y
    for x, z in stages:
        part = min(MAX_STAGE_DELAY, delay)
        layout.put(x, z, repeater("north", part) if part else WIRE)
        delay -= part
    for x, z in ((0, -6), (0, -7), (-1, -7)):  # from the button to the repeater line
        layout.put(x, z, WIRE)
    layout.put(-2, -6, STONE)  # X
    layout.put(-2, -6, make_block("redstone_torch"), up=1)  # T1, on X
    layout.put(-2, -7, make_block("stone_button", face="wall", facing="north"))  # on X's north face
    # T1's dust runs one layer up, on glass, into the dust on top of Y; no dust of the repeater line touches
    # the glass (dust climbs onto dust on glass) and a stone over the trunk cuts the step down to it.
    for x, z in ((-2, -5), (-2, -4), (-2, -3), (-2, -2), (-1, -2), (-1, -1)):
        layout.put(x, z, GLASS)
        layout.put(x, z, WIRE, up=1)
    layout.put(0, -1, WIRE, up=1)
    layout.put(-1, 0, STONE, up=1)


def _serpentine(layout: _Layout, delays: list[int]) -> None:
    """Button, then (repeater, lamp) per stage along rows z = -10, -8, ... turning on lamps at the ends."""
    r = layout.region.radius
    path = list(_rows(-r, r, -r, r))
    step = layout.physics.repeater_delay
    if any(2 * delay % step for delay in delays):
        raise UserError(f"repeater settings of {step} gt cannot make the delays {delays} rt")
    stages = [1, *(2 * delay // step for delay in delays)]  # the first repeater only separates the button
    if 2 * len(stages) + 1 > len(path):
        raise UserError(f"the reference delay line holds at most {(len(path) - 1) // 2} lamps")
    layout.put(*path[0], FLOOR_BUTTON)
    for stage, delay in enumerate(stages):
        cell, before = path[2 * stage + 1], path[2 * stage]
        layout.put(*cell, repeater(_direction(cell, before), delay))
        layout.put(*path[2 * stage + 2], LAMP)


def _rows(x0: int, x1: int, z0: int, z1: int) -> Iterator[tuple[int, int]]:
    """Cells of a path along rows two apart, east then west, joined at the ends."""
    eastward = True
    for z in range(z0, z1 + 1, 2):
        xs = range(x0, x1 + 1) if eastward else range(x1, x0 - 1, -1)
        yield from ((x, z) for x in xs)
        if z + 1 <= z1:
            yield (x1 if eastward else x0), z + 1
        eastward = not eastward


def _direction(cell: tuple[int, int], towards: tuple[int, int]) -> str:
    dx, dz = towards[0] - cell[0], towards[1] - cell[1]
    return {(1, 0): "east", (-1, 0): "west", (0, 1): "south", (0, -1): "north"}[(dx, dz)]
