"""The crafting suite's reference agents: Plancraft's planner, played action by action, and the same recipes
in fewer actions (the action-level optimizer)."""

from collections.abc import Sequence

from discogym.core import Agent, AgentContext, AgentDecision, AgentOptions, ToolCall, Turn, UserError, with_options
from discogym.suites.crafting.planner import PlannedAction, make_plan
from discogym.suites.crafting.recipes import recipe_book
from discogym.suites.crafting.state import Stack, slots_from_entries
from discogym.suites.crafting.text import read_observation


class PlannerAgent(Agent):
    """Plays the planner's actions for the table it is given (the suite's hints), or, with ``from_observation``,
    for the table the first observation's text lists (in ``image+perception``: as the perception module reads the
    picture); calls ``impossible`` when there is no plan, or stops if the condition offers no such tool."""

    def __init__(self, optimized: bool = False, from_observation: bool = False) -> None:
        self.optimized = optimized
        self.from_observation = from_observation
        self.actions: list[PlannedAction] = []
        self.no_plan = False
        self.can_give_up = False

    def start(self, context: AgentContext) -> None:
        hints = context.hints
        if "target" not in hints or "slots" not in hints:
            raise UserError("the planner agent plays only the crafting suite's own tasks")
        slots = self._observed_slots(context.brief) if self.from_observation else slots_from_entries(hints["slots"])
        book = recipe_book()
        plan = make_plan(book, hints["target"], slots)
        self.no_plan = plan is None
        self.actions = [] if plan is None else list(plan.actions)
        if plan is not None and self.optimized:
            from discogym.suites.crafting.optimizer import optimize_actions

            self.actions = list(optimize_actions(book, hints["target"], slots, plan.actions))
        self.can_give_up = any(spec.name == "impossible" for spec in context.tools)

    @staticmethod
    def _observed_slots(brief: str) -> dict[int, Stack]:
        try:
            slots = read_observation(brief)
        except ValueError as error:
            raise UserError(f"the planner cannot read the table from the observation: {error}") from None
        if slots is None:
            raise UserError("--agent-opt table=observation needs a condition whose observation lists the inventory")
        return slots

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if self.no_plan:
            if self.can_give_up:
                self.no_plan = False
                return AgentDecision(call=ToolCall(tool="impossible", args={"reason": "no plan reaches the target"}))
            return AgentDecision(message="no plan reaches the target")
        if not self.actions:
            return AgentDecision(message="the plan is finished")
        step = self.actions.pop(0)
        return AgentDecision(call=ToolCall(tool=step.action, args=step.args()))


def _reads_observation(options: AgentOptions) -> bool:
    """``--agent-opt table=hints`` (the default: the task's table) or ``table=observation``."""
    source = options.options.get("table", "hints")
    if source not in ("hints", "observation"):
        raise UserError(f"agent '{options.name}': --agent-opt table takes hints or observation, got {source!r}")
    return source == "observation"


def _make_planner(options: AgentOptions) -> Agent:
    return PlannerAgent(from_observation=_reads_observation(options))


def _make_optimizer(options: AgentOptions) -> Agent:
    return PlannerAgent(optimized=True, from_observation=_reads_observation(options))


make_planner = with_options(_make_planner, "table")
"""The ``planner`` reference agent (``--agent-opt table=observation``: plan for the table the observation lists)."""
make_optimizer = with_options(_make_optimizer, "table")
"""The ``optimizer`` reference agent: the planner's recipes in the optimizer's actions."""


def make_wiki_planner(options: AgentOptions) -> Agent:
    """The ``wiki-planner`` reference agent: finds recipes only through the wiki condition's ``search``."""
    from discogym.suites.crafting.wiki_agent import WikiPlannerAgent

    return WikiPlannerAgent()
