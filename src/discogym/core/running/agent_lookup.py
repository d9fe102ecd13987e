"""Finding the agent a user named: a suite's reference solvers first, then the generic agents."""

import discogym.core.running.generic_agents  # noqa: F401 - registers the generic agents
from discogym.core.model.agent import (
    Agent,
    AgentFactory,
    AgentOptions,
    check_agent_options,
    factory_options,
    find_generic_agent,
    generic_agents,
)
from discogym.core.model.errors import UserError
from discogym.core.model.suite import Suite

REFERENCE = "reference"


def agent_names(suite: Suite) -> list[str]:
    """Every agent name usable with ``suite``: ``reference``, its own solvers, then the generic agents."""
    own = list(suite.reference_agents())
    generic = [entry.name for entry in generic_agents() if entry.name not in own]
    return ([REFERENCE] if own else []) + own + generic


def resolve_agent_name(suite: Suite, name: str) -> str:
    """The concrete agent ``name`` stands for (``reference`` becomes the suite's first solver)."""
    own = suite.reference_agents()
    if name == REFERENCE:
        if not own:
            raise UserError(f"suite '{suite.name}' has no reference agent")
        return next(iter(own))
    if name in own or find_generic_agent(name) is not None:
        return name
    raise UserError(f"unknown agent '{name}' for suite '{suite.name}'; choose from: {', '.join(agent_names(suite))}")


def _factory(suite: Suite, name: str) -> AgentFactory:
    own = suite.reference_agents()
    if name in own:
        return own[name]
    entry = find_generic_agent(name)
    if entry is None:
        raise UserError(f"unknown agent '{name}' for suite '{suite.name}'")
    return entry.factory


def accepted_options(suite: Suite, name: str) -> tuple[str, ...]:
    """The ``--agent-opt`` keys the agent ``name`` (a concrete name, not ``reference``) accepts in ``suite``."""
    own = suite.reference_agents()
    if name in own:
        return factory_options(own[name])
    entry = find_generic_agent(name)
    return entry.options if entry is not None else ()


def fit_options(suite: Suite, agents: list[AgentOptions]) -> list[AgentOptions]:
    """The agents of one run (concrete names), each with only the ``--agent-opt`` keys it accepts.

    ``--agent-opt`` applies to every agent of a run, so a key one agent takes (``salt`` for ``ofat-rand``) is
    dropped for the others (``random``), keeping their episode keys and seeds; a key that no agent of the run
    takes is a UserError naming the first agent given it and what that agent accepts.
    """
    accepted = {options.name: accepted_options(suite, options.name) for options in agents}
    anyone = {key for keys in accepted.values() for key in keys}
    fitted = []
    for options in agents:
        unknown = {key: value for key, value in options.options.items() if key not in anyone}
        check_agent_options(options.model_copy(update={"options": unknown}), accepted[options.name])
        kept = {key: value for key, value in options.options.items() if key in accepted[options.name]}
        fitted.append(options.model_copy(update={"options": kept}))
    return fitted


def make_agent(suite: Suite, options: AgentOptions) -> Agent:
    """A fresh agent for one episode of ``suite``."""
    return _factory(suite, options.name)(options)
