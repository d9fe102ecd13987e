"""SciCrafter's scientist: the sub-agent the engineer asks a question, its sandbox lab, its experiment reports
and the knowledge book it keeps (paper section 4, appendices G and H; our own words throughout).

The engineer's ``ask_scientist(question)`` opens a :class:`ScientistLab`: an empty lab floor with the task's
palette and the engineer's tools, whose button presses come off the task's one budget of verification trials.
The harness lets a sub-agent of the engineer's own kind and model play it (:meth:`Env.run_sub_agent`): it runs
experiments, files an experiment report in the paper's eight parts, updates the knowledge book in the
condition's format, and answers. The book is the one the engineer reads.
"""

from typing import ClassVar

from pydantic import Field

from discogym.core import Limits, NoArgs, Termination, Tool, ToolArgs, ToolError, ToolResult, tool
from discogym.core.terminal.console import plural
from discogym.suites.redstone.book import (
    BOOK_FORMATS,
    MAX_TEXT,
    BookEntry,
    ExperimentReport,
    ScientistNotes,
    text_field,
)
from discogym.suites.redstone.build_lab import BuildLab, TrialBudget
from discogym.suites.redstone.engine import Simulator
from discogym.suites.redstone.lab import lab_world
from discogym.suites.redstone.tasks import TaskSpec

LAB_STEPS = 400  # calls one scientist session may make
BOOK_TOOLS = {"summary": "update_summary", "finding": "update_findings", "claim": "update_claims"}  # by format


class SummaryArgs(ToolArgs):
    summary: str = Field(
        description="the whole knowledge book, rewritten: everything worth keeping", max_length=MAX_TEXT
    )


class ClaimEntry(ToolArgs):
    title: str = Field(description="a short name for the law; an entry with a title already in the book replaces it")
    claim: str = text_field("the law, stated as a precise, general rule with numbers")
    proof: str = text_field("the experimental evidence and the reasoning that make the claim follow from it")
    constraints: str = text_field("where the law may not hold: edge cases, assumptions not yet tested, anomalies")
    example: str = text_field("how to use the law in a device")


class FindingEntry(ToolArgs):
    title: str = Field(description="a short name; an entry with a title already in the book replaces it")
    finding: str = text_field("the rule, as one crisp sentence")
    explanation: str = text_field("how and why it works, with numbers, limits, edge cases and failure modes")
    example: str = text_field("one minimal concrete use (layout, coordinates)")


class ClaimBookArgs(ToolArgs):
    entries: list[ClaimEntry] = Field(min_length=1, max_length=50)


class FindingBookArgs(ToolArgs):
    entries: list[FindingEntry] = Field(min_length=1, max_length=50)


class AnswerArgs(ToolArgs):
    answer: str = text_field("the answer to the engineer's question, with the numbers it needs")


SCIENTIST_PROMPT = """You are the scientist of a team that builds redstone devices in a simulated Minecraft \
(Java Edition 1.21). The engineer has asked you a question about how the game works. Find the answer by \
controlled experiments in your own lab, not from memory: never guess. Anything you claim must be supported by \
an experiment you ran at least three times with the same result.

Work in the scientific loop: state the research question; write down a hypothesis before you test it; design \
the experiment (what you vary, what you measure, what you hold constant, and a control); build it and run it \
(each press of your lab's button is one verification trial, taken from the task's single budget that the \
engineer also needs, so spend them with care); record every observation and whether it matched the \
prediction; summarize the results; analyse why it happened and what remains uncertain; decide the next \
experiment. The event stream gives the game tick of every block-state change (1 redstone tick = 2 game ticks).

When you are done: file the experiment report with write_report (the eight parts above), update the knowledge \
book with update_book ({book_format}), then give the engineer your answer with answer, which ends your session."""

ENGINEER_PROMPT = """You are the engineer of a team that builds redstone devices in a simulated Minecraft (Java \
Edition 1.21) to an exact input/output specification. Do not guess how the game behaves: when you are not sure \
of a mechanic (a timing, a rule of power or connection), ask the scientist with ask_scientist. The scientist \
runs controlled experiments in a separate lab, records what it finds in the knowledge book you both read, and \
answers you. Its button presses come off the same budget of verification trials as yours."""


