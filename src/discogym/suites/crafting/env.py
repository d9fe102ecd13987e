"""The Plancraft environment as a discogym Env: one crafting table, five tools, 30 steps.

Every call is a step, rejected ones included (Plancraft counts every message). The episode ends when the
target is in a slot other than ``[0]`` (``crafted``), when the agent calls ``impossible``
(``declared_impossible``), or after 30 steps (``step_limit``).
"""

import base64
import dataclasses
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from discogym.core import Env, Limits, Termination, Tool, ToolArgs, ToolCall, ToolImage, ToolResult, tool
from discogym.core.model.agent import ExampleDialogue
from discogym.suites.crafting import prompt, text, wiki
from discogym.suites.crafting.recipes import RecipeBook
from discogym.suites.crafting.state import GRID, INVENTORY, OUTPUT, Stack, Table, slot_name

if TYPE_CHECKING:
    from discogym.suites.crafting.render import Canvas

MAX_STEPS = 30
Resolution = Literal["high", "medium", "low"]


class Presentation(BaseModel):
    """How a condition presents the table: the tools it offers and what the agent sees."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tools: tuple[str, ...] = text.ACTION_ORDER
    # image+perception: the picture, and as text what the perception module reads from it (as Plancraft's
    # R-CNN baseline)
    observation: Literal["text", "image", "image+perception"] = "text"
    resolution: Resolution = "high"
    # what ``search`` does: the oracle (every recipe of the named item) or BM25 over the generated wiki
    retrieval: Literal["oracle", "wiki"] = Field(default="oracle", exclude_if=lambda value: value == "oracle")


class SlotActionArgs(ToolArgs):
    slot_from: str = Field(description="source slot: [0], [A1]..[C3] or [I1]..[I36]")
    slot_to: str = Field(description="target slot: [A1]..[C3] or [I1]..[I36]")
    quantity: int = Field(description="how many items, 1 to 64")


class ThinkArgs(ToolArgs):
    thought: str = Field(description="your reasoning")


class SearchArgs(ToolArgs):
    item: str = Field(description="the item whose recipes to look up, e.g. oak_planks")


class WikiSearchArgs(ToolArgs):
    item: str = Field(description="what to search the recipe wiki for: an item name, e.g. oak_planks, or words")


WIKI_SEARCH_DESCRIPTION = (
    f"Search the recipe wiki (BM25 over one page per item); returns the text of the {wiki.TOP_K} best-matching "
    "pages, each with the item's crafting and smelting recipes and what it is used in"
)


class ImpossibleArgs(ToolArgs):
    reason: str = Field(default="", description="why the target cannot be crafted from this inventory")


class CraftingEnv(Env):
    """One Plancraft episode: craft ``target`` from the items on the table."""

    limits: ClassVar[Limits] = Limits(max_steps=MAX_STEPS)

    def __init__(
        self, book: RecipeBook, target: str, slots: Mapping[int, Stack], presentation: Presentation, seed: int
    ) -> None:
        self.book = book
        self.target = target
        self.table = Table(book, slots)
        self._start_slots = dict(self.table.slots)
        self._first_plan_length: int | None = None  # the planner's actions from the start (progress())
        self.presentation = presentation
        self.rng = np.random.default_rng(seed)
        self.counts: Counter[str] = Counter()
        # The pictures drawn so far, one per resolution, repainted where the table changed (render.Canvas).
        self._canvases: dict[Resolution, Canvas] = {}

    # What the agent sees

    @property
    def _pictures(self) -> bool:
        return self.presentation.observation != "text"

    @property
    def _perception(self) -> bool:
        return self.presentation.observation == "image+perception"

    def observe(self) -> str:
        """The current observation's text: the inventory; only the objective when a picture shows it; or with
        perception, the inventory as the perception module reads it from the picture."""
        if self.presentation.observation == "image":
            return text.objective(self.target)
        if self.presentation.observation == "image+perception":
            from discogym.suites.crafting.perception import perceive
            from discogym.suites.crafting.render import renderer

            picture = renderer().render(self.table.slots, self.presentation.resolution)
            return text.observation(self.target, perceive(picture, self.presentation.resolution))
        return text.observation(self.target, self.table)

    def images(self) -> list[ToolImage]:
        """The rendered table, in image conditions."""
        if not self._pictures:
            return []
        return [ToolImage.from_bytes(self._png(self.presentation.resolution))]

    def _png(self, resolution: Resolution) -> bytes:
        """The table's picture at ``resolution`` as PNG bytes, from this episode's canvas for it."""
        canvas = self._canvases.get(resolution)
        if canvas is None:
            from discogym.suites.crafting.render import Canvas, renderer  # Pillow and the icons load only when used

            canvas = self._canvases[resolution] = Canvas(renderer(), resolution)
        return canvas.update(self.table.slots).png()

    def brief(self) -> str:
        return self.observe()

    def brief_images(self) -> list[ToolImage]:
        return self.images()

    def tools(self) -> list[Tool]:
        tools = [self._declared_tools[name] for name in self.presentation.tools]
        if self.presentation.retrieval == "wiki":
            wiki_search = dataclasses.replace(
                self._declared_tools["search"],
                description=WIKI_SEARCH_DESCRIPTION,
                args_model=WikiSearchArgs,
                method="wiki_search",
            )
            tools = [wiki_search if t.name == "search" else t for t in tools]
        return tools

    def system_prompt(self) -> str:
        return prompt.tool_prompt(images=self._pictures, perception=self._perception)

    def text_prompt(self) -> str:
        return self._text_prompt(examples=True)

    def example_dialogue(self) -> ExampleDialogue:
        """Plancraft's few-shot demonstration as past turns, with the text prompt that leaves it out."""
        turns = prompt.example_dialogue(self.presentation.tools)
        return ExampleDialogue(turns=turns, text_prompt=self._text_prompt(examples=False))

    def _text_prompt(self, *, examples: bool) -> str:
        tools = self.presentation.tools
        shown = prompt.system_prompt(tools, images=self._pictures, perception=self._perception, examples=examples)
        if self.presentation.retrieval == "wiki":
            shown += f"\n\nIn this game, search returns the {wiki.TOP_K} recipe wiki pages that best match your words."
        return shown

    def parse_text_action(self, message: str) -> ToolCall:
        return text.parse_action(message, self.presentation.tools)

    def format_text_action(self, call: ToolCall) -> str | None:
        return text.format_action(call) if call.tool in text.ACTION_ORDER else None

    def example_action(self) -> str | None:
        move = next((call for call in self.valid_calls() if call.tool == "move"), None)
        return None if move is None else text.format_action(move)

    def view(self) -> dict[str, Any]:
        """The play page's screen (``static/screens/crafting.js``): the table as Plancraft's GUI picture at high
        resolution, whatever the condition shows the agent (a person always sees the GUI; it holds what the
        agent's text says), each slot's box on it with its stack, the target and the condition's tools."""
        from discogym.suites.crafting.render import ICON_SIZE, MULTIPLE, SLOT_POSITIONS, renderer

        picture = self._png("high")
        width, height = renderer().background.size
        slots = []
        for index, (x, y) in enumerate(SLOT_POSITIONS):
            # The slot's box around its item square: one GUI pixel of border; the output slot's is 5 wide.
            border = 5 * MULTIPLE if index == OUTPUT else MULTIPLE
            item, quantity = self.table.slots.get(index, (None, 0))
            box = {"x": x - border, "y": y - border, "size": ICON_SIZE + 2 * border}
            slots.append({"name": slot_name(index), **box, "item": item, "quantity": quantity})
        return {
            "kind": "crafting",
            "picture": "data:image/png;base64," + base64.b64encode(picture).decode("ascii"),
            "width": width,
            "height": height,
            "target": self.target,
            "objective": text.objective(self.target),
            "tools": list(self.presentation.tools),
            "slots": slots,
        }

    # Tools

    @tool(SlotActionArgs, description=text.DESCRIPTIONS["move"])
    def move(self, args: SlotActionArgs) -> ToolResult:
        return self._slot_action("move", args)

    @tool(SlotActionArgs, description=text.DESCRIPTIONS["smelt"])
    def smelt(self, args: SlotActionArgs) -> ToolResult:
        return self._slot_action("smelt", args)

    @tool(ThinkArgs, description=text.DESCRIPTIONS["think"])
    def think(self, args: ThinkArgs) -> ToolResult:
        return ToolResult(text="Ok")

    @tool(SearchArgs, description=text.DESCRIPTIONS["search"])
    def search(self, args: SearchArgs) -> ToolResult:
        return ToolResult(text=text.search_recipes(self.book, args.item.strip(), self.rng))

    def wiki_search(self, args: WikiSearchArgs) -> ToolResult:
        """The wiki condition's ``search``: the top pages' text (see :mod:`~discogym.suites.crafting.wiki`)."""
        query = args.item.strip()
        if not query:
            problem = "search: argument 'item' is empty; give an item name (e.g. oak_planks) or words to search for"
            return ToolResult(ok=False, text=problem, error=problem)
        return ToolResult(text=wiki.wiki().answer(query))

    @tool(ImpossibleArgs, description=text.DESCRIPTIONS["impossible"])
    def impossible(self, args: ImpossibleArgs) -> ToolResult:
        self.finish(Termination.DECLARED_IMPOSSIBLE)
        return ToolResult(text="You declared the task impossible; the episode is over.")

    def _slot_action(self, action: str, args: SlotActionArgs) -> ToolResult:
        checked = text.check_slot_action(action, args.slot_from, args.slot_to, args.quantity, tool_call=True)
        if isinstance(checked, str):
            return ToolResult(ok=False, text=checked, error=checked)
        source, target = checked
        run = self.table.move if action == "move" else self.table.smelt
        problem = run(source, target, args.quantity)
        if problem is None and self.table.has_item(self.target):
            self.finish(Termination.CRAFTED)
        shown = self.observe() if problem is None else f"nothing moved: {problem}\n{self.observe()}"
        result = ToolResult(text=shown, images=self.images(), data={"applied": problem is None})
        if problem is not None:
            self.counts["no_effect"] += 1
            result.data["reason"] = problem
        return result

    # Bookkeeping

    def call(self, name: str, args: Any = None) -> ToolResult:
        result = super().call(name, args)
        self.counts[name if result.ok and name in self._declared_tools else "invalid"] += 1
        return result

    def outcome(self) -> dict[str, Any]:
        return {
            "crafted": self.table.has_item(self.target),
            "declared_impossible": self.termination == Termination.DECLARED_IMPOSSIBLE,
            "steps": self.steps,
            "counts": {key: self.counts[key] for key in sorted(self.counts)},
        }

    def progress(self) -> float | None:
        """The planner's distance to the target: 1 - (the actions its plan from here takes) / (those its plan from
        the start took); 1 once the target is on the table, 0 where no plan is left; None for a task the planner
        cannot solve from the start (an impossible one: nothing to come closer to)."""
        from discogym.suites.crafting.planner import PlanError, make_plan

        if self.table.has_item(self.target):
            return 1.0
        try:
            now = make_plan(self.book, self.target, self.table.slots)
            if self._first_plan_length is None:
                first = now if self.steps == 0 else make_plan(self.book, self.target, self._start_slots)
                self._first_plan_length = len(first.actions) if first is not None else 0
        except PlanError:
            return None
        if self._first_plan_length == 0:
            return None
        return 0.0 if now is None else max(0.0, 1.0 - len(now.actions) / self._first_plan_length)

    def valid_calls(self) -> list[ToolCall]:
        """Moves that apply from every occupied slot to each grid cell and the first empty inventory slot (one
        item, or the whole stack), smelts of smeltable stacks, and ``impossible``; for the random agent."""
        empty = next((slot for slot in INVENTORY if slot not in self.table.slots), None)
        targets = [*GRID, *([empty] if empty is not None else [])]
        candidates: list[tuple[str, int, int, int]] = []
        for source in sorted(self.table.slots):
            held = self.table.slots[source][1]
            candidates += [("move", source, target, n) for target in targets for n in sorted({1, held})]
            if "smelt" in self.presentation.tools and empty is not None:
                candidates.append(("smelt", source, empty, held))
        calls = [_slot_call(*candidate) for candidate in candidates if self._applies(*candidate)]
        if "impossible" in self.presentation.tools:
            calls.append(ToolCall(tool="impossible", args={"reason": "random guess"}))
        return calls

    def _applies(self, action: str, source: int, target: int, quantity: int) -> bool:
        trial = self.table.copy()
        run = trial.move if action == "move" else trial.smelt
        return run(source, target, quantity) is None


def _slot_call(action: str, source: int, target: int, quantity: int) -> ToolCall:
    return ToolCall(
        tool=action, args={"slot_from": slot_name(source), "slot_to": slot_name(target), "quantity": quantity}
    )
