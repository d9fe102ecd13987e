"""A paper's headline experiment as data (:class:`Protocol`), and the figures the paper published for it
(:class:`PublishedFigure`), so that ``discogym run --protocol NAME`` plays what the paper played and
``discogym report`` sets the paper's number beside the run's own.

A suite lists its protocols (:meth:`discogym.core.model.suite.Suite.protocols`); each names the paper, section and
table it follows, the runs it is made of (:class:`ProtocolPart`: task set, conditions, repeats, setting, agent
options) and where it differs from the paper. Published figures ship as a JSON file beside the suite
(:func:`load_figures`), every figure with its source: table, row and column.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discogym.core.model.errors import UserError

# What a published figure measures, as the report computes it from episodes: the fraction of episodes that
# succeeded, or the mean of their scores (on the suite's score range).
Metric = Literal["success_rate", "mean_score"]
Setting = Literal["independent", "curriculum"]


class FigureSource(BaseModel):
    """Where a figure stands in its paper: the table (or section) and the row and column of its cell."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: str
    row: str
    column: str


class PublishedFigure(BaseModel):
    """One number a paper published, on the suite's own scale, with where it came from.

    ``model`` is the model or agent as the paper names it ("gpt-4o-mini", "Llama 70B", "ofat", "human");
    ``model_ids`` are the provider/model names (``openai/gpt-4o-mini``) a run of that model has, for matching;
    ``condition`` is the suite's condition the figure corresponds to, with ``@curriculum`` when the paper played
    the tasks in a curriculum; ``printed`` is the cell as the paper prints it; ``low`` and ``high`` a range the
    paper gives with it (over passes or runs), on the same scale as ``value``; ``subset`` is empty for a figure over
    the protocol's whole run (what the report compares), else what part of it the figure covers ("tier L2",
    "task A_L3", "masked-frame prediction")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    protocol: str
    model: str
    model_ids: tuple[str, ...] = ()
    condition: str
    metric: Metric
    value: float
    printed: str
    low: float | None = None
    high: float | None = None
    source: FigureSource
    subset: str = ""
    note: str = ""

    def matches_model(self, model: str | None) -> bool:
        """Whether a run's model (``openai/gpt-4o-mini``; with or without its provider) is this figure's."""
        if not model:
            return False
        ids = {*self.model_ids, *(i.split("/", 1)[-1] for i in self.model_ids)}
        return model in ids or model.split("/", 1)[-1] in ids


class ProtocolPart(BaseModel):
    """One run of a protocol: a task set, its conditions, how often each task is played, in which setting, and the
    options the ``llm`` agent gets (scaffold preset, context policy, step limit, ...)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    split: str
    conditions: tuple[str, ...]
    repeats: int = Field(default=1, ge=1)
    setting: Setting = "independent"
    llm_options: dict[str, str] = Field(default_factory=dict)


class Protocol(BaseModel):
    """A paper's headline experiment: what to run, which paper section and table it follows, where discogym
    differs from what the paper did, and the figures the paper published for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    suite: str
    title: str
    paper: str  # the key of one of the suite's papers
    section: str
    tables: tuple[str, ...]
    parts: tuple[ProtocolPart, ...]
    differences: tuple[str, ...]
    # The suite's agents whose rows the paper reports beside the models, with the paper's name for each
    # (petri-bench's reference solvers): a protocol run plays them when no agent is asked for.
    reference_rows: dict[str, str] = Field(default_factory=dict)
    figures: tuple[PublishedFigure, ...] = ()

    def part(self, name: str) -> ProtocolPart:
        """The part called ``name``; a UserError naming the others when there is none."""
        for part in self.parts:
            if part.name == name:
                return part
        raise UserError(f"protocol {self.name} has no part {name!r}; it has {', '.join(p.name for p in self.parts)}")

    def default_agents(self) -> list[str]:
        """The agents a run of the protocol plays when none is asked for: its reference rows, else the suite's
        reference agent."""
        return list(self.reference_rows) or ["reference"]

    def figures_for(self, condition: str, metric: Metric | None = None) -> list[PublishedFigure]:
        """The published figures over the whole run of ``condition`` (a condition label,
        ``hint+scientist@curriculum``)."""
        return [
            f
            for f in self.figures
            if f.condition == condition and not f.subset and (metric is None or f.metric == metric)
        ]

    def document(self) -> dict[str, Any]:
        """The protocol as plain JSON (``discogym protocols --json``)."""
        return self.model_dump(mode="json")


class FigureFile(BaseModel):
    """A suite's published figures: the file's own schema."""

    model_config = ConfigDict(extra="forbid")

    paper: str
    figures: list[PublishedFigure]


def load_figures(path: Path) -> list[PublishedFigure]:
    """The published figures in ``path`` (a JSON :class:`FigureFile`); a UserError naming the file if it is
    malformed."""
    try:
        return FigureFile.model_validate(json.loads(path.read_text(encoding="utf-8"))).figures
    except (OSError, ValueError, ValidationError) as err:
        raise UserError(f"{path}: not a file of published figures ({err})") from None


def with_figures(protocol: Protocol, figures: Iterable[PublishedFigure]) -> Protocol:
    """``protocol`` with those of ``figures`` that belong to it."""
    own = tuple(f for f in figures if f.protocol == protocol.name)
    return protocol.model_copy(update={"figures": own})


FIGURES_FILE = "published.json"


@cache
def figures_beside(module_file: str) -> tuple[PublishedFigure, ...]:
    """The published figures in the ``published.json`` beside ``module_file`` (a suite module's ``__file__``),
    read once per process."""
    return tuple(load_figures(Path(module_file).with_name(FIGURES_FILE)))


def protocols_with_figures(protocols: Iterable[Protocol], module_file: str) -> list[Protocol]:
    """``protocols``, each with its figures from the ``published.json`` beside ``module_file``."""
    figures = figures_beside(module_file)
    return [with_figures(protocol, figures) for protocol in protocols]