class ScientistLab(BuildLab):
    """The scientist's sandbox: an empty lab with the task's palette and the engineer's tools (no submit), the
    engineer's trial budget, and the tools to report, update the book and answer."""

    limits: ClassVar[Limits] = Limits(max_steps=LAB_STEPS)

    def __init__(self, spec: TaskSpec, budget: TrialBudget, notes: ScientistNotes, question: str) -> None:
        super().__init__(spec, budget)
        self.notes = notes
        self.question = question
        self.answer_text: str | None = None
        self.reported = False

    def tools(self) -> list[Tool]:
        wanted = BOOK_TOOLS[self.notes.book.format]
        return [
            t
            for t in self.declared_tools()
            if t.name not in ("submit", "ask_scientist") and (not t.name.startswith("update_") or t.name == wanted)
        ]

    def brief(self) -> str:
        reports = "\n\n".join(r.render(i) for i, r in enumerate(self.notes.reports, 1)) or "(none yet)"
        return "\n".join(
            [
                f"The engineer asks: {self.question}",
                "",
                f"The engineer's task, for context: {self.spec.task_id}: {self.spec.task_name}",
                f"Your lab: a flat stone floor at y={self.region.floor_y}; build within {self.region.describe()}. "
                "Coordinates: x east, y up, z south.",
                f"Blocks: {', '.join(self.spec.allowed_blocks)}.",
                f"Verification trials left (yours and the engineer's together): {self.budget.left}.",
                "",
                "The knowledge book:",
                self.notes.book.render(),
                "",
                "Earlier experiment reports:",
                reports,
                "",
                f"Update the book with {BOOK_TOOLS[self.notes.book.format]}.",
            ]
        )

    def system_prompt(self) -> str | None:
        return SCIENTIST_PROMPT.format(book_format=BOOK_FORMATS[self.notes.book.format])

    @tool(NoArgs)
    def clear_lab(self, args: NoArgs) -> ToolResult:
        """Remove every block you placed (costs no trial)."""
        removed = len(self.device)
        self.device.clear()
        self.sim = Simulator(lab_world({}, self.region))
        return ToolResult(text=f"the lab is empty again ({removed} blocks removed); the clock restarts at tick 0")

    @tool(ExperimentReport)
    def write_report(self, args: ExperimentReport) -> ToolResult:
        """File the report of the experiment you ran, in the eight parts."""
        self.notes.reports.append(args)
        self.reported = True
        return ToolResult(text=f"filed as experiment report {len(self.notes.reports)}")

    @tool(SummaryArgs)
    def update_summary(self, args: SummaryArgs) -> ToolResult:
        """Rewrite the knowledge book: a free summary of everything found so far."""
        self.notes.book.summary = args.summary
        return ToolResult(text="the knowledge book is rewritten")

    @tool(ClaimBookArgs)
    def update_claims(self, args: ClaimBookArgs) -> ToolResult:
        """Add entries to the knowledge book (claim, proof, constraints, example each)."""
        self.notes.book.add([BookEntry(**entry.model_dump()) for entry in args.entries])
        return ToolResult(text=f"the knowledge book has {plural(len(self.notes.book.entries), 'entry', 'entries')}")

    @tool(FindingBookArgs)
    def update_findings(self, args: FindingBookArgs) -> ToolResult:
        """Add entries to the knowledge book (finding, explanation, example each)."""
        self.notes.book.add([BookEntry(**entry.model_dump()) for entry in args.entries])
        return ToolResult(text=f"the knowledge book has {plural(len(self.notes.book.entries), 'entry', 'entries')}")

    @tool(AnswerArgs)
    def answer(self, args: AnswerArgs) -> ToolResult:
        """Answer the engineer (after write_report); ends your session."""
        if not self.reported:
            raise ToolError("file the experiment report with write_report before you answer")
        self.answer_text = args.answer
        self.finish(Termination.ANSWERED)
        return ToolResult(text="the engineer has your answer; your session is over", done=True)
