"""SciCrafter's failure taxonomy (Appendix I, Table 11) as devices the simulator runs.

The paper built a working 32-lamp "broadcast" device (case W) and 12 broken variants of it, and reported how
many lamps each one lights. Each case here is a device file in ``taxonomy/`` (the simulator's line format,
without the lab floor). Cases 4, 5, 6, 7, 8, 9 and 10 are W with one described change, recorded as an
:class:`Edit` so the tests can rebuild them from W; cases 1, 2, 3, 11 and 12 are devices of their own.

A device is scored the same way for every case: load it on the lab floor, let it settle, press its one
button at tick 0, run 100 game ticks, and count the lamps that were lit at any tick of that run.
docs/redstone-taxonomy.md describes the devices and the choices the paper left open.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from discogym.core import UserError
from discogym.suites.redstone.blocks import LAMP, WIRE, Block, Pos, parse_block
from discogym.suites.redstone.engine import Simulator
from discogym.suites.redstone.lab import lab_world, lamps_of, positions_of, read_device, the_button
from discogym.suites.redstone.pictures import top_down_png

FIXTURES = Path(__file__).with_name("taxonomy")
RUN_TICKS = 100  # game ticks run after the press
PICTURE_TICK = 2  # the pictures show the device this many game ticks after the press
PICTURED = ("W", "9", "1", "3")  # the working device and one failure of each category

CATEGORIES = {1: "structural", 2: "signal propagation", 3: "wire semantics"}

Device = dict[Pos, Block]


@dataclass(frozen=True)
class Edit:
    """How a variant is made from W: W's blocks that ``removes`` picks are taken away, then the blocks in
    ``places`` are put in (replacing whatever stood there)."""

    summary: str
    removes: Callable[[Pos, Block], bool] | None = None
    places: tuple[tuple[Pos, str], ...] = ()

    def apply(self, device: Mapping[Pos, Block]) -> Device:
        """The edited copy of ``device``."""
        removes = self.removes
        result = {pos: block for pos, block in device.items() if removes is None or not removes(pos, block)}
        for pos, text in self.places:
            result[pos] = parse_block(text)
        return result


def is_axis(pos: Pos) -> bool:
    """Whether ``pos`` is on one of W's four axis lines (y=4, x=0 or z=0, up to distance 9 from the centre)."""
    x, y, z = pos
    return y == 4 and ((x == 0 and 0 < abs(z) <= 9) or (z == 0 and 0 < abs(x) <= 9))


def is_perimeter(pos: Pos) -> bool:
    """Whether ``pos`` is on one of W's perimeter rails (x=+-10, or z=+-9 off the axis)."""
    x, _, z = pos
    return abs(x) == 10 or (abs(z) == 9 and x != 0)


def _bridge_wire(pos: Pos, block: Block) -> bool:
    x, y, z = pos
    return block.id == WIRE and y == 4 and abs(x) + abs(z) == 1


def _branch_wire(pos: Pos, block: Block) -> bool:
    return block.id == WIRE and not is_axis(pos)


def _perimeter_wire(pos: Pos, block: Block) -> bool:
    return block.id == WIRE and is_perimeter(pos)


def _wire_beyond_core(pos: Pos, block: Block) -> bool:
    return block.id == WIRE and max(abs(pos[0]), abs(pos[2])) > 3


_REVERSED_REPEATERS = (
    ((5, 4, 0), "minecraft:redstone_repeater[delay=1,facing=east]"),
    ((-5, 4, 0), "minecraft:redstone_repeater[delay=1,facing=west]"),
    ((0, 4, 5), "minecraft:redstone_repeater[delay=1,facing=south]"),
    ((0, 4, -5), "minecraft:redstone_repeater[delay=1,facing=north]"),
)
# Beside the last wire of 12 dead-end branches of W, at right angles to the branch.
TRAPS: tuple[Pos, ...] = (
    (5, 4, -1), (5, 4, 1), (-5, 4, -1), (-5, 4, 1),  # the short branches at x=+-6
    (7, 4, -4), (7, 4, 5), (-7, 4, -4), (-7, 4, 5),  # the long branches at x=+-8
    (5, 4, -6), (-5, 4, -6), (5, 4, 6), (-5, 4, 6),  # the long branches at z=+-7
)  # fmt: skip


