"""Suites and their registry: the one object through which a benchmark plugs into the harness."""

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from discogym.core.model.agent import AgentFactory
from discogym.core.model.env import Env
from discogym.core.model.episode import Episode, Score
from discogym.core.model.errors import UserError
from discogym.core.model.plugins import PluginError, import_reference, load_entry_point, one_line, plugin_points, warn
from discogym.core.model.protocol import Protocol
from discogym.core.model.report_table import ReportTable
from discogym.core.model.task import Condition, Task
from discogym.core.model.tools import ToolCall

ENTRY_POINT_GROUP = "discogym.suites"
EXTRA_SUITES_VARIABLE = "DISCOGYM_SUITES"


class Paper(BaseModel):
    """A paper a suite implements, as ``discogym cite`` cites it: ``key`` names its BibTeX-like record; what the
    source document does not say (authors, year, address) is left empty rather than guessed."""

    model_config = ConfigDict(frozen=True)

    key: str
    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    url: str | None = None

    def reference(self) -> str:
        """``Dagan, Keller and Lascarides. Plancraft: ... https://...`` (what is known of it)."""
        authors = " and ".join(self.authors)
        year = f" ({self.year})" if self.year is not None else ""
        parts = [f"{authors}{year}." if authors else (f"{year.strip()}." if year else ""), f"{self.title}."]
        if self.url:
            parts.append(self.url)
        return " ".join(part for part in parts if part)


