"""Running a paper's protocol (``discogym run --protocol NAME``): finding it among the suites' protocols, and one
run configuration per part, the part's options given to the ``llm`` agents."""

from collections.abc import Iterable
from pathlib import Path

from discogym.core.model.agent import AgentOptions
from discogym.core.model.errors import UserError
from discogym.core.model.protocol import Protocol, ProtocolPart
from discogym.core.model.suite import Suite, all_suites, get_suite
from discogym.core.running.planning import RunConfig

PAPERS = "papers"  # `sweep --protocol papers`: every suite's first (headline) protocol


def all_protocols(suites: Iterable[Suite] | None = None) -> list[tuple[Suite, Protocol]]:
    """Every protocol of ``suites`` (default: every registered suite), by suite then in the suite's order."""
    return [
        (suite, protocol) for suite in (all_suites() if suites is None else suites) for protocol in suite.protocols()
    ]


def find_protocol(name: str) -> tuple[Suite, Protocol]:
    """The suite and protocol called ``name``; a UserError listing the protocols when there is none."""
    found = all_protocols()
    for suite, protocol in found:
        if protocol.name == name:
            return suite, protocol
    names = ", ".join(protocol.name for _, protocol in found)
    raise UserError(f"no protocol {name!r}; protocols: {names} (`discogym protocols` describes them)")


def headline_protocols() -> list[tuple[Suite, Protocol]]:
    """Each suite's first protocol: what ``sweep --protocol papers`` runs."""
    chosen: dict[str, tuple[Suite, Protocol]] = {}
    for suite, protocol in all_protocols():
        chosen.setdefault(suite.name, (suite, protocol))
    return list(chosen.values())


def protocol_names(asked: Iterable[str]) -> list[str]:
    """The protocols ``asked`` for, ``papers`` standing for each suite's headline protocol, each named once."""
    names: list[str] = []
    for name in asked:
        expanded = [p.name for _, p in headline_protocols()] if name == PAPERS else [find_protocol(name)[1].name]
        names += [n for n in expanded if n not in names]
    return names


def part_options(part: ProtocolPart, agent: AgentOptions) -> AgentOptions:
    """``agent`` with the part's ``llm`` options it was not given (an ``--agent-opt`` wins); other agents as
    they are."""
    if agent.name != "llm" or not part.llm_options:
        return agent
    return agent.model_copy(update={"options": {**part.llm_options, **agent.options}})


def part_config(
    suite: Suite, protocol: Protocol, part: ProtocolPart, agents: list[AgentOptions], seed: int = 0
) -> RunConfig:
    """The run configuration of one part of ``protocol``, its agents checked and built (offline) as any run's."""
    return RunConfig.for_suite(
        get_suite(suite.name),
        [part_options(part, agent) for agent in agents],
        split=part.split,
        conditions=list(part.conditions),
        repeats=part.repeats,
        seed=seed,
        setting=part.setting,
        protocol=protocol.name,
    )


def part_folder(out: Path, protocol: Protocol, part: ProtocolPart) -> Path:
    """Where a part's run goes: ``out`` itself for a protocol of one part, else ``out/PART``."""
    return out if len(protocol.parts) == 1 else out / part.name


def refuse_overrides(given: dict[str, object]) -> None:
    """A UserError when an option that a protocol sets was given too (``--split``, ``--condition``, ...)."""
    named = [option for option, value in given.items() if value]
    if named:
        raise UserError(
            f"--protocol sets the task set, conditions, repeats and setting; leave out {', '.join(named)} "
            "(or run without --protocol)"
        )
