"""The petri suite: the frozen mystery worlds as tasks, the blind harness as environment, the paper's scoring."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from discogym.core import (
    AgentFactory,
    Condition,
    Env,
    Episode,
    Paper,
    Protocol,
    ReportTable,
    Score,
    Suite,
    Task,
    UserError,
)
from discogym.core.running.training import parse_training_split, training_tasks
from discogym.suites.petri import agents, frozen, protocols, verdict
from discogym.suites.petri.env import PetriEnv
from discogym.suites.petri.protocols import SWEEP_SET, SWEEP_SETS
from discogym.suites.petri.report import petri_tables
from discogym.suites.petri.sims.registry import get_simulation
from discogym.suites.petri.tasks import PetriTaskSpec, task_spec


def task_of(spec: PetriTaskSpec) -> Task:
    """A frozen task as the harness's Task: what an agent may see in ``params``, the spec as ground truth."""
    target = None if spec.tier == "blind" else spec.target  # a blind-metric world does not name it
    visible: dict[str, object] = {
        "tier": spec.tier,
        "simulation": spec.simulation,
        "target": target,
        "control": spec.control,
        "candidates": spec.candidates,
    }
    if spec.boundary is not None:  # the question, not its answer; the world's undisclosed setting left out
        visible["boundary"] = spec.boundary.model_dump(exclude={"value", "tolerance"})
        visible["control"] = {name: v for name, v in spec.control.items() if name not in spec.changed}
    candidates = ", ".join(spec.candidates)
    brief = f"{spec.tier} {spec.simulation}: which of {candidates} changed ({target or 'which metric?'})"
    return Task(
        id=spec.id,
        suite="petri",
        split=spec.set,
        brief=brief,
        params=visible,
        ground_truth=spec.model_dump(mode="json"),
    )


class PetriSuite(Suite):
    """petri-bench: find which hidden parameter of a simulation changed, by blind controlled experiments."""

    name = "petri"
    aliases = ("petri-bench",)
    description = "find which hidden simulation parameter changed, by controlled experiments with statistics"
    version = "2"  # docs/petri.md, "Versions"
    papers = (
        Paper(
            key="sozudogru2026petribench",
            title="petri-bench: Scoring the Scientific Method of LLM Agents on Procedurally Generated "
            "Causal-Discovery Tasks",
            authors=("Baris Sozudogru",),
            year=2026,
        ),
    )
    scorer_version = "1"  # raised when score() or audit() changes (docs/writing-a-suite.md)
    score_range = verdict.SCORE_RANGE

    def splits(self) -> list[str]:
        return [*frozen.set_names(), SWEEP_SET]

    def tasks(self, split: str) -> list[Task]:
        if (training := parse_training_split(split)) is not None:
            return training_tasks(self, *training)
        if split == SWEEP_SET:  # the paper's sweep: three frozen sets as one, reported as one set
            return [task.model_copy(update={"split": SWEEP_SET}) for name in SWEEP_SETS for task in self.tasks(name)]
        if split not in frozen.FROZEN_SETS:
            raise UserError(f"petri has no task set '{split}'; sets: {', '.join(self.splits())}")
        return [task_of(spec) for spec in frozen.load_set(split).tasks]

    def training_source(self, seed: int) -> Iterator[Task]:
        """v1 worlds of every tier and simulation from seeds above every frozen set's (frozen.training_specs)."""
        return (task_of(spec) for spec in frozen.training_specs(seed))

    def problem(self, task: Task) -> Any:
        return frozen.problem_of(task_spec(task))

    def evaluation_splits(self) -> list[str]:
        return frozen.set_names()  # the sweep holds three of them again

    def protocols(self) -> list[Protocol]:
        return protocols.protocols()

    def conditions(self) -> list[Condition]:
        return [Condition(name="default", description="the paper's blind harness: 8 calls, statistics only")]

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        # The world is fixed by the task: every experiment runs on its 12 replicate seeds.
        spec = task_spec(task)
        return PetriEnv(spec, get_simulation(spec.simulation))

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {
            "ofat": agents.make_ofat,
            "adaptive": agents.make_adaptive,
            "ofat-rand": agents.make_ofat_rand,
            "guess": agents.make_guess,
        }

    def solver_hints(self, task: Task) -> dict[str, object]:
        spec = task_spec(task)
        sim = get_simulation(spec.simulation)
        return {
            "tier": spec.tier,
            "candidates": spec.candidates,
            "metrics": list(sim.metrics),
            "boundary": spec.boundary.model_dump(exclude={"value", "tolerance"}) if spec.boundary else None,
            "reference_values": spec.reference_values,
            "ranges": {name: [*spec.legal_range(sim, name), sim.param(name).kind] for name in spec.candidates},
        }

    def score(self, episode: Episode) -> Score:
        return verdict.score(episode, task_spec(episode.task))

    def audit(self, episode: Episode) -> dict[str, object]:
        return verdict.audit(episode, task_spec(episode.task))

    def tables(self, episodes: list[Episode]) -> list[ReportTable]:
        return petri_tables(episodes)

    def plots(self, episodes: list[Episode], out_dir: Path) -> list[Path]:
        from discogym.suites.petri.plots import petri_plots

        return petri_plots(episodes, out_dir)


suite = PetriSuite()
