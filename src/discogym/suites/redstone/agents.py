"""The redstone suite's reference agent: the builder, which places a passing device through the agent's tools."""

from collections.abc import Sequence

from discogym.core import Agent, AgentContext, AgentDecision, AgentOptions, ToolCall, Turn, UserError
from discogym.suites.redstone.blocks import COMPONENTS, COMPUTED, Block, Pos
from discogym.suites.redstone.builder import build_device
from discogym.suites.redstone.tasks import TaskSpec


def placement_order(device: dict[Pos, Block]) -> list[tuple[Pos, Block]]:
    """Layer by layer from the floor up, plain blocks before the components that stand or hang on them."""
    return sorted(device.items(), key=lambda item: (item[0][1], item[1].id in COMPONENTS, item[0]))


def set_block_call(pos: Pos, block: Block) -> ToolCall:
    """The ``set_block`` call that places ``block`` at ``pos``."""
    x, y, z = pos
    placed = {name: value for name, value in block.props if name not in COMPUTED}
    return ToolCall(tool="set_block", args={"x": x, "y": y, "z": z, "block": block.id, "properties": placed})


class BuilderAgent(Agent):
    """Designs the device from the task (the suite's hints), places it block by block, presses the button once to
    watch it work, and submits."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def start(self, context: AgentContext) -> None:
        if "spec" not in context.hints:
            raise UserError("the builder agent plays only the redstone suite's own tasks")
        device = build_device(TaskSpec.model_validate(context.hints["spec"]))
        self.calls = [set_block_call(pos, block) for pos, block in placement_order(device)]
        self.calls += [ToolCall(tool="activate_button", args={}), ToolCall(tool="submit", args={})]

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if not self.calls:
            return AgentDecision(message="the device is submitted")
        return AgentDecision(call=self.calls.pop(0))


def make_builder(options: AgentOptions) -> Agent:
    """The ``builder`` reference agent."""
    return BuilderAgent()