class Suite(ABC):
    """A benchmark: its tasks, conditions, environments, reference agents, scorer and report.

    The CLI, the runner and every other interface use only this interface, never a suite's internals.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    # Raise it when tasks, environments or scoring change so that old episodes are no longer comparable;
    # it is recorded in every episode, and a resumed run refuses to mix episodes of two versions.
    version: ClassVar[str] = "1"
    # The papers the suite implements (its benchmark's): ``discogym cite`` and the HTML report cite them.
    papers: ClassVar[tuple[Paper, ...]] = ()
    # Raise it when the scorer or auditor would give another score or audit for the same episode file:
    # ``discogym report`` remembers recomputed scores by file content and this version (and ``version``).
    scorer_version: ClassVar[str] = "1"
    # The lowest and highest score the suite gives (petri-bench scores 0-100, the others 0-1): every report and
    # plot shows the suite on this scale, and the conformance check holds scores to it.
    score_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    # The percentile of people's scores per problem that is the human baseline
    # (discogym.core.reporting.human_baselines): the median unless the suite's paper defines another (AutumnBench:
    # the 80th).
    human_percentile: ClassVar[float] = 50.0
    # How people play it in the web app: at the world's frame rate (a noop each frame they do nothing) when
    # True, else turn by turn; a person may pick the other mode, recorded as the agent option ``mode``.
    frame_rate_play: ClassVar[bool] = False
    # The condition the web app offers people first (the suite's first condition when None).
    people_condition: ClassVar[str | None] = None

    @abstractmethod
    def splits(self) -> list[str]:
        """The names of the task sets; the first is the default."""

    @abstractmethod
    def tasks(self, split: str) -> list[Task]:
        """The tasks of ``split`` in a fixed order. Raise UserError for an unknown split."""

    def task_count(self, split: str) -> int | None:
        """How many tasks ``split`` has (``discogym list`` shows it), or None when that cannot be told quickly
        and offline. By default the tasks are loaded and counted; override when that is slow or needs data."""
        return len(self.tasks(split))

    def training_source(self, seed: int) -> Iterator[Task]:
        """New tasks for training, made from ``seed`` by the suite's generator, as many as are taken (the same seed
        always gives the same tasks, ids unique). The harness takes them through
        :func:`discogym.core.running.training.training_tasks`, which leaves out any that is an evaluation task; a
        suite's ``tasks`` gives them for the split ``training:SEED:COUNT``. Suites without one raise UserError."""
        raise UserError(f"suite '{self.name}' has no training source")

    def problem(self, task: Task) -> Any:
        """What makes ``task`` the problem it is, as JSON data, without its id, its split or the seed it was drawn
        with: two tasks with equal problems are one task to the guard that keeps training tasks out of the
        evaluation sets. By default its brief, parameters and ground truth."""
        return {"brief": task.brief, "params": task.params, "ground_truth": task.ground_truth}

    def evaluation_splits(self) -> list[str]:
        """The splits whose tasks no training task may be (every split but those of training data, such as
        Plancraft's ``train``)."""
        return self.splits()

    @abstractmethod
    def conditions(self) -> list[Condition]:
        """The presentation variants; the first is the default."""

    def curriculum(self, tasks: list[Task]) -> list[list[Task]]:
        """``tasks`` as curriculum chains (``--setting curriculum``): each chain is played in order, each
        episode starting from what the one before it left (:meth:`carry_forward`). Suites without a
        curriculum raise UserError."""
        raise UserError(f"suite '{self.name}' has no curriculum setting; use --setting independent")

    def carry_forward(self, episode: Episode) -> dict[str, Any]:
        """What the next episode of a curriculum chain starts from, taken from ``episode`` (its log and
        outcome, never its hidden ground truth)."""
        return {}

    @abstractmethod
    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        """A fresh environment for one episode; ``seed`` drives any randomness it has."""

    @abstractmethod
    def reference_agents(self) -> dict[str, AgentFactory]:
        """The suite's own solvers by name; the first is what ``--agent reference`` means."""

    @abstractmethod
    def score(self, episode: Episode) -> Score:
        """The episode's score, computed from the episode alone."""

    def protocols(self) -> list[Protocol]:
        """The headline experiments of the suite's papers, as published, with the figures the papers give for them
        (``discogym protocols``, ``discogym run --protocol NAME``). None by default."""
        return []

    def model_calls(
        self, task: Task, condition: Condition, reference: list[ToolCall], *, high: bool = False
    ) -> tuple[list[ToolCall], str]:
        """The calls a language model is expected to make on ``task`` under ``condition``, for a cost estimate
        (``discogym estimate``), given those of the suite's reference agent; and what they are, in words.

        By default the reference's calls; with ``high``, those before the last made twice (a model that takes twice
        the reference's steps). A suite whose model plays otherwise overrides it (autumn: the interaction phase to
        its step cap, which its reference skips).
        """
        if not high or len(reference) < 2:
            return list(reference), "the reference agent's calls"
        doubled = [*reference[:-1], *reference[:-1], reference[-1]]
        return doubled, "the reference agent's calls, those before the last made twice (twice its steps)"

    def solver_hints(self, task: Task) -> dict[str, object]:
        """Privileged knowledge given to the suite's own reference solvers only (``AgentContext.hints``), never
        to other agents: e.g. petri's curated informative test values, which the paper's reference knows."""
        return {}

    def audit(self, episode: Episode) -> dict[str, object]:
        """Flags about how the agent worked (e.g. p-hacking); computed from the episode alone."""
        return {}

    def tables(self, episodes: list[Episode]) -> list[ReportTable]:
        """The suite's own report tables, added after the generic one."""
        return []

    def plots(self, episodes: list[Episode], out_dir: Path) -> list[Path]:
        """Write the suite's own PNG plots into ``out_dir`` (matplotlib is available); return their paths."""
        return []

    def web_screens(self) -> dict[str, Path]:
        """The scripts that draw the suite's environments in the web app, by the ``kind`` their
        :meth:`Env.view` names: each registers ``discogymScreens[KIND] = (root, view, api) => screen`` (see
        ``interfaces/web/static/screen-loader.js``). None by default: the play page then offers the tools as forms.
        """
        return {}

    def condition(self, name: str) -> Condition:
        """The condition called ``name``, or a UserError listing the valid ones."""
        for condition in self.conditions():
            if condition.name == name:
                return condition
        valid = ", ".join(c.name for c in self.conditions())
        raise UserError(f"suite '{self.name}' has no condition '{name}'; valid conditions: {valid}")


class _Registry:
    """The suites this process knows: registered by hand or given by a plugin, each plugin loaded once."""

    def __init__(self) -> None:
        self.suites: dict[str, Suite] = {}
        # what loading each plugin (an entry point's value, a DISCOGYM_SUITES reference) gave: its suite, or
        # the one-line message of why it failed (None for a bare module, which registers its suites itself)
        self.loaded: dict[str, Suite | str | None] = {}


