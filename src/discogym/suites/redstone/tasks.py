"""SciCrafter's task files: five families (A-E) at five levels (L1-L5), and a generator for other levels.

A task file follows the paper's YAML schema (Appendix C.7): identity, world, allowed_blocks, inputs, outputs,
contract, requirements, evaluation_metrics, test_cases, metadata. Units (the spec's "Units"): every delay,
duration and distance-free time in a contract is in redstone ticks (rt, 2 game ticks); ``tolerance_ticks``
is in game ticks (gt, the paper's "+-1 tick (50 ms)"). Each contract says so under ``units``.
"""

from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from discogym.core import Task, UserError
from discogym.suites.redstone.lab import ANCHOR, RADIUS

TASK_DIR = Path(__file__).parent / "tasks"
Family = Literal["A", "B", "C", "D", "E"]
FAMILIES: tuple[Family, ...] = ("A", "B", "C", "D", "E")
LEVELS = ("L1", "L2", "L3", "L4", "L5")
LEVEL_LAMPS = {"L1": 4, "L2": 8, "L3": 16, "L4": 32, "L5": 64}
BRANCH_REACH = {"L1": 8, "L2": 12, "L3": 15, "L4": 18, "L5": 20}
PULSE_TAU = {"L1": 4, "L2": 6, "L3": 8, "L4": 10, "L5": 12}
DISTANCE_BUCKETS = (4, 8, 12, 16)
PALETTE = (
    "minecraft:stone_button",
    "minecraft:redstone_lamp",
    "minecraft:redstone_wire",
    "minecraft:redstone_torch",
    "minecraft:redstone_wall_torch",  # the torch placed on a wall: the same item in the game
    "minecraft:redstone_repeater",
    "minecraft:stone",
    "minecraft:glass",
    "minecraft:air",
)

CONTRACT_TYPES = {"A": "simultaneity", "B": "branch_reach", "C": "sequential", "D": "equal_delay", "E": "pulse"}
SLUGS = {
    "A": "simultaneous_lights",
    "B": "branch_reach",
    "C": "sequential_activation",
    "D": "equal_delay_distribution",
    "E": "pulse_shaping",
}
NAMES = {
    "A": "Simultaneous Lights",
    "B": "Branch Reach (T-junction)",
    "C": "Sequential Activation",
    "D": "Equal-Delay Distribution",
    "E": "Pulse Shaping",
}
DIFFICULTY = {"L1": "beginner", "L2": "easy", "L3": "intermediate", "L4": "advanced", "L5": "expert"}
# One keyword per level: the missing area of knowledge, not the mechanism (family A's are the paper's Table 4).
HINTS: dict[str, tuple[str, ...]] = {
    "A": (
        "Strong-Power-Support-Block",
        "Nested-Hub-Fanout",
        "Signal-Strength-Decay",
        "Attenuation-Aware-Fanout",
        "Repeater-Signal-Regeneration",
    ),
    "B": (
        "T-Junction-Branching",
        "Off-Axis-Routing",
        "Attenuation-Aware-Trunk",
        "Trunk-Signal-Regeneration",
        "Dust-Auto-Connection",
    ),
    "C": (
        "Repeater-Delay-Setting",
        "Delay-Line-Composition",
        "Stage-Isolation",
        "Compact-Delay-Line-Routing",
        "Long-Delay-Line-Layout",
    ),
    "D": (
        "Distance-Buckets",
        "Delay-Compensation",
        "Distance-Delay-Balancing",
        "Attenuation-Versus-Delay",
        "Hierarchical-Delay-Matching",
    ),
    "E": (
        "Lamp-Off-Delay",
        "Pulse-Shortening",
        "Torch-Inverter-Timing",
        "Monostable-Pulse-Width",
        "Button-Pulse-Length",
    ),
}
OBJECTIVES = {
    "A": ["strong_power_support_block", "dust_connectivity", "simple_fanout"],
    "B": ["t_junction_branching", "off_axis_routing", "attenuation_awareness"],
    "C": ["repeater_delay_basic", "ordered_activation"],
    "D": ["delay_compensation_basic", "repeater_as_buffer"],
    "E": ["pulse_shaping", "torch_inverter_timing", "lamp_off_delay"],
}
MAX_STAGE_DELAY = 4  # a repeater's longest delay, in rt
UNITS = {"tolerance_ticks": "game ticks (1 gt = 50 ms)", "delays_and_durations": "redstone ticks (1 rt = 2 gt)"}