@dataclass(frozen=True)
class Case:
    """One row of Table 11: the paper's description and count, and the device file that reproduces it."""

    id: str  # "W", or "1".."12"
    name: str
    category: int  # 1, 2 or 3; 0 for W
    failure_mode: str  # Table 11's short label
    capacity_gap: str  # the capacity the failure maps to; "-" for W
    paper_lit: int
    paper_total: int
    fixture: str  # file name in FIXTURES
    edit: Edit | None = None  # for the variants of W

    @property
    def category_label(self) -> str:
        """``"1 structural"`` and so on; ``"-"`` for W."""
        return f"{self.category} {CATEGORIES[self.category]}" if self.category else "-"

    @property
    def path(self) -> Path:
        """The device file."""
        return FIXTURES / self.fixture

    def device(self) -> Device:
        """The device's blocks (without the floor)."""
        return read_device(self.path)


CASES: tuple[Case, ...] = (
    Case("W", "Working Reference", 0, "None (correct)", "-", 32, 32, "w_working.txt"),
    Case(
        "4", "Glass Pedestal", 1, "Transparent center block", "Application", 0, 32, "case04_glass_pedestal.txt",
        Edit("the centre stone under the button is glass", places=(((0, 4, 0), "minecraft:glass"),)),
    ),
    Case(
        "5", "Broken Bridge", 1, "Missing center junction", "Application", 0, 32, "case05_broken_bridge.txt",
        Edit("the 4 wires next to the centre stone are removed", removes=_bridge_wire),
    ),
    Case(
        "8", "Axes Only", 1, "No branch wires", "Application", 0, 32, "case08_axes_only.txt",
        Edit("every wire off the four axis lines is removed (the 32 axis wires stay)", removes=_branch_wire),
    ),
    Case(
        "9", "Backwards Repeaters", 1, "Reversed repeater dir.", "Application", 8, 32,
        "case09_backwards_repeaters.txt",
        Edit("the 4 axis repeaters face the other way", places=_REVERSED_REPEATERS),
    ),
    Case("1", "Long Snake", 2, "Signal decay (no amp.)", "Discovery", 10, 32, "case01_long_snake.txt"),
    Case(
        "6", "Missing Rails", 2, "Incomplete coverage", "Discovery", 24, 32, "case06_missing_rails.txt",
        Edit("the 26 perimeter rail wires are removed", removes=_perimeter_wire),
    ),
    Case(
        "7", "Tiny Core", 2, "Insufficient wire reach", "Discovery", 8, 32, "case07_tiny_core.txt",
        Edit("only the 20 wires within 3 blocks of the centre stay", removes=_wire_beyond_core),
    ),
    Case("2", "Islands", 3, "Disconnected sections", "Identification", 16, 32, "case02_islands.txt"),
    Case("3", "Parallel Lines", 3, "Wire direction mismatch", "Identification", 14, 32, "case03_parallel_lines.txt"),
    Case(
        "10", "Connection Trap", 3, "Auto-connect redirect", "Identification", 20, 32,
        "case10_connection_trap.txt",
        Edit(
            "12 trap wires beside the ends of dead-end branches",
            places=tuple((pos, "minecraft:redstone_wire") for pos in TRAPS),
        ),
    ),
    Case("11", "Dead-End Hooks", 3, "Dead-end flow reversal", "Identification", 12, 20, "case11_dead_end_hooks.txt"),
    Case("12", "The Ring", 3, "Loop flow trap", "Identification", 0, 16, "case12_the_ring.txt"),
)  # fmt: skip


def case(case_id: str) -> Case:
    """The case with this id (``"W"`` or ``"1"``..``"12"``), or a UserError listing them."""
    for candidate in CASES:
        if candidate.id.lower() == case_id.strip().lower():
            return candidate
    raise UserError(f"no taxonomy case {case_id!r}; the cases are {', '.join(c.id for c in CASES)}")


