"""Tasks and conditions: what an agent is asked to do, and how it is presented."""

from pydantic import BaseModel, ConfigDict, Field

from discogym.core.model.jsonsafe import JsonDict


class Task(BaseModel):
    """One problem of a suite.

    ``brief`` and ``params`` are what the agent may see. ``ground_truth`` is hidden: no agent-facing
    code reads it; it is kept so that scorers and reports can use it and episodes stay self-contained.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    suite: str = Field(min_length=1)
    split: str = Field(min_length=1)
    brief: str
    params: JsonDict = Field(default_factory=dict)
    ground_truth: JsonDict = Field(default_factory=dict)


class Condition(BaseModel):
    """A named variant of how a task is presented (tool set, hints, scaffold, test type)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    params: JsonDict = Field(default_factory=dict)
