"""Suites and their registry: the one object through which a benchmark plugs into the harness."""

import importlib
import os
from abc import ABC, abstractmethod
from importlib.metadata import entry_points
from pathlib import Path
from typing import ClassVar

from discogym.core.agent import AgentFactory
from discogym.core.env import Env
from discogym.core.episode import Episode, Score
from discogym.core.errors import UserError
from discogym.core.report import ReportTable
from discogym.core.task import Condition, Task

ENTRY_POINT_GROUP = "discogym.suites"
EXTRA_SUITES_VARIABLE = "DISCOGYM_SUITES"


class Suite(ABC):
    """A benchmark: its tasks, conditions, environments, reference agents, scorer and report.

    The CLI, the runner and every other interface use only this interface, never a suite's internals.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""

    @abstractmethod
    def splits(self) -> list[str]:
        """The names of the task sets; the first is the default."""

    @abstractmethod
    def tasks(self, split: str) -> list[Task]:
        """The tasks of ``split`` in a fixed order. Raise UserError for an unknown split."""

    @abstractmethod
    def conditions(self) -> list[Condition]:
        """The presentation variants; the first is the default."""

    @abstractmethod
    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        """A fresh environment for one episode; ``seed`` drives any randomness it has."""

    @abstractmethod
    def reference_agents(self) -> dict[str, AgentFactory]:
        """The suite's own solvers by name; the first is what ``--agent reference`` means."""

    @abstractmethod
    def score(self, episode: Episode) -> Score:
        """The episode's score, computed from the episode alone."""

    def solver_hints(self, task: Task) -> dict[str, object]:
        """Privileged knowledge given to the suite's own reference solvers only (``AgentContext.hints``), never
        to other agents: e.g. petri's curated informative test values, which the paper's reference knows."""
        return {}

    def audit(self, episode: Episode) -> dict[str, object]:
        """Flags about how the agent worked (e.g. p-hacking); computed from the episode alone."""
        return {}

    def report(self, episodes: list[Episode]) -> list[ReportTable]:
        """The suite's own report tables, added after the generic one."""
        return []

    def plots(self, episodes: list[Episode], out_dir: Path) -> list[Path]:
        """Write the suite's own PNG plots into ``out_dir`` (matplotlib is available); return their paths."""
        return []

    def condition(self, name: str) -> Condition:
        """The condition called ``name``, or a UserError listing the valid ones."""
        for condition in self.conditions():
            if condition.name == name:
                return condition
        valid = ", ".join(c.name for c in self.conditions())
        raise UserError(f"suite '{self.name}' has no condition '{name}'; valid conditions: {valid}")


_SUITES: dict[str, Suite] = {}
_discovered = False


def register_suite(suite: Suite) -> Suite:
    """Add a suite to the registry (replacing one of the same name) and return it."""
    _SUITES[suite.name] = suite
    return suite


def _register_loaded(target: object, origin: str) -> None:
    if isinstance(target, type) and issubclass(target, Suite):
        target = target()
    if not isinstance(target, Suite):
        raise UserError(f"{origin} does not name a discogym Suite (got {type(target).__name__})")
    register_suite(target)


def _load_reference(reference: str) -> None:
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise UserError(f"cannot import suite module '{module_name}' from {EXTRA_SUITES_VARIABLE}: {err}") from None
    if attribute:
        if not hasattr(module, attribute):
            raise UserError(f"module '{module_name}' has no attribute '{attribute}'")
        _register_loaded(getattr(module, attribute), reference)


def discover_suites() -> None:
    """Load every suite once: the package's entry points (group ``discogym.suites``), then the
    ``module:attribute`` references in the ``DISCOGYM_SUITES`` environment variable (comma-separated;
    a bare module name is imported and may call :func:`register_suite` itself)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        _register_loaded(point.load(), f"entry point '{point.name}'")
    for reference in os.environ.get(EXTRA_SUITES_VARIABLE, "").split(","):
        if reference.strip():
            _load_reference(reference.strip())


def all_suites() -> list[Suite]:
    """Every registered suite, by name."""
    discover_suites()
    return [_SUITES[name] for name in sorted(_SUITES)]


def get_suite(name: str) -> Suite:
    """The suite called ``name`` or one of its aliases, or a UserError listing the known ones."""
    for suite in all_suites():
        if name == suite.name or name in suite.aliases:
            return suite
    known = ", ".join(s.name for s in all_suites()) or "(none registered)"
    raise UserError(f"unknown suite '{name}'; known suites: {known}")
