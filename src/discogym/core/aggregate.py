"""``discogym report``: the generic aggregate table plus each suite's own tables."""

import base64
import html
from collections import defaultdict
from pathlib import Path
from statistics import fmean

from pydantic import BaseModel, Field

from discogym.core.episode import Episode
from discogym.core.errors import UserError
from discogym.core.play import score_episode
from discogym.core.plots import plots_available, score_plot
from discogym.core.report import ReportTable, table_html, table_markdown
from discogym.core.storage import RunDir
from discogym.core.suite import get_suite

GENERIC_COLUMNS = [
    "suite",
    "condition",
    "agent",
    "model",
    "episodes",
    "errors",
    "mean score",
    "success rate",
    "mean steps",
    "input tokens",
    "output tokens",
    "cost usd",
]


class RunReport(BaseModel):
    """Everything ``discogym report`` prints, also as its ``--json`` document."""

    run_dir: str
    episodes: int
    rescored: bool
    tables: list[ReportTable]
    plots: list[str] = Field(default_factory=list)

    def markdown(self) -> str:
        """The report as markdown."""
        header = (
            f"# discogym report: {self.run_dir}\n\n{self.episodes} episodes"
            + (" (rescored)" if self.rescored else "")
            + "\n\n"
        )
        plots = "".join(f"- plot: {path}\n" for path in self.plots)
        return header + "\n".join(table_markdown(table) for table in self.tables) + (f"\n{plots}" if plots else "")

    def html(self) -> str:
        """The report as a standalone HTML page (plots embedded)."""
        body = "\n".join(table_html(table) for table in self.tables)
        for path in self.plots:
            encoded = base64.b64encode(Path(path).read_bytes()).decode("ascii")
            body += f'<p><img alt="{html.escape(Path(path).name)}" src="data:image/png;base64,{encoded}"></p>\n'

        return (
            '<!doctype html>\n<html><head><meta charset="utf-8"><title>discogym report</title>'
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}</style></head>\n<body>\n"
            f"<h1>discogym report</h1>\n<p>{self.episodes} episodes</p>\n{body}</body></html>\n"
        )


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def generic_table(episodes: list[Episode]) -> ReportTable:
    """One row per (suite, condition, agent, model): counts, scores, steps, tokens and cost."""
    groups: dict[tuple[str, str, str, str], list[Episode]] = defaultdict(list)
    for episode in episodes:
        key = episode.key
        groups[(key.suite, key.condition, key.agent_label(), key.model or "-")].append(episode)
    rows = []
    for group_key in sorted(groups):
        members = groups[group_key]
        scores = [e.score.value for e in members if e.score.value is not None]
        successes = [float(e.score.success) for e in members if e.score.success is not None]
        usages = [e.usage() for e in members]
        rows.append(
            [
                *group_key,
                len(members),
                sum(e.outcome.status == "error" for e in members),
                _mean(scores),
                _mean(successes),
                _mean([float(len(e.events)) for e in members]),
                sum(u.input_tokens for u in usages),
                sum(u.output_tokens for u in usages),
                round(sum(u.cost_usd for u in usages), 6),
            ]
        )
    return ReportTable(
        title="All episodes",
        columns=GENERIC_COLUMNS,
        rows=rows,
        notes=["mean score and success rate leave out episodes that ended in an error (not scored)"],
    )


def build_report(root: Path, *, rescore: bool = False, plots_dir: Path | None = None) -> RunReport:
    """Read every episode under ``root`` and build the report.

    ``rescore`` recomputes scores and audits with the suites' current scorers instead of the stored
    ones; ``plots_dir`` is where PNG plots go (the generic score plot, then each suite's own), if anywhere.
    """
    if not root.is_dir():
        raise UserError(f"no run directory at {root}")
    episodes = list(RunDir(root).iter_episodes())
    if not episodes:
        raise UserError(f"{root} holds no episodes (expected files under {root / 'episodes'})")
    suite_names = sorted({episode.key.suite for episode in episodes})
    suites = {name: get_suite(name) for name in suite_names}
    if rescore:
        episodes = [score_episode(suites[e.key.suite], e) for e in episodes]
    tables = [generic_table(episodes)]
    plots: list[Path] = []
    if plots_dir is not None:
        if not plots_available():
            raise UserError("plots need matplotlib: pip install 'discogym[plots]' (or leave out --plots)")
        plots.extend(filter(None, [score_plot(episodes, plots_dir / "scores.png")]))
    for name in suite_names:
        own = [e for e in episodes if e.key.suite == name]
        tables.extend(suites[name].report(own))
        if plots_dir is not None:
            plots.extend(suites[name].plots(own, plots_dir))
    return RunReport(
        run_dir=str(root), episodes=len(episodes), rescored=rescore, tables=tables, plots=[str(p) for p in plots]
    )
