"""The evaluator: press the button of a submitted device, record the trace, check the task's contract.

Everything runs on the per-game-tick trace. The press happens at tick 0 of the loaded (settled) device; the
world then runs until nothing is scheduled (at most :data:`RUN_LIMIT` gt). A lamp's on-tick is the first tick
it is lit after the press; its off-tick the first tick after that it is not. Every failed rule is explained
(which lamp, which tick, which rule); the report goes into the episode file, never to the agent.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from discogym.core import UserError
from discogym.suites.redstone.blocks import HORIZONTAL, LAMP, WALL_TORCH, WIRE, Block, Pos
from discogym.suites.redstone.engine import Simulator
from discogym.suites.redstone.lab import Region, lab_world, lamps_of, the_button
from discogym.suites.redstone.tasks import TaskSpec
from discogym.suites.redstone.world import format_pos

RUN_LIMIT = 1000  # gt after the press
QUIET_AFTER = 40  # gt after the press before an idle world may stop early (the button alone is on for 20)
RT = 2  # gt per redstone tick


@dataclass
class LampTimes:
    """When one lamp turned on and off after the press (ticks after the press; None: never)."""

    pos: Pos
    on: int | None = None
    off: int | None = None
    turn_ons: int = 0

    @property
    def duration(self) -> int | None:
        return None if self.on is None or self.off is None else self.off - self.on


@dataclass
class Evaluation:
    """The verdict on a device: passed, the rules it broke, and what was measured."""

    passed: bool
    failures: list[str]
    lamps: list[LampTimes] = field(default_factory=list)
    ticks_run: int = 0

    def document(self) -> dict[str, Any]:
        """The report as JSON-able data for the episode file."""
        return {
            "passed": self.passed,
            "failures": self.failures,
            "ticks_run": self.ticks_run,
            "lamps": [
                {"pos": list(lamp.pos), "on": lamp.on, "off": lamp.off, "turn_ons": lamp.turn_ons}
                for lamp in self.lamps
            ],
        }


def region_of(spec: TaskSpec) -> Region:
    """The task's build region."""
    return Region(spec.world.anchor, spec.world.radius)


def horizontal_distance(a: Pos, b: Pos) -> int:
    """Manhattan distance in x and z."""
    return abs(a[0] - b[0]) + abs(a[2] - b[2])


def connections(block: Block) -> int:
    """How many sides a dust block connects to (its shape in a simulated world)."""
    return sum(block.get(side) != "none" for side in HORIZONTAL)


def constraint_failures(spec: TaskSpec, device: Mapping[Pos, Block]) -> list[str]:
    """The rules every device of the task must keep, before anything runs."""
    failures: list[str] = []
    allowed = set(spec.allowed_blocks)
    for pos, block in sorted(device.items()):
        kind = "minecraft:redstone_torch" if block.id == WALL_TORCH else block.id
        if kind not in allowed:
            failures.append(f"palette: {block.id} at {format_pos(pos)} is not an allowed block")
    region = region_of(spec)
    outside = region.outside(device)
    if outside:
        where = ", ".join(map(format_pos, outside[:5])) + (" ..." if len(outside) > 5 else "")
        failures.append(f"region: {len(outside)} block(s) outside the build region ({region.describe()}): {where}")
    button = the_button(device)
    if isinstance(button, str):
        failures.append(f"button: {button}")
    lamps = lamps_of(device)
    if len(lamps) != spec.lamps:
        failures.append(f"lamps: the device has {len(lamps)} redstone_lamps; the task asks for exactly {spec.lamps}")
    for x, y, z in lamps:
        above = device.get((x, y + 1, z))
        if above is not None:
            failures.append(f"lamp top: {above.id} stands on the lamp at {format_pos((x, y, z))}")
    if not isinstance(button, str):
        failures += _placement_failures(spec, button, lamps)
    return failures


def _placement_failures(spec: TaskSpec, button: Pos, lamps: list[Pos]) -> list[str]:
    contract = spec.contract
    failures: list[str] = []
    if contract.type == "branch_reach":
        for lamp in lamps:
            if lamp[0] == button[0] or lamp[2] == button[2]:
                failures.append(f"off-axis: the lamp at {format_pos(lamp)} shares x or z with the button")
        farthest = max((horizontal_distance(lamp, button) for lamp in lamps), default=0)
        if contract.max_reach_blocks is not None and farthest < contract.max_reach_blocks:
            failures.append(
                f"reach: the farthest lamp is {farthest} blocks from the button; at least "
                f"{contract.max_reach_blocks} are required"
            )
    if contract.type == "equal_delay" and contract.target_distances:
        failures += _bucket_failures(contract.target_distances, contract.num_outputs, button, lamps)
    return failures


def bucket_of(distance: int, buckets: list[int]) -> int | None:
    """The target distance within one block of ``distance``, if any."""
    for bucket in buckets:
        if abs(distance - bucket) <= 1:
            return bucket
    return None


def _bucket_failures(buckets: list[int], lamps_wanted: int, button: Pos, lamps: list[Pos]) -> list[str]:
    failures: list[str] = []
    counts = dict.fromkeys(buckets, 0)
    for lamp in lamps:
        distance = horizontal_distance(lamp, button)
        bucket = bucket_of(distance, buckets)
        if bucket is None:
            failures.append(
                f"distance: the lamp at {format_pos(lamp)} is {distance} blocks from the button, in no bucket "
                f"({', '.join(map(str, buckets))}, each +-1)"
            )
        else:
            counts[bucket] += 1
    each = lamps_wanted // len(buckets)
    for bucket, count in counts.items():
        if count != each:
            failures.append(f"distance: {count} lamps at distance {bucket} (+-1); the task asks for {each}")
    return failures


