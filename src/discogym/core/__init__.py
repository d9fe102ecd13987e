"""The harness every suite uses: tasks, environments as tools, agents, episodes, scoring and runs.

The public names below are imported from their modules on first use, so that a program importing one light
module of this package (the command line's ``discogym.core.console``, say) does not pay for all the others
and the libraries they need (numpy, through the tools).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discogym.core.agent import (
        Agent,
        AgentContext,
        AgentDecision,
        AgentFactory,
        AgentOptions,
        Turn,
        Usage,
        register_agent,
        with_options,
    )
    from discogym.core.env import Env, Limits
    from discogym.core.episode import Episode, EpisodeKey, Event, Outcome, Provenance, Score
    from discogym.core.errors import InfrastructureError, ToolError, UserError
    from discogym.core.report_tables import ReportTable
    from discogym.core.seeding import derive_seed, make_rng
    from discogym.core.suite import Suite, all_suites, get_suite, register_suite
    from discogym.core.task import Condition, Task
    from discogym.core.termination import EndingKind, Termination
    from discogym.core.tools import NoArgs, Tool, ToolArgs, ToolCall, ToolImage, ToolResult, ToolSpec, tool

_MODULE_OF: dict[str, str] = {
    **dict.fromkeys(
        [
            "Agent",
            "AgentContext",
            "AgentDecision",
            "AgentFactory",
            "AgentOptions",
            "Turn",
            "Usage",
            "register_agent",
            "with_options",
        ],
        "agent",
    ),
    **dict.fromkeys(["Env", "Limits"], "env"),
    **dict.fromkeys(["Episode", "EpisodeKey", "Event", "Outcome", "Provenance", "Score"], "episode"),
    **dict.fromkeys(["InfrastructureError", "ToolError", "UserError"], "errors"),
    "ReportTable": "report_tables",
    **dict.fromkeys(["derive_seed", "make_rng"], "seeding"),
    **dict.fromkeys(["Suite", "all_suites", "get_suite", "register_suite"], "suite"),
    **dict.fromkeys(["Condition", "Task"], "task"),
    **dict.fromkeys(["EndingKind", "Termination"], "termination"),
    **dict.fromkeys(
        ["NoArgs", "Tool", "ToolArgs", "ToolCall", "ToolImage", "ToolResult", "ToolSpec", "tool"],
        "tools",
    ),
}


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is asked for."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Agent",
    "AgentContext",
    "AgentDecision",
    "AgentFactory",
    "AgentOptions",
    "Condition",
    "EndingKind",
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
    "Termination",
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
    "with_options",
]