_registry = _Registry()


def register_suite(suite: Suite) -> Suite:
    """Add a suite to the registry (replacing one of the same name) and return it."""
    _registry.suites[suite.name] = suite
    return suite


def _adopt(target: object, origin: str) -> Suite:
    """Register the suite a plugin named (a Suite, or a Suite class to instantiate). A plugin never replaces a
    suite already registered under the same name: the first one stays and the clash is a warning."""
    try:
        if isinstance(target, type) and issubclass(target, Suite):
            target = target()
    except Exception as err:  # the plugin's own constructor
        raise PluginError(f"{origin} could not be made: {one_line(err)}") from err
    if not isinstance(target, Suite):
        raise PluginError(f"{origin} does not name a discogym Suite (got {type(target).__name__})")
    kept = _registry.suites.setdefault(target.name, target)
    if kept is not target:
        warn(f"{origin} is a second suite named '{target.name}'; the first one is kept")
    return kept


def _load_point(point: EntryPoint) -> Suite:
    """The suite an entry point gives, importing its module at most once; a PluginError if it is broken."""
    if point.value not in _registry.loaded:
        try:
            target = load_entry_point(point, "suite")
            _registry.loaded[point.value] = _adopt(target, f"suite plugin '{point.name}' ({point.value})")
        except PluginError as err:
            _registry.loaded[point.value] = str(err)
    result = _registry.loaded[point.value]
    if not isinstance(result, Suite):
        raise PluginError(str(result))
    return result


def _load_references() -> None:
    """Load the suites named in ``DISCOGYM_SUITES`` (each once), warning about those that are broken."""
    for reference in (part.strip() for part in os.environ.get(EXTRA_SUITES_VARIABLE, "").split(",")):
        key = f"{EXTRA_SUITES_VARIABLE}={reference}"
        if not reference or key in _registry.loaded:
            continue
        try:
            target = import_reference(reference, "suite", EXTRA_SUITES_VARIABLE)
            loaded = None if target is None else _adopt(target, f"suite '{reference}' from {EXTRA_SUITES_VARIABLE}")
            _registry.loaded[key] = loaded
        except PluginError as err:
            _registry.loaded[key] = str(err)
            warn(str(err))


def discover_suites() -> None:
    """Load every suite: the entry points of group ``discogym.suites``, then the ``module:attribute``
    references in the ``DISCOGYM_SUITES`` environment variable (comma-separated; a bare module name is
    imported and may call :func:`register_suite` itself). A plugin that cannot be loaded is a one-line warning
    on standard error, and the others still load."""
    for point in plugin_points(ENTRY_POINT_GROUP):
        try:
            _load_point(point)
        except PluginError as err:
            warn(str(err))
    _load_references()


def all_suites() -> list[Suite]:
    """Every suite, by name (this loads every plugin)."""
    discover_suites()
    return [_registry.suites[name] for name in sorted(_registry.suites)]


def _registered(name: str) -> Suite | None:
    """The loaded suite called ``name``, else the first (by name) that has ``name`` as an alias."""
    if name in _registry.suites:
        return _registry.suites[name]
    return next((s for _, s in sorted(_registry.suites.items()) if name in s.aliases), None)


def get_suite(name: str) -> Suite:
    """The suite called ``name`` or one of its aliases, or a UserError listing the known ones.

    Only the plugin of that suite is imported when an entry point carries ``name``: the suite's own, or one
    of its aliases declared as a second entry point to the same object (see docs/writing-a-suite.md). Any
    other name loads the ``DISCOGYM_SUITES`` references, then every plugin, before it is called unknown.
    """
    found = _registered(name)
    if found is not None:
        return found
    for point in plugin_points(ENTRY_POINT_GROUP):
        if point.name == name:
            try:
                return _load_point(point)
            except PluginError as err:
                raise UserError(str(err)) from None
    _load_references()
    found = _registered(name)
    if found is None:
        discover_suites()
        found = _registered(name)
    if found is None:
        known = ", ".join(sorted(_registry.suites)) or "(none registered)"
        raise UserError(f"unknown suite '{name}'; known suites: {known}")
    return found