def _pressed(device: Mapping[Pos, Block]) -> tuple[Simulator, set[Pos]]:
    """A simulator of ``device`` on the lab floor with its button just pressed, and the lamps lit before."""
    button = the_button(device)
    if isinstance(button, str):
        raise UserError(button)
    sim = Simulator(lab_world(device))
    lit = {pos for pos in lamps_of(device) if sim.block(pos).get("lit") == "true"}
    sim.press(button)
    return sim, lit


def lit_lamp_positions(device: Mapping[Pos, Block], ticks: int = RUN_TICKS) -> set[Pos]:
    """The device's lamps that are lit at any tick from the press at tick 0 to ``ticks`` game ticks later."""
    sim, lit = _pressed(device)
    sim.run(ticks)
    lit.update(change.pos for change in sim.trace if change.after.id == LAMP and change.after.get("lit") == "true")
    return lit


def lit_lamps(device: Mapping[Pos, Block], ticks: int = RUN_TICKS) -> tuple[int, int]:
    """(lamps lit at any tick of the run after the press, lamps in the device)."""
    return len(lit_lamp_positions(device, ticks)), len(lamps_of(device))


@dataclass(frozen=True)
class CaseResult:
    """What the simulator makes of one case's device."""

    case: Case
    lit: int
    total: int
    wires: int

    @property
    def agrees(self) -> bool:
        """Whether the simulator lights the paper's number of lamps out of the paper's total."""
        return (self.lit, self.total) == (self.case.paper_lit, self.case.paper_total)


def run_case(item: Case) -> CaseResult:
    """Simulate one case's device."""
    device = item.device()
    lit, total = lit_lamps(device)
    return CaseResult(item, lit, total, len(positions_of(device, WIRE)))


def run_taxonomy() -> list[CaseResult]:
    """Every case's result, in Table 11's order."""
    return [run_case(item) for item in CASES]


def taxonomy_document(results: list[CaseResult] | None = None) -> list[dict[str, Any]]:
    """The results as JSON-able rows (simulated now unless ``results`` are given)."""
    rows = []
    for result in results if results is not None else run_taxonomy():
        item = result.case
        rows.append(
            {
                "case": item.id,
                "name": item.name,
                "category": item.category,
                "category_label": item.category_label,
                "failure_mode": item.failure_mode,
                "capacity_gap": item.capacity_gap,
                "paper_lit": item.paper_lit,
                "paper_total": item.paper_total,
                "lit": result.lit,
                "total": result.total,
                "agrees": result.agrees,
                "wires": result.wires,
                "fixture": item.fixture,
                "change_from_w": item.edit.summary if item.edit else None,
            }
        )
    return rows


def taxonomy_table(results: list[CaseResult] | None = None) -> Table:
    """The results as a table: each case with the paper's lit count beside the simulator's."""
    table = Table("cat.", "case", "name", "failure mode", "capacity gap", "paper", "simulated", "wires")
    table.title = "SciCrafter failure taxonomy (Table 11): lamps lit after one press"
    for result in results if results is not None else run_taxonomy():
        item = result.case
        simulated = f"{result.lit}/{result.total}"
        table.add_row(
            item.category_label,
            item.id,
            item.name,
            item.failure_mode,
            item.capacity_gap,
            f"{item.paper_lit}/{item.paper_total}",
            simulated if result.agrees else Text(simulated, style="red"),
            str(result.wires),
        )
    return table


def write_pictures(out_dir: Path, cases: tuple[str, ...] = PICTURED, tick: int = PICTURE_TICK) -> list[Path]:
    """Top-down pictures of the given cases ``tick`` game ticks after the press, as ``taxonomy-<case>.png``
    in ``out_dir``; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for case_id in cases:
        item = case(case_id)
        sim, _ = _pressed(item.device())
        sim.run(tick)
        path = out_dir / f"taxonomy-{item.id.lower()}.png"
        path.write_bytes(top_down_png(sim.snapshot()))
        written.append(path)
    return written
