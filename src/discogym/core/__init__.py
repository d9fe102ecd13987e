"""The harness every suite uses: tasks, environments as tools, agents, episodes, scoring and runs.

The public names below are imported from their modules on first use, so that a program importing one light
module of this package (the command line's ``discogym.core.terminal.console``, say) does not pay for all the others
and the libraries they need (numpy, through the tools).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discogym.core.model.agent import (
        Agent,
        AgentContext,
        AgentDecision,
        AgentFactory,
        AgentOptions,
        MemoryEvent,
        Turn,
        Usage,
        register_agent,
        with_options,
    )
    from discogym.core.model.env import Env, Limits
    from discogym.core.model.episode import Episode, EpisodeKey, Event, Outcome, Provenance, Score
    from discogym.core.model.errors import InfrastructureError, ToolError, UserError
    from discogym.core.model.protocol import FigureSource, Protocol, ProtocolPart, PublishedFigure
    from discogym.core.model.report_table import ReportTable
    from discogym.core.model.seeding import derive_seed, make_rng
    from discogym.core.model.suite import Paper, Suite, all_suites, get_suite, register_suite
    from discogym.core.model.task import Condition, Task
    from discogym.core.model.termination import EndingKind, Termination
    from discogym.core.model.tools import NoArgs, Tool, ToolArgs, ToolCall, ToolImage, ToolResult, ToolSpec, tool
    from discogym.core.running.process import computed

_MODULE_OF: dict[str, str] = {
    **dict.fromkeys(
        [
            "Agent",
            "AgentContext",
            "AgentDecision",
            "AgentFactory",
            "AgentOptions",
            "MemoryEvent",
            "Turn",
            "Usage",
            "register_agent",
            "with_options",
        ],
        "model.agent",
    ),
    **dict.fromkeys(["Env", "Limits"], "model.env"),
    **dict.fromkeys(["Episode", "EpisodeKey", "Event", "Outcome", "Provenance", "Score"], "model.episode"),
    **dict.fromkeys(["InfrastructureError", "ToolError", "UserError"], "model.errors"),
    **dict.fromkeys(["FigureSource", "Protocol", "ProtocolPart", "PublishedFigure"], "model.protocol"),
    "ReportTable": "model.report_table",
    **dict.fromkeys(["derive_seed", "make_rng"], "model.seeding"),
    **dict.fromkeys(["Paper", "Suite", "all_suites", "get_suite", "register_suite"], "model.suite"),
    **dict.fromkeys(["Condition", "Task"], "model.task"),
    **dict.fromkeys(["EndingKind", "Termination"], "model.termination"),
    **dict.fromkeys(
        ["NoArgs", "Tool", "ToolArgs", "ToolCall", "ToolImage", "ToolResult", "ToolSpec", "tool"],
        "model.tools",
    ),
    "computed": "running.process",
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
    "FigureSource",
    "InfrastructureError",
    "Limits",
    "MemoryEvent",
    "NoArgs",
    "Outcome",
    "Paper",
    "Protocol",
    "ProtocolPart",
    "Provenance",
    "PublishedFigure",
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
    "computed",
    "derive_seed",
    "get_suite",
    "make_rng",
    "register_agent",
    "register_suite",
    "tool",
    "with_options",
]
