"""What every petri simulation ("model organism") is: a parameter space, a control configuration, a metric
vector with a target metric, a seeded batch function vectorized across replicates, and its literature checks.

A simulation is pure: the metric vector of a replicate depends only on the resolved configuration and that
replicate's seed, never on the other replicates in the batch, the process, or PYTHONHASHSEED.
"""

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from discogym.core import UserError

Role = Literal["driver", "decoy", "fixed"]


class Param(BaseModel):
    """One parameter of a simulation.

    ``role`` is what the task generator may do with it: a ``driver`` moves the target metric when set to one
    of its ``test_values``; a ``decoy`` is plausible but barely moves it; ``fixed`` is never a candidate.
    ``test_values`` are informative values inside [low, high] that differ from the control value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    low: float
    high: float
    kind: Literal["float", "int"] = "float"
    unit: str = ""
    meaning: str
    role: Role = "fixed"
    test_values: tuple[float, ...] = ()

    def check(self, value: float) -> float:
        """``value`` as this parameter takes it, or a UserError saying what is legal."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise UserError(f"parameter '{self.name}' takes a number, got {value!r}")
        if not self.low <= value <= self.high:
            raise UserError(f"parameter '{self.name}' must lie in [{self.low:g}, {self.high:g}], got {value:g}")
        if self.kind == "int":
            if float(value) != int(value):
                raise UserError(f"parameter '{self.name}' takes a whole number, got {value:g}")
            return float(int(value))
        return float(value)


class Check(BaseModel):
    """One literature check: what is claimed, what was measured, the threshold, and whether it passed."""

    model_config = ConfigDict(extra="forbid")

    simulation: str
    name: str
    claim: str
    reference: str
    measured: float
    threshold: str = Field(description="the pass condition on `measured`, e.g. '> 0.8'")
    passed: bool
    caveat: str = ""


def make_check(
    simulation: str, name: str, claim: str, reference: str, measured: float, threshold: str, passed: bool, caveat: str
) -> Check:
    """A :class:`Check`, with numpy figures turned into plain numbers."""
    return Check(
        simulation=simulation,
        name=name,
        claim=claim,
        reference=reference,
        measured=float(measured),
        threshold=threshold,
        passed=bool(passed),
        caveat=caveat,
    )


class Simulation(ABC):
    """Base class of the five simulations. Subclasses set the class attributes and write :meth:`batch`."""

    name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]
    control: ClassVar[Mapping[str, float]]
    metrics: ClassVar[tuple[str, ...]]
    target: ClassVar[str]
    # Larger batches are run in chunks of this many replicates: past it the arrays outgrow the processor's
    # caches and a batch gets slower per replicate (rows do not depend on the chunking).
    max_batch: ClassVar[int] = 12

    @abstractmethod
    def batch(self, config: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
        """The metric vectors of one replicate per seed: shape (len(seeds), len(metrics)), all finite.

        ``config`` is complete and checked (:meth:`resolve`); ``seeds`` is an int64 array. Row i must depend only
        on ``config`` and ``seeds[i]``.
        """

    @abstractmethod
    def validate(self, plot_dir: Path | None = None) -> list[Check]:
        """Run the literature checks; with ``plot_dir``, also write ``plot_dir/<name>.png``."""

    def param(self, name: str) -> Param:
        """The parameter called ``name``, or a UserError listing them."""
        for param in self.params:
            if param.name == name:
                return param
        raise UserError(f"{self.name} has no parameter '{name}'; parameters: {', '.join(p.name for p in self.params)}")

    def resolve(self, overrides: Mapping[str, float] | None = None) -> dict[str, float]:
        """The control configuration with ``overrides`` applied, every value checked."""
        config = {param.name: param.check(self.control[param.name]) for param in self.params}
        for name, value in (overrides or {}).items():
            config[name] = self.param(name).check(value)
        return config

    def run(self, overrides: Mapping[str, float] | None, seeds: Sequence[int]) -> np.ndarray:
        """Metric vectors (one row per seed) for the control configuration with ``overrides``."""
        seed_array = np.asarray(list(seeds), dtype=np.int64)
        if seed_array.ndim != 1 or seed_array.size == 0 or (seed_array < 0).any():
            raise UserError("seeds must be a non-empty list of non-negative integers")
        config = self.resolve(overrides)
        chunks = [seed_array[i : i + self.max_batch] for i in range(0, seed_array.size, self.max_batch)]
        values = np.concatenate([np.asarray(self.batch(config, chunk), dtype=np.float64) for chunk in chunks])
        expected = (seed_array.size, len(self.metrics))
        if values.shape != expected or not np.isfinite(values).all():
            raise RuntimeError(
                f"{self.name}.batch returned shape {values.shape} (expected {expected}) or non-finite values"
            )
        return values


def replicate_rngs(seeds: np.ndarray) -> list[np.random.Generator]:
    """One independent generator per replicate, from that replicate's seed alone."""
    return [np.random.default_rng(int(seed)) for seed in seeds]
