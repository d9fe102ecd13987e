"""``discogym report``: the generic aggregate table plus each suite's own tables."""

import base64
import html
from pathlib import Path

from pydantic import BaseModel, Field

from discogym.core.crosscheck import mismatch_warning
from discogym.core.episode import Episode
from discogym.core.episode_loop import score_episode
from discogym.core.errors import UserError
from discogym.core.plots import plots_available, score_plot
from discogym.core.report_tables import (
    ReportTable,
    group_by,
    mean_score,
    present_mean,
    standard_error,
    success_interval,
    success_rate,
    table_html,
    table_markdown,
)
from discogym.core.storage import RunDir
from discogym.core.suite import get_suite
from discogym.core.versions import mixed_versions

GENERIC_COLUMNS = [
    "suite",
    "condition",
    "agent",
    "model",
    "episodes",
    "errors",
    "mean score",
    "score SE",
    "success rate",
    "success 95% CI",
    "scored",
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
    # One line per episode whose cached outcome (outcome.env) disagrees with the verdict recomputed from its log.
    warnings: list[str] = Field(default_factory=list)

    def markdown(self) -> str:
        """The report as markdown."""
        header = (
            f"# discogym report: {self.run_dir}\n\n{self.episodes} episodes"
            + (" (rescored)" if self.rescored else "")
            + "\n\n"
        )
        plots = "".join(f"- plot: {path}\n" for path in self.plots)
        warnings = "".join(f"\n**warning:** {line}\n" for line in self.warnings)
        return (
            header
            + "\n".join(table_markdown(table) for table in self.tables)
            + (f"\n{plots}" if plots else "")
            + warnings
        )

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


def _generic_key(episode: Episode) -> tuple[str, str, str, str]:
    key = episode.key
    return (key.suite, key.condition, key.agent_label(), key.model or "-")


def _generic_cells(members: list[Episode]) -> list[object]:
    """A generic row's cells after its key, in the order of ``GENERIC_COLUMNS``."""
    scored = [e for e in members if e.outcome.status != "error" and e.score.value is not None]
    interval = success_interval(scored)
    usages = [e.usage() for e in members]
    return [
        len(members),
        sum(e.outcome.status == "error" for e in members),
        mean_score(scored),
        standard_error([float(e.score.value or 0.0) for e in scored]),
        success_rate(scored),
        None if interval is None else list(interval),
        len(scored),
        present_mean(float(len(e.events)) for e in members),
        sum(u.input_tokens for u in usages),
        sum(u.output_tokens for u in usages),
        round(sum(u.cost_usd for u in usages), 6),
    ]


def generic_table(episodes: list[Episode]) -> ReportTable:
    """One row per (suite, condition, agent, model): counts, mean score with its standard error, success rate
    with its Wilson 95% interval, the number of scored episodes behind them, steps, tokens and cost."""
    rows = [[*key, *_generic_cells(members)] for key, members in group_by(episodes, _generic_key)]
    return ReportTable(
        title="All episodes",
        columns=GENERIC_COLUMNS,
        rows=rows,
        notes=[
            "scored: the episodes behind mean score, score SE, success rate and its interval; episodes that "
            "ended in an error (or were not scored) are left out of them",
            "score SE: standard error of the mean score ('-' below two scored episodes); success 95% CI: "
            "Wilson score interval; each suite scores on its own scale, so compare rows within a suite",
        ],
    )


def build_report(root: Path, *, rescore: bool = False, plots_dir: Path | None = None) -> RunReport:
    """Read every episode under ``root`` and build the report.

    ``rescore`` recomputes scores and audits with the suites' current scorers instead of the stored
    ones; ``plots_dir`` is where PNG plots go (the generic score plot, then each suite's own), if anywhere.
    ``warnings`` says whether the directory mixes suite versions or task contents, and names the episodes whose
    scorer found the cached ``outcome.env`` at odds with the log.
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
        run_dir=str(root),
        episodes=len(episodes),
        rescored=rescore,
        tables=tables,
        plots=[str(p) for p in plots],
        warnings=[
            *filter(None, [mixed_versions(RunDir(root))]),
            *[line for line in map(mismatch_warning, episodes) if line is not None],
        ],
    )
