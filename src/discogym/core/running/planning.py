"""Planning episodes: which episodes a run plays, their keys and seeds, and the next free repeat.

Every way of making an episode (the runner's grid, ``discogym play``, an outside client's session) plans it
here, so an episode's key and seeds do not depend on how it was started.
"""

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from discogym import __version__
from discogym.core.model.agent import AgentOptions, find_generic_agent
from discogym.core.model.episode import EpisodeKey
from discogym.core.model.errors import MissingCredentials, UserError
from discogym.core.model.seeding import derive_seed
from discogym.core.model.suite import Suite
from discogym.core.model.task import Condition, Task
from discogym.core.running.agent_lookup import fit_options, make_agent, resolve_agent_name
from discogym.core.running.episode_loop import PlannedEpisode

# The most episodes one run may plan: far beyond any real run, and small enough that planning (a list of
# planned episodes in memory) stays quick. A larger --repeats or grid is refused before anything is planned.
MAX_PLANNED_EPISODES = 1_000_000
# How tasks are played: each on its own, or as a suite's curriculum chains (Suite.curriculum).
Setting = Literal["independent", "curriculum"]
CURRICULUM = "curriculum"


class RunConfig(BaseModel):
    """What a run plays. Stored as ``run.json``; a rerun must name the same suite and seed."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    split: str
    tasks: list[str] | None = None
    conditions: list[str]
    agents: list[AgentOptions]
    repeats: int = Field(default=1, ge=1, le=MAX_PLANNED_EPISODES)
    seed: int = Field(default=0, ge=0, lt=2**63)
    setting: Setting = "independent"
    # The paper's protocol the run follows (``discogym run --protocol``): its report sets the published figures
    # beside the run's.
    protocol: str | None = Field(default=None, exclude_if=lambda protocol: protocol is None)
    discogym_version: str = __version__

    @classmethod
    def for_suite(
        cls,
        suite: Suite,
        agents: Iterable[str | AgentOptions] = ("reference",),
        *,
        split: str | None = None,
        tasks: list[str] | None = None,
        conditions: list[str] | None = None,
        repeats: int = 1,
        seed: int = 0,
        skipped: list[str] | None = None,
        setting: Setting = "independent",
        protocol: str | None = None,
    ) -> "RunConfig":
        """A configuration with the suite's defaults (first split, first condition) for what is not given,
        and agent names resolved and checked."""
        requested = [AgentOptions(name=agent) if isinstance(agent, str) else agent for agent in agents]
        if repeats > MAX_PLANNED_EPISODES:
            raise UserError(f"--repeats {repeats:,}: a run may plan at most {MAX_PLANNED_EPISODES:,} episodes")
        return cls(
            suite=suite.name,
            split=split or suite.splits()[0],
            tasks=tasks,
            conditions=conditions or [suite.conditions()[0].name],
            agents=resolve_agents(suite, requested, skipped),
            repeats=repeats,
            seed=seed,
            setting=setting,
            protocol=protocol,
        )


def resolve_agents(
    suite: Suite, agents: Iterable[AgentOptions], skipped: list[str] | None = None
) -> list[AgentOptions]:
    """Replace ``reference`` by the concrete solver name and check each agent's options and that it can be built.

    A model and budgets given to an agent that takes no model are dropped, and so are the ``--agent-opt`` keys
    an agent does not take but another of the run does. An agent whose model has no API key is left out, its
    message added to ``skipped``, when a list is given (otherwise, and when no agent is left, that is an error).
    """
    named = [options.model_copy(update={"name": resolve_agent_name(suite, options.name)}) for options in agents]
    resolved = []
    for concrete in fit_options(suite, named):
        entry = find_generic_agent(concrete.name) if concrete.name not in suite.reference_agents() else None
        if entry is None or not entry.takes_model:
            concrete = concrete.model_copy(update={"model": None, "token_limit": None, "cost_limit": None})
        if concrete in resolved:
            continue
        try:
            make_agent(suite, concrete)  # raises UserError now rather than in every episode
        except MissingCredentials as err:
            if skipped is None:
                raise
            skipped.append(str(err))
            continue
        resolved.append(concrete)
    if not resolved:
        raise UserError("no agent left to run" + (f" ({'; '.join(skipped)})" if skipped else ""))
    return resolved


def selected_tasks(suite: Suite, config: RunConfig) -> list[Task]:
    """The tasks a run plays: the split's, or those of ``config.tasks`` in that order (UserError for an
    unknown id)."""
    tasks = suite.tasks(config.split)
    if config.tasks is None:
        return tasks
    by_id = {task.id: task for task in tasks}
    missing = [task_id for task_id in config.tasks if task_id not in by_id]
    if missing:
        raise UserError(
            f"split '{config.split}' of suite '{suite.name}' has no task {', '.join(map(repr, missing))}"
            + other_split_hint(suite, config.split, missing[0])
        )
    return [by_id[task_id] for task_id in config.tasks]


def other_split_hint(suite: Suite, split: str, task_id: str) -> str:
    """``; task X is in split l2-v0: add --split l2-v0`` when another split of ``suite`` has ``task_id``."""
    for other in suite.splits():
        if other == split:
            continue
        try:
            found = any(task.id == task_id for task in suite.tasks(other))
        except UserError:  # a split that cannot be loaded here (its data not fetched) is not searched
            continue
        if found:
            return f"; task {task_id} is in split {other}: add --split {other}"
    return ""


def plan_episodes(suite: Suite, config: RunConfig) -> list[PlannedEpisode]:
    """The episodes of a run in a fixed order: tasks, then conditions, then agents, then repeats.

    An episode asked for twice (the same task or agent named twice, ``reference`` and the solver it
    stands for) is planned once. In the curriculum setting the tasks come as the suite's chains, and each
    episode names the one before it in its chain (same condition, agent and repeat).
    """
    tasks = selected_tasks(suite, config)
    conditions = [suite.condition(name) for name in config.conditions]
    check_plan_size(len(tasks), len(conditions), len(config.agents), config.repeats)
    chains = suite.curriculum(tasks) if config.setting == CURRICULUM else [[task] for task in tasks]
    setting = CURRICULUM if config.setting == CURRICULUM else None
    planned = []
    seen: set[EpisodeKey] = set()
    for chain in chains:
        for condition in conditions:
            for agent in config.agents:
                for repeat in range(config.repeats):
                    before: EpisodeKey | None = None
                    for task in chain:
                        item = plan_episode(suite.name, task, condition, agent, repeat, config.seed, setting)
                        item = item.model_copy(update={"after": before})
                        before = item.key
                        if item.key not in seen:
                            seen.add(item.key)
                            planned.append(item)
    return planned


def check_plan_size(tasks: int, conditions: int, agents: int, repeats: int) -> None:
    """Raise a UserError when the grid holds more than :data:`MAX_PLANNED_EPISODES` episodes."""
    total = tasks * conditions * agents * repeats
    if total > MAX_PLANNED_EPISODES:
        raise UserError(
            f"the run would plan {total:,} episodes (tasks x conditions x agents x repeats = {tasks:,} x "
            f"{conditions:,} x {agents:,} x {repeats:,}); at most {MAX_PLANNED_EPISODES:,} are allowed: lower "
            "--repeats or choose fewer tasks"
        )


def plan_episode(
    suite_name: str,
    task: Task,
    condition: Condition,
    agent: AgentOptions,
    repeat: int,
    run_seed: int,
    setting: str | None = None,
) -> PlannedEpisode:
    """One episode with its key and seeds (the runner's and every interface's way of making one)."""
    key = EpisodeKey(
        suite=suite_name,
        task=task.id,
        condition=condition.name,
        agent=agent.name,
        model=agent.model,
        agent_options=agent.options,
        token_limit=agent.token_limit,
        cost_limit=agent.cost_limit,
        repeat=repeat,
        setting=setting,
    )
    return PlannedEpisode(
        key=key,
        task=task,
        condition=condition,
        agent=agent,
        run_seed=run_seed,
        # The world's randomness depends on the repeat but not on the agent, so agents are compared on
        # the same world instances.
        env_seed=derive_seed(run_seed, "env", suite_name, task.id, condition.name, repeat),
        agent_seed=derive_seed(run_seed, "agent", key.canonical()),
    )


def plan_next_free(
    suite_name: str,
    task: Task,
    condition: Condition,
    agent: AgentOptions,
    run_seed: int,
    taken: Callable[[EpisodeKey], bool],
) -> PlannedEpisode:
    """The episode of (task, condition, agent) with the lowest repeat whose key ``taken`` does not claim.

    This is how playing a task again (``discogym play``, an outside client's session) makes a new episode:
    repeat *k* meets the world ``discogym run`` plays in its repeat *k*.
    """
    repeat = 0
    while True:
        planned = plan_episode(suite_name, task, condition, agent, repeat, run_seed)
        if not taken(planned.key):
            return planned
        repeat += 1
