"""The harness every suite uses: tasks, environments as tools, agents, episodes, scoring and runs."""

from discogym.core.agent import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentFactory,
    AgentOptions,
    Turn,
    Usage,
    register_agent,
)
from discogym.core.env import Env, Limits
from discogym.core.episode import Episode, EpisodeKey, Event, Outcome, Provenance, Score
from discogym.core.errors import InfrastructureError, ToolError, UserError
from discogym.core.report import ReportTable
from discogym.core.seeding import derive_seed, make_rng
from discogym.core.suite import Suite, all_suites, get_suite, register_suite
from discogym.core.task import Condition, Task
from discogym.core.tools import NoArgs, Tool, ToolArgs, ToolCall, ToolImage, ToolResult, ToolSpec, tool

__all__ = [
    "Agent",
    "AgentContext",
    "AgentDecision",
    "AgentFactory",
    "AgentOptions",
    "Condition",
    "Env",
    "Episode",
    "EpisodeKey",
    "Event",
    "InfrastructureError",
    "Limits",
    "NoArgs",
    "Outcome",
    "Provenance",
    "ReportTable",
    "Score",
    "Suite",
    "Task",
    "Tool",
    "ToolArgs",
    "ToolCall",
    "ToolError",
    "ToolImage",
    "ToolResult",
    "ToolSpec",
    "Turn",
    "Usage",
    "UserError",
    "all_suites",
    "derive_seed",
    "get_suite",
    "make_rng",
    "register_agent",
    "register_suite",
    "tool",
]
