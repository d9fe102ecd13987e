"""``discogym cite``: what a run (or a folder of runs) was, as a citable paragraph and BibTeX-like records.

Everything is taken from the report's header and its first table (the generic table of a run, the summary of a
folder), and the papers from the suites (:attr:`~discogym.core.model.suite.Suite.papers`), so the same files
always give the same text. The HTML report carries the same block.
"""

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

import orjson
from pydantic import BaseModel

from discogym.core.model.errors import UserError
from discogym.core.model.report_table import ReportTable
from discogym.core.model.suite import Paper, get_suite
from discogym.core.terminal.console import plural

if TYPE_CHECKING:
    from discogym.core.reporting.run_report import RunHeader

AGENT_COLUMNS = ("agent", "model", "scaffold", "context")


class Citation(BaseModel):
    """The citable block of a report: ``paragraph`` says what was run, ``record`` is the run's BibTeX-like
    record and ``papers`` those of the papers the suites implement (``bibtex`` is both, as one text)."""

    paragraph: str
    record: str
    papers: list[Paper]
    paper_records: list[str]

    @property
    def bibtex(self) -> str:
        """The run's record, then each paper's."""
        return "\n\n".join([self.record, *self.paper_records]) + "\n"

    def text(self) -> str:
        """The paragraph, the papers' references and the records, as ``discogym cite`` prints them."""
        references = "".join(f"- {paper.reference()}\n" for paper in self.papers)
        return f"{self.paragraph}\n\nThe suites implement:\n{references}\n{self.bibtex}"


def _agents(table: ReportTable) -> list[str]:
    """Each (agent, model, scaffold, context) of the table's rows once: ``llm openai/gpt-5 (scaffold none,
    context compact)``."""
    where = [table.columns.index(name) for name in AGENT_COLUMNS]
    found = []
    for row in table.rows:
        agent, model, scaffold, context = (str(row[i]) for i in where)
        text = agent if model == "-" else f"{agent} {model}"
        policy = [f"scaffold {scaffold}"] * (scaffold != "-") + [f"context {context}"] * (context != "-")
        text += f" ({', '.join(policy)})" if policy else ""
        if text not in found:
            found.append(text)
    return found


def _papers(suites: list[str]) -> list[Paper]:
    papers: list[Paper] = []
    for name in suites:
        try:
            own = get_suite(name).papers
        except UserError:  # a suite this discogym does not have: its episodes say what was run, not which paper
            continue
        papers.extend(paper for paper in own if paper not in papers)
    return papers


def _field(value: str) -> str:
    return value.replace("{", "(").replace("}", ")")


def _record(kind: str, key: str, fields: list[tuple[str, str | None]]) -> str:
    lines = [f"  {name} = {{{_field(value)}}}," for name, value in fields if value]
    return f"@{kind}{{{key},\n" + "\n".join(lines) + "\n}"


def paper_record(paper: Paper) -> str:
    """A paper's BibTeX-like record (``@misc``; the fields its source document gives)."""
    return _record(
        "misc",
        paper.key,
        [
            ("title", paper.title),
            ("author", " and ".join(paper.authors) or None),
            ("year", None if paper.year is None else str(paper.year)),
            ("url", paper.url),
        ],
    )


def citation(run_dir: str, episodes: int, header: "RunHeader", table: ReportTable) -> Citation:
    """The citable block of the report of ``run_dir`` (``episodes`` counted, its ``header`` and first table)."""
    versions = {suite: ", ".join(found) for suite, found in header.suite_versions.items()}
    suites = [f"{s} (version {versions[s]})" if s in versions else s for s in header.suites]
    sets = [f"{s.label()}" for s in header.task_sets]
    agents = _agents(table)
    dates = "" if header.first_started is None else f" between {header.first_started} and {header.last_started}"
    models = [model_facts_text(facts) for facts in header.model_facts]
    papers = _papers(header.suites)
    paragraph = " ".join(
        filter(
            None,
            [
                f"We ran discogym {', '.join(header.discogym_versions) or '(version not recorded)'}"
                + (f" (git commit {', '.join(header.git_commits)})" if header.git_commits else "")
                + f" on {plural(len(header.suites), 'suite')}: {', '.join(suites) or '-'}.",
                f"Task sets: {'; '.join(sets) or '-'}.",
                f"Agents: {'; '.join(agents) or '-'}" + (f"; models: {'; '.join(models)}." if models else "."),
                f"Conditions: {', '.join(header.conditions) or '-'}; repeats: {header.repeats or '-'}; "
                f"run seeds: {', '.join(map(str, header.seeds)) or '-'}.",
                f"{plural(episodes, 'episode')} were played{dates}, using {header.input_tokens:,} input and "
                f"{header.output_tokens:,} output tokens (US${header.cost_usd:,.4f}).",
                ("The suites implement " + "; ".join(paper.reference() for paper in papers)) if papers else None,
            ],
        )
    )
    document = orjson.dumps(header.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    key = "discogym-run-" + hashlib.sha256(document).hexdigest()[:10]
    year = None if header.last_started is None else header.last_started[:4]
    record = _record(
        "misc",
        key,
        [
            ("title", f"discogym run of {', '.join(suites) or '-'}"),
            ("howpublished", f"discogym report {run_dir}"),
            ("year", year),
            ("note", f"task sets {'; '.join(sets) or '-'}. agents {'; '.join(agents) or '-'}. "
             f"repeats {header.repeats or '-'}; {plural(episodes, 'episode')}; "
             f"{header.input_tokens + header.output_tokens:,} tokens; US${header.cost_usd:,.4f}"),
        ],
    )  # fmt: skip
    return Citation(paragraph=paragraph, record=record, papers=papers, paper_records=[paper_record(p) for p in papers])


def model_facts_text(facts: Mapping[str, object]) -> str:
    """``openai/gpt-5: context window 400,000, output limit 128,000, $ per M tokens input 1.25 output 10``."""
    parts = []
    for key, label in (("context_window", "context window"), ("output_limit", "output limit")):
        value = facts.get(key)
        parts.append(f"{label} {value:,}" if isinstance(value, int) else f"{label} unknown")
    price = facts.get("price_per_million_tokens")
    if isinstance(price, dict) and price:
        parts.append("$ per M tokens " + " ".join(f"{kind} {rate:g}" for kind, rate in sorted(price.items())))
    else:
        parts.append("price unknown")
    return f"{facts.get('model', '?')}: {', '.join(parts)}"
