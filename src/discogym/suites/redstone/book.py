"""SciCrafter's knowledge book and experiment reports (paper section 4 and appendix H): the three formats the
paper compares, and the eight-part report the scientist files after each experiment."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BookFormat = Literal["summary", "finding", "claim"]
BOOK_FORMATS: dict[str, str] = {
    "summary": "a free summary in the scientist's own words",
    "finding": "entries of finding, explanation and example",
    "claim": "entries of claim (law), proof, constraints and example",
}
MAX_TEXT = 20_000  # characters of one report part, book entry part or answer


def text_field(description: str) -> Any:
    """A required text field of at most MAX_TEXT characters."""
    return Field(description=description, max_length=MAX_TEXT)


class BookEntry(BaseModel):
    """One entry of a structured knowledge book; the parts its format has are filled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    claim: str = ""
    proof: str = ""
    constraints: str = ""
    finding: str = ""
    explanation: str = ""
    example: str = ""


class KnowledgeBook(BaseModel):
    """The engineer's and scientist's shared book: a free summary, or titled entries."""

    model_config = ConfigDict(extra="forbid")

    format: BookFormat = "claim"
    summary: str = ""
    entries: list[BookEntry] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.summary and not self.entries

    def add(self, entries: list[BookEntry]) -> None:
        """Add entries; one whose title is already in the book replaces that entry."""
        for entry in entries:
            titles = [old.title for old in self.entries]
            if entry.title in titles:
                self.entries[titles.index(entry.title)] = entry
            else:
                self.entries.append(entry)

    def render(self) -> str:
        """The book as the engineer and the scientist read it."""
        if self.empty:
            return "(the knowledge book is empty)"
        if self.format == "summary":
            return self.summary
        parts = (
            ("claim", "proof", "constraints", "example")
            if self.format == "claim"
            else ("finding", "explanation", "example")
        )
        blocks = []
        for number, entry in enumerate(self.entries, 1):
            lines = [f"### {number}. {entry.title}"]
            lines += [f"{part.capitalize()}: {getattr(entry, part)}" for part in parts if getattr(entry, part)]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)


class ExperimentReport(BaseModel):
    """An experiment report in the paper's eight parts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    research_question: str = text_field("the mechanic under investigation")
    hypothesis: str = text_field("the testable prediction, made before the experiment")
    design: str = text_field("what is varied, what is measured, what is held constant; the control")
    steps: str = text_field("what was built and done in each trial")
    record: str = text_field(
        "the observations of every trial (three at least), and whether each matched the prediction"
    )
    results: str = text_field("what was observed, stated objectively")
    analysis: str = text_field("why it happened, whether the hypothesis held, what stays uncertain")
    next_steps: str = text_field("what to test next")

    def render(self, number: int) -> str:
        fields = type(self).model_fields
        return "\n".join([f"## Experiment {number}"] + [f"{name}: {getattr(self, name)}" for name in fields])


class ScientistNotes(BaseModel):
    """What the scientists of one episode leave behind: the book and the reports, in order."""

    model_config = ConfigDict(extra="forbid")

    book: KnowledgeBook = Field(default_factory=KnowledgeBook)
    reports: list[ExperimentReport] = Field(default_factory=list)
