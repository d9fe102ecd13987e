"""Report building blocks: tables that render as markdown, HTML or JSON."""

import html
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from discogym.core.episode import Episode

AGENT_KEY_COLUMNS = ["agent", "model", "condition"]
AgentKey = tuple[str, str, str]


class ReportTable(BaseModel):
    """A titled table; cells are plain JSON values."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = Field(default_factory=list)


def by_agent(episodes: list[Episode]) -> list[tuple[AgentKey, list[Episode]]]:
    """Episodes by (agent label, model, condition), in sorted order: the rows of a suite's own tables."""
    groups: dict[AgentKey, list[Episode]] = defaultdict(list)
    for episode in episodes:
        key = episode.key
        groups[(key.agent_label(), key.model or "-", key.condition)].append(episode)
    return sorted(groups.items())


def with_components(episodes: list[Episode]) -> list[Episode]:
    """The episodes that ran to an end and carry the suite's score components."""
    return [e for e in episodes if e.outcome.status != "error" and e.score.success is not None and e.score.components]


def format_cell(value: Any) -> str:
    """How a cell reads in a table: floats to 3 decimals, None as a dash."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table_markdown(table: ReportTable) -> str:
    """A GitHub-flavoured markdown table with its title and notes."""
    lines = [f"## {table.title}", ""]
    if table.rows:
        lines.append("| " + " | ".join(table.columns) + " |")
        lines.append("|" + "|".join(" --- " for _ in table.columns) + "|")
        for row in table.rows:
            cells = [format_cell(cell).replace("|", "\\|") for cell in row]
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("(no rows)")
    lines.extend(["", *(f"- {note}" for note in table.notes)])
    return "\n".join(lines).rstrip() + "\n"


def table_html(table: ReportTable) -> str:
    """The same table as an HTML fragment."""
    head = "".join(f"<th>{html.escape(col)}</th>" for col in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(format_cell(cell))}</td>" for cell in row) + "</tr>" for row in table.rows
    )
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in table.notes)
    return (
        f"<h2>{html.escape(table.title)}</h2>\n<table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>\n" + (f"<ul>{notes}</ul>\n" if notes else "")
    )