class Contract(BaseModel):
    """A family's temporal contract. Delays and durations in rt; the tolerance in gt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["simultaneity", "branch_reach", "sequential", "equal_delay", "pulse"]
    tolerance_ticks: int = Field(default=1, ge=0, le=20)
    num_outputs: int = Field(ge=1, le=200)
    max_reach_blocks: int | None = Field(default=None, ge=1)
    require_t_junction: bool | None = None
    delays_ticks: list[int] | None = None
    target_distances: list[int] | None = None
    tau_ticks: int | None = Field(default=None, ge=1)
    max_onset_ticks: int | None = Field(default=None, ge=0)
    units: dict[str, str] = Field(default_factory=lambda: dict(UNITS))

    @model_validator(mode="after")
    def _fits_its_type(self) -> "Contract":
        needs = {
            "branch_reach": ("max_reach_blocks",),
            "sequential": ("delays_ticks",),
            "equal_delay": ("target_distances",),
            "pulse": ("tau_ticks", "max_onset_ticks"),
        }.get(self.type, ())
        missing = [name for name in needs if getattr(self, name) is None]
        if missing:
            raise ValueError(f"a {self.type} contract needs {', '.join(missing)}")
        if self.delays_ticks is not None:
            if len(self.delays_ticks) != self.num_outputs - 1:
                raise ValueError(f"delays_ticks needs num_outputs - 1 = {self.num_outputs - 1} entries")
            if any(not 1 <= d <= MAX_STAGE_DELAY for d in self.delays_ticks):
                raise ValueError(f"each delay must be 1..{MAX_STAGE_DELAY} rt (one repeater per stage)")
        if self.target_distances is not None and (
            not self.target_distances or self.num_outputs % len(self.target_distances)
        ):
            raise ValueError("num_outputs must be a multiple of the number of target distances")
        return self


class World(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    anchor: tuple[int, int, int] = ANCHOR
    radius: int = Field(default=RADIUS, ge=1, le=32)


class TaskSpec(BaseModel):
    """One task file."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    family: Family
    level: str
    task_name: str
    task_description: str
    difficulty: str = ""
    world: World = World()
    allowed_blocks: list[str] = Field(default_factory=lambda: list(PALETTE))
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    contract: Contract
    requirements: list[str]
    evaluation_metrics: dict[str, Any] = Field(default_factory=dict)
    test_cases: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _matches_family(self) -> "TaskSpec":
        expected = CONTRACT_TYPES[self.family]
        if self.contract.type != expected:
            raise ValueError(f"family {self.family} takes a {expected} contract, not {self.contract.type}")
        return self

    @property
    def lamps(self) -> int:
        return self.contract.num_outputs

    @property
    def hint(self) -> str:
        """The level's hint keyword ('' if the file has none)."""
        return str(self.metadata.get("hint", ""))

    def to_yaml(self) -> str:
        """The task file's text (fixed key order, so a task gives the same bytes every time)."""
        document = self.model_dump(mode="json", exclude_none=True)
        document["contract"] = {k: v for k, v in document["contract"].items() if v is not None}
        return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=110)