def run_trial(device: Mapping[Pos, Block], spec: TaskSpec, button: Pos) -> tuple[Simulator, int]:
    """Load the device in the lab, press the button at tick 0 and run until quiet; the simulator and the
    number of ticks run."""
    sim = Simulator(lab_world(device, region_of(spec)))
    sim.press(button)
    sim.run_until_quiet(RUN_LIMIT, at_least=QUIET_AFTER, chunk=QUIET_AFTER)
    return sim, sim.time


def lamp_times(sim: Simulator, lamps: list[Pos]) -> list[LampTimes]:
    """Each lamp's on- and off-ticks after the press, from the trace."""
    times = {pos: LampTimes(pos) for pos in lamps}
    for change in sim.trace:
        lamp = times.get(change.pos)
        if lamp is None or change.after.id != LAMP:
            continue
        lit = change.after.get("lit") == "true"
        if lit:
            lamp.turn_ons += 1
            if lamp.on is None:
                lamp.on = change.tick
        elif lamp.on is not None and lamp.off is None:
            lamp.off = change.tick
    return [times[pos] for pos in lamps]


def evaluate(spec: TaskSpec, device: Mapping[Pos, Block]) -> Evaluation:
    """Check a device against its task: constraints, then one press and the family's timing contract."""
    failures = constraint_failures(spec, device)
    button = the_button(device)
    if isinstance(button, str):
        return Evaluation(False, failures)
    try:
        before = Simulator(lab_world(device, region_of(spec)))
        sim, ticks = run_trial(device, spec, button)
    except UserError as err:
        return Evaluation(False, [*failures, f"world: {err}"])
    lamps = lamps_of(device)
    lit_at_rest = [pos for pos in lamps if before.block(pos).get("lit") == "true"]
    failures += [f"rest: the lamp at {format_pos(pos)} is lit before the press" for pos in lit_at_rest]
    times = lamp_times(sim, lamps)
    failures += [f"dark: the lamp at {format_pos(t.pos)} never turns on" for t in times if t.on is None]
    lit = [t for t in times if t.on is not None]
    if lit:
        failures += _timing_failures(spec, lit, sim)
    return Evaluation(not failures, failures, times, ticks)


def _timing_failures(spec: TaskSpec, lit: list[LampTimes], sim: Simulator) -> list[str]:
    contract = spec.contract
    tolerance = contract.tolerance_ticks
    if contract.type == "sequential":
        return _sequence_failures(contract.delays_ticks or [], tolerance, lit)
    failures = _skew_failures(tolerance, lit)
    if contract.type == "branch_reach" and not _t_junction_carries_power(sim):
        failures.append("T-junction: no dust block with three or more connections carries the signal")
    if contract.type == "pulse":
        failures += _pulse_failures(contract.tau_ticks or 0, contract.max_onset_ticks or 0, tolerance, lit)
    return failures


def _skew_failures(tolerance: int, lit: list[LampTimes]) -> list[str]:
    first = min(lit, key=lambda t: (t.on, t.pos))
    last = max(lit, key=lambda t: (t.on, t.pos))
    assert first.on is not None and last.on is not None
    if last.on - first.on <= tolerance:
        return []
    return [
        f"skew: the lamp at {format_pos(first.pos)} turns on at tick {first.on} and the lamp at "
        f"{format_pos(last.pos)} at tick {last.on}: {last.on - first.on} gt apart, more than {tolerance}"
    ]


def _sequence_failures(delays: list[int], tolerance: int, lit: list[LampTimes]) -> list[str]:
    order = sorted(lit, key=lambda t: (t.on, t.pos))
    failures: list[str] = []
    for stage, (earlier, later) in enumerate(pairwise(order), start=1):
        if stage > len(delays):
            break
        assert earlier.on is not None and later.on is not None
        gap, wanted = later.on - earlier.on, RT * delays[stage - 1]
        if abs(gap - wanted) > tolerance:
            failures.append(
                f"sequence: lamp {stage} ({format_pos(earlier.pos)}) turns on at tick {earlier.on} and lamp "
                f"{stage + 1} ({format_pos(later.pos)}) at tick {later.on}: {gap} gt apart; the delay is "
                f"{delays[stage - 1]} rt = {wanted} gt (+-{tolerance})"
            )
    return failures


def _pulse_failures(tau: int, onset: int, tolerance: int, lit: list[LampTimes]) -> list[str]:
    failures: list[str] = []
    for lamp in lit:
        where = format_pos(lamp.pos)
        assert lamp.on is not None
        if lamp.on > RT * onset + tolerance:
            failures.append(f"onset: the lamp at {where} turns on at tick {lamp.on}, later than {onset} rt")
        if lamp.turn_ons > 1:
            failures.append(f"pulse: the lamp at {where} turns on {lamp.turn_ons} times")
        if lamp.duration is None:
            failures.append(f"pulse: the lamp at {where} turns on at tick {lamp.on} and never turns off")
        elif abs(lamp.duration - RT * tau) > tolerance:
            failures.append(
                f"pulse: the lamp at {where} is on from tick {lamp.on} to {lamp.off} ({lamp.duration} gt); "
                f"tau is {tau} rt = {RT * tau} gt (+-{tolerance})"
            )
    return failures


def _t_junction_carries_power(sim: Simulator) -> bool:
    powered = {change.pos for change in sim.trace if change.after.id == WIRE and change.after.get("power") != "0"}
    return any(connections(sim.block(pos)) >= 3 for pos in powered)
