"""petri's task model: a frozen mystery world (:class:`PetriTaskSpec`), and :func:`task_spec`, the world behind a
harness Task. Generation is in :mod:`discogym.suites.petri.generate`, the frozen sets in
:mod:`discogym.suites.petri.frozen`."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from discogym.core import Task
from discogym.suites.petri.boundary import BoundaryTruth
from discogym.suites.petri.sims.base import Simulation

Tier = Literal["L1", "L2", "L3", "L4", "blind"]
Direction = Literal["up", "down"]
Generation = Literal["v0", "v1"]
Band = Literal["easy", "moderate", "hard"]
Magnitude = Literal["small", "medium", "large"]


class Difficulty(BaseModel):
    """How hard a task is: the weakest driver's Cliff's delta, and the oracle power with its band."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cliffs_delta: float
    oracle_power: float
    band: Band


class PetriTaskSpec(BaseModel):
    """A frozen mystery world. Everything below ``candidates`` is hidden from the agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    set: str
    tier: Tier
    simulation: str
    seed: int
    attempt: int
    target: str
    control: dict[str, float]
    candidates: list[str]
    replicate_seeds: list[int]
    changed: dict[str, float]
    reference_values: dict[str, float]
    relative_change: float
    direction: Direction | None = None
    magnitude: Magnitude | None = None
    interaction: Literal["positive", "negative"] | None = None
    interaction_p: float | None = None
    isolating_p_holm: dict[str, float]
    difficulty: Difficulty
    ranges: dict[str, tuple[float, float]] | None = None  # v1: each candidate's lab range; v0: the simulation's
    # blind: every metric the hidden change moves (significantly, on the task's seeds), with its direction; the
    # target is the one it moves most surely, and is not named to the agent
    moved: dict[str, Direction] | None = None
    # L4: the boundary to locate (its value hidden; the world's undisclosed setting is in ``changed``)
    boundary: BoundaryTruth | None = None

    @model_serializer(mode="wrap")
    def _without_absent_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # v0 files and task hashes were written before these fields existed: leave them out where absent.
        data: dict[str, object] = handler(self)
        for name in ("ranges", "moved", "boundary"):
            if data.get(name) is None:
                data.pop(name, None)
        return data

    def base(self, sim: Simulation) -> dict[str, float]:
        """The task's control as overrides on the simulation's own control (empty for v0 tasks)."""
        own = sim.resolve()
        return {name: value for name, value in self.control.items() if own[name] != value}

    def legal_range(self, sim: Simulation, name: str) -> tuple[float, float]:
        """The values ``name`` may take in this world: its lab range, else the simulation's."""
        if self.ranges is not None and name in self.ranges:
            return self.ranges[name]
        param = sim.param(name)
        return param.low, param.high


def task_spec(task: Task) -> PetriTaskSpec:
    """The mystery world behind a harness Task (kept in its ground truth)."""
    return PetriTaskSpec.model_validate(task.ground_truth)