def level_delays(lamps: int) -> list[int]:
    """Family C's level schedule: ``[1, 2] x (N/2 - 1) + [1]`` (N = 4 gives [1, 2, 1])."""
    return [1, 2] * (lamps // 2 - 1) + [1] if lamps % 2 == 0 else [1, 2] * (lamps // 2)


def make_task(
    family: str,
    level: str | None = None,
    *,
    lamps: int | None = None,
    tolerance: int = 1,
    reach: int | None = None,
    delays: list[int] | None = None,
    tau: int | None = None,
    distances: list[int] | None = None,
) -> TaskSpec:
    """A task of ``family``: one of the paper's levels (``L1``-``L5``), or other parameters (then ``level`` is
    ``custom``); parameters not given take the level's (or L1's) values. UserError for impossible ones."""
    if family not in FAMILIES:
        raise UserError(f"unknown family {family!r}; families: {', '.join(FAMILIES)}")
    if level is not None and level not in LEVELS:
        raise UserError(f"unknown level {level!r}; levels: {', '.join(LEVELS)}")
    base = level or "L1"
    custom = level is None or any(v is not None for v in (lamps, reach, delays, tau, distances)) or tolerance != 1
    n = lamps if lamps is not None else (len(delays) + 1 if delays else LEVEL_LAMPS[base])
    contract: dict[str, Any] = {"type": CONTRACT_TYPES[family], "tolerance_ticks": tolerance, "num_outputs": n}
    if family == "B":
        contract |= {"max_reach_blocks": reach or BRANCH_REACH[base], "require_t_junction": True}
    elif family == "C":
        contract["delays_ticks"] = delays if delays is not None else level_delays(n)
    elif family == "D":
        contract["target_distances"] = distances or list(DISTANCE_BUCKETS)
    elif family == "E":
        contract |= {"tau_ticks": tau or PULSE_TAU[base], "max_onset_ticks": 2}
    try:
        parsed = Contract.model_validate(contract)
    except ValidationError as err:
        raise UserError(f"cannot make a family {family} task: {_first_error(err)}") from None
    name = "custom" if custom else base
    return _spec(family, name, parsed, HINTS[family][LEVELS.index(base)])


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _task_id(family: str, level: str, contract: Contract) -> str:
    slug = f"{family}_{SLUGS[family]}"
    if level != "custom":
        return f"{slug}_{level}"
    parts = [f"N{contract.num_outputs}"]
    if contract.max_reach_blocks is not None:
        parts.append(f"reach{contract.max_reach_blocks}")
    if contract.tau_ticks is not None:
        parts.append(f"tau{contract.tau_ticks}")
    if contract.delays_ticks is not None and contract.delays_ticks != level_delays(contract.num_outputs):
        parts.append("delays" + "-".join(map(str, contract.delays_ticks)))
    if contract.target_distances is not None and tuple(contract.target_distances) != DISTANCE_BUCKETS:
        parts.append("dist" + "-".join(map(str, contract.target_distances)))
    if contract.tolerance_ticks != 1:
        parts.append(f"tol{contract.tolerance_ticks}")
    return "_".join([slug, *parts])


def _spec(family: Family, level: str, contract: Contract, hint: str) -> TaskSpec:
    n = contract.num_outputs
    tolerance = contract.tolerance_ticks
    title = f"{NAMES[family]} (N={n})"
    if contract.delays_ticks is not None:
        title = f"{NAMES[family]} (N={n}, delays={_short(contract.delays_ticks)})"
    if contract.tau_ticks is not None:
        title = f"{NAMES[family]} (N={n}, tau={contract.tau_ticks} ticks)"
    checks = _checks(family, contract)
    return TaskSpec(
        task_id=_task_id(family, level, contract),
        family=family,
        level=level,
        task_name=title,
        task_description=_description(family, contract),
        difficulty=DIFFICULTY.get(level, "custom"),
        inputs={"button": {"type": "minecraft:stone_button", "quantity": 1}},
        outputs={"lamps": {"type": "minecraft:redstone_lamp", "quantity": n}},
        contract=contract,
        requirements=_requirements(family, contract),
        evaluation_metrics={
            name: {"description": text, "weight": 1.0, "check_method": method, "params": {"tolerance_ticks": tolerance}}
            for name, text, method in checks
        },
        test_cases=[
            {
                "name": "single_press",
                "sequence": [
                    {"action": "press_button"},
                    {"action": checks[-1][2], "params": {"tolerance_ticks": tolerance}},
                ],
            }
        ],
        metadata={
            "learning_objectives": OBJECTIVES[family],
            "hint": hint,
            "estimated_difficulty_score": float(LEVELS.index(level) + 1) if level in LEVELS else None,
        },
    )


def _short(delays: list[int]) -> str:
    return "[" + ", ".join(map(str, delays)) + "]"


def _gt(count: int) -> str:
    return f"{count} game tick" if count == 1 else f"{count} game ticks"


def _description(family: str, c: Contract) -> str:
    n, tol = c.num_outputs, _gt(c.tolerance_ticks)
    if family == "A":
        return (
            f"Build a redstone circuit that turns on {n} lamps together after a single button press: every lamp's "
            f"first on-tick within {tol} of every other's."
        )
    if family == "B":
        return (
            f"Build a trunk-and-branch wiring layout that reaches {n} lamps none of which shares an x or z coordinate "
            f"with the button, the farthest at least {c.max_reach_blocks} blocks (Manhattan distance) from it. The "
            f"wiring must contain at least one dust T-junction, and all lamps must turn on within {tol} "
            f"of each other."
        )
    if family == "C":
        return (
            f"After a button press, activate {n} lamps in order: lamp i+1 turns on the given delay after lamp i "
            f"(delays in redstone ticks: {_short(c.delays_ticks or [])}; tolerance {tol})."
        )
    if family == "D":
        distances = ", ".join(map(str, c.target_distances or []))
        return (
            f"Place {n} lamps in equal numbers at horizontal Manhattan distances {distances} from the button (each "
            f"within one block of its distance) and make all of them turn on within {tol} of each other "
            f"after a press."
        )
    return (
        f"On a button press, turn on all {n} lamps within {c.max_onset_ticks} redstone ticks, keep each on for "
        f"{c.tau_ticks} redstone ticks (tolerance {tol}) and then off; the lamps' on-times may differ by at most "
        f"{tol}."
    )


def _requirements(family: str, c: Contract) -> list[str]:
    n = c.num_outputs
    common = [
        "No block may be placed directly on top of a redstone_lamp (the space above each lamp must remain air).",
        f"Exactly one stone_button and exactly {n} redstone_lamps.",
        "Construction must fit within the radius-10 build region",
        "Use only the allowed block palette",
    ]
    specific = {
        "A": [f"All {n} lamps must turn on within +-{c.tolerance_ticks} tick of each other after the button press"],
        "B": [
            f"All {n} lamps must turn on within +-{c.tolerance_ticks} tick of each other after the button press",
            "At least one T-junction (fan-out) must be present in the wiring topology",
            "No lamp may share an x or z coordinate with the button",
            f"The farthest lamp must be at least {c.max_reach_blocks} blocks (Manhattan) from the button",
        ],
        "C": ["Lamps must activate in order with the specified inter-stage delays"],
        "D": [
            f"{n // len(c.target_distances or [1])} lamps at each target distance from the button (within 1 block)",
            f"All {n} lamps must turn on within +-{c.tolerance_ticks} tick of each other",
        ],
        "E": [
            f"Every lamp turns on within {c.max_onset_ticks} redstone ticks of the press",
            f"Every lamp stays on for {c.tau_ticks} redstone ticks, then turns off",
            f"All lamps turn on within +-{c.tolerance_ticks} tick of each other",
        ],
    }[family]
    return [common[0], *specific, *common[1:]]


def _checks(family: str, c: Contract) -> list[tuple[str, str, str]]:
    all_on = ("functional_correctness", "Verify all lamps activate", "verify_all_lamps_activated")
    skew = ("simultaneity", f"Max skew across lamps <= {c.tolerance_ticks} tick", "verify_max_skew_within")
    if family == "C":
        return [("functional_correctness", "Verify order and timing per delays", "verify_sequence_with_delays")]
    if family == "E":
        return [all_on, ("pulse_width", f"Each lamp on for {c.tau_ticks} rt", "verify_pulse_width")]
    if family == "B":
        return [all_on, skew, ("topology", "A dust T-junction on the way to the lamps", "verify_t_junction")]
    if family == "D":
        return [all_on, ("distance_buckets", "N/4 lamps per distance bucket", "verify_distance_buckets"), skew]
    return [all_on, skew]


def official_tasks() -> list[TaskSpec]:
    """The 25 tasks of the paper, family by family, level by level."""
    return [make_task(family, level) for family in FAMILIES for level in LEVELS]


def parse_task(text: str, source: str = "task") -> TaskSpec:
    """A task file's text as a TaskSpec; UserError with the first problem."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise UserError(f"{source} is not valid YAML: {err}") from None
    except RecursionError:
        raise UserError(f"{source} is nested too deeply to be a task file") from None
    if not isinstance(document, dict):
        raise UserError(f"{source}: a task file is a YAML mapping (task_id, family, contract, ...)")
    try:
        return TaskSpec.model_validate(document)
    except ValidationError as err:
        raise UserError(f"{source}: {_first_error(err)}") from None


def read_task(path: Path) -> TaskSpec:
    """A task file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(f"cannot read task file {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise UserError(f"task file {path} is not UTF-8 text (byte {err.start}): give a .yaml task file") from None
    return parse_task(text, path.name)


@cache
def packaged_tasks() -> tuple[TaskSpec, ...]:
    """The 25 task files shipped with the package, in family and level order."""
    return tuple(read_task(TASK_DIR / f"{spec.task_id}.yaml") for spec in official_tasks())


def task_spec(task: Task) -> TaskSpec:
    """The task file behind a harness Task."""
    return TaskSpec.model_validate(task.params["spec"])


# The training source's ranges: the paper's own kinds of task (L1 to between L2 and L3 in lamps, L1-L5 in reach
# and on-time, family D's distances a part of the paper's buckets), within what the reference builder solves (its
# comb holds 16 lamps, and it needs the buckets' spacing), so that every training task is known to be solvable.
TRAINING_LAMPS = (4, 24)
TRAINING_COMB = 16
TRAINING_REACH = (6, 20)
TRAINING_TAU = (4, 12)


def training_spec(rng: np.random.Generator) -> TaskSpec:
    """A task of a family drawn from ``rng``, its parameters drawn within the training ranges."""
    family = FAMILIES[int(rng.integers(len(FAMILIES)))]
    lamps = int(rng.integers(TRAINING_LAMPS[0], TRAINING_LAMPS[1] + 1))
    if family == "B":
        return make_task("B", lamps=lamps, reach=int(rng.integers(TRAINING_REACH[0], TRAINING_REACH[1] + 1)))
    if family == "C":
        return make_task("C", lamps=lamps, delays=[int(d) for d in rng.integers(1, MAX_STAGE_DELAY + 1, lamps - 1)])
    if family == "D":
        buckets = int(rng.integers(1, len(DISTANCE_BUCKETS) + 1))
        distances = sorted(int(d) for d in rng.choice(DISTANCE_BUCKETS, buckets, replace=False))
        per_bucket = int(rng.integers(1, TRAINING_COMB // buckets + 1))
        return make_task("D", lamps=buckets * per_bucket, distances=distances)
    if family == "E":
        return make_task("E", lamps=lamps, tau=int(rng.integers(TRAINING_TAU[0], TRAINING_TAU[1] + 1)))
    return make_task(family, lamps=lamps)


def problem_of(spec: TaskSpec) -> dict[str, Any]:
    """What makes a task the problem it is: its family and contract (its id, level and wording aside)."""
    return {"family": spec.family, "contract": spec.contract.model_dump(mode="json", exclude={"units"})}
