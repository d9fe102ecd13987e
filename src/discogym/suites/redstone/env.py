"""The SciCrafter environment: build a device in the lab through the paper's tools, test it, submit it.

The engineer's environment is a build lab (:mod:`discogym.suites.redstone.build_lab`) with submit, and, in the
scientist conditions, ask_scientist. The evaluator checks the submitted device after the episode; the agent is
never told whether the contract holds.
"""

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from discogym.core import Limits, NoArgs, Termination, ToolArgs, ToolResult, tool
from discogym.suites.redstone import evaluator
from discogym.suites.redstone.book import BookFormat, KnowledgeBook, ScientistNotes
from discogym.suites.redstone.build_lab import TRIAL_BUDGET, BuildLab, TrialBudget
from discogym.suites.redstone.pictures.web import ScreenPictures, screen_view
from discogym.suites.redstone.scientist import ENGINEER_PROMPT, ScientistLab
from discogym.suites.redstone.tasks import TaskSpec

MAX_STEPS = 2000


class Presentation(BaseModel):
    """A condition: the plain task, or the task with its level's hint keyword; with or without the scientist
    sub-agent, whose knowledge book takes ``book_format``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hint: bool = False
    scientist: bool = False
    book_format: BookFormat = "claim"


class QuestionArgs(ToolArgs):
    question: str = Field(
        min_length=1, max_length=4000, description="one question about how the game behaves, for an experiment"
    )


class RedstoneEnv(BuildLab):
    """One SciCrafter task for the engineer: the build lab, submit, and the scientist to ask when the condition
    has one."""

    limits: ClassVar[Limits] = Limits(max_steps=MAX_STEPS)

    def __init__(self, spec: TaskSpec, presentation: Presentation, budget: TrialBudget | None = None) -> None:
        super().__init__(spec, budget)
        self.presentation = presentation
        self.notes = ScientistNotes.model_validate({"book": {"format": presentation.book_format}})
        self.book_before = self.notes.book.model_copy(deep=True)
        self.experience = ""  # from the level before, in a curriculum
        self.questions = 0
        self._evaluation: evaluator.Evaluation | None = None
        self._pictures = ScreenPictures()

    # What the agent reads

    def brief(self) -> str:
        spec = self.spec
        c = spec.contract
        lines = [
            f"Task {spec.task_id}: {spec.task_name}",
            spec.task_description.strip(),
            "",
            "Requirements:",
            *(f"- {line}" for line in spec.requirements),
            "",
            "Contract (as in the task file): "
            + ", ".join(f"{k}={v}" for k, v in c.model_dump(exclude_none=True).items() if k != "units"),
            "Units: tolerance_ticks in game ticks (gt, 50 ms); delays and durations in redstone ticks (1 rt = 2 gt).",
            "",
            f"The lab: a flat stone floor at y={self.region.floor_y}; build on it within {self.region.describe()}. "
            "Coordinates: x east, y up, z south.",
            f"Blocks: {', '.join(spec.allowed_blocks)}. Properties as in Minecraft Java Edition 1.21 "
            "(repeater facing = the side its input comes from; a wall torch or wall button faces away from its wall).",
            "",
            "The world runs on after each of your edits. activate_button presses your device's one button and runs "
            f"the world until it is quiet: one verification trial, {TRIAL_BUDGET} in all. get_event_stream lists the "
            "block-state changes with their game ticks. submit() hands the device to the evaluator, which presses "
            "the button itself and checks the contract; you are not told the result.",
        ]
        if self.presentation.hint and spec.hint:
            lines += ["", f"Hint: {spec.hint}"]
        if self.experience:
            lines += ["", self.experience]
        if self.presentation.scientist:
            lines += [
                "",
                "ask_scientist(question) hands a question about the game's mechanics to the scientist, who answers "
                "it by experiments in a separate lab (its presses count against the same trial budget) and keeps "
                "the knowledge book. The knowledge book (laws found by experiment so far):",
                self.notes.book.render(),
            ]
        return "\n".join(lines)

    def view(self) -> dict[str, Any]:
        """The play screen (views/web.py, drawn by screens/redstone.js): the layers, the 3D picture,
        the palette, the tick and the trials; only what the tools show, never the evaluator's verdict."""
        return screen_view(
            self.sim.snapshot(),
            self.region,
            self.spec.allowed_blocks,
            self._pictures,
            tick=self.sim.time,
            trials_used=self.budget.used,
            trials_limit=self.budget.limit,
            last_press=self.last_press,
        )

    def tools(self) -> list[Any]:
        return [t for t in self.declared_tools() if t.name != "ask_scientist" or self.presentation.scientist]

    def continue_from(self, carried: dict[str, Any]) -> None:
        """The next level of a curriculum: start from the book (scientist conditions) and the experience note
        the level before left."""
        self.experience = str(carried.get("experience", ""))
        book = carried.get("book")
        if self.presentation.scientist and isinstance(book, dict):
            self.notes.book = KnowledgeBook.model_validate({**book, "format": self.presentation.book_format})
            self.book_before = self.notes.book.model_copy(deep=True)

    def system_prompt(self) -> str | None:
        if not self.presentation.scientist:
            return None
        return ENGINEER_PROMPT

    # Tools

    @tool(QuestionArgs)
    def ask_scientist(self, args: QuestionArgs) -> ToolResult:
        """Ask the scientist a question about the game's mechanics. It runs experiments in its own lab (its
        presses come off your trial budget), updates the knowledge book and answers."""
        lab = ScientistLab(self.spec, self.budget, self.notes, args.question)
        session = self.run_sub_agent(lab, "scientist")
        self.questions += 1
        answer = lab.answer_text or f"(no answer: the scientist's session ended with {session.termination})"
        text = (
            f"The scientist's answer ({lab.trials} trials used; {self.budget.left} of {self.budget.limit} left):\n"
            f"{answer}\n\nThe knowledge book now:\n{self.notes.book.render()}"
        )
        return ToolResult(text=text, data={"scientist_trials": lab.trials, "answered": lab.answer_text is not None})

    @tool(NoArgs)
    def submit(self, args: NoArgs) -> ToolResult:
        """Hand the device to the evaluator; ends the episode."""
        self.finish(Termination.SUBMITTED)
        return ToolResult(text=f"submitted a device of {len(self.device)} blocks; the episode is over", done=True)

    # The text syntax (for a person at the terminal, or a model with --agent-opt mode=suite)

    # Parsing and running

    # The evaluation

    def evaluation(self) -> evaluator.Evaluation:
        """The evaluator's verdict on the device as it stands (computed once, at the end)."""
        if self._evaluation is None:
            self._evaluation = evaluator.evaluate(self.spec, self.device)
        return self._evaluation

    def progress(self) -> float | None:
        """The evaluator's verdict on the device as it stands now (one press, simulated): 1 when it passes, else
        half the share of the task's lamps that light after the press (at most all of them)."""
        now = evaluator.evaluate(self.spec, self.device)
        if now.passed:
            return 1.0
        lit = sum(1 for lamp in now.lamps if lamp.on is not None)
        return 0.5 * min(lit, self.spec.lamps) / self.spec.lamps

    def outcome(self) -> dict[str, Any]:
        submitted = self.termination == Termination.SUBMITTED
        return {
            "submitted": submitted,
            "check": self.evaluation().document(),
            "passed": submitted and self.evaluation().passed,
            "trials": self.trials,
            "scientist_trials": self.budget.used - self.trials,
            "rebuilds": self.rebuilds,
            "edits": self.edits,
            "blocks": len(self.device),
            "device": [f"{x} {y} {z} {block}" for (x, y, z), block in sorted(self.device.items())],
            **(self._scientist_outcome() if self.presentation.scientist else {}),
        }

    def _scientist_outcome(self) -> dict[str, Any]:
        """The scientist's part of the outcome: the questions, the book before and after, the reports."""
        return {
            "questions": self.questions,
            "book_before": self.book_before.model_dump(mode="json"),
            "book_after": self.notes.book.model_dump(mode="json"),
            "reports": [report.model_dump(mode="json") for report in self.notes.reports],
        }
