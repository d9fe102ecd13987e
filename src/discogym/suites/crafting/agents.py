"""The crafting suite's reference agents: Plancraft's planner, played action by action, and the same recipes
in fewer actions (the action-level optimizer)."""

from collections.abc import Sequence

from discogym.core.agent import Agent, AgentContext, AgentDecision, AgentOptions, Turn
from discogym.core.errors import UserError
from discogym.core.tools import ToolCall
from discogym.suites.crafting.planner import PlannedAction, make_plan
from discogym.suites.crafting.recipes import recipe_book
from discogym.suites.crafting.state import Stack, slot_index


class PlannerAgent(Agent):
    """Plays the planner's actions for the table it is given (the suite's hints); calls ``impossible``
    when there is no plan, or stops if the condition offers no such tool."""

    def __init__(self, optimized: bool = False) -> None:
        self.optimized = optimized
        self.actions: list[PlannedAction] = []
        self.no_plan = False
        self.can_give_up = False

    def start(self, context: AgentContext) -> None:
        hints = context.hints
        if "target" not in hints or "slots" not in hints:
            raise UserError("the planner agent plays only the crafting suite's own tasks")
        slots: dict[int, Stack] = {}
        for entry in hints["slots"]:
            index = slot_index(entry["slot"])
            assert index is not None
            slots[index] = (entry["item"], int(entry["quantity"]))
        book = recipe_book()
        plan = make_plan(book, hints["target"], slots)
        self.no_plan = plan is None
        self.actions = [] if plan is None else list(plan.actions)
        if plan is not None and self.optimized:
            from discogym.suites.crafting.optimizer import optimize_actions

            self.actions = list(optimize_actions(book, hints["target"], slots, plan.actions))
        self.can_give_up = any(spec.name == "impossible" for spec in context.tools)

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


def make_planner(options: AgentOptions) -> Agent:
    """The ``planner`` reference agent."""
    return PlannerAgent()


def make_optimizer(options: AgentOptions) -> Agent:
    """The ``optimizer`` reference agent: the planner's recipes in the optimizer's actions."""
    return PlannerAgent(optimized=True)


def make_wiki_planner(options: AgentOptions) -> Agent:
    """The ``wiki-planner`` reference agent: finds recipes only through the wiki condition's ``search``."""
    from discogym.suites.crafting.wiki_agent import WikiPlannerAgent

    return WikiPlannerAgent()
