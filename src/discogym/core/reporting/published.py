"""The report's "published" table: a protocol run's figures beside the paper's for the same protocol, condition and
model (or the paper's range over its models when the run's model is not among them), with the run's 95% interval
and whether the published value lies inside it."""

import math
from collections.abc import Iterable

from discogym.core.model.episode import Episode
from discogym.core.model.protocol import Metric, Protocol, PublishedFigure
from discogym.core.model.report_table import ReportTable
from discogym.core.reporting.report_tables import by_agent, mean_score, scored_episodes, success_interval, success_rate

COLUMNS = [
    "condition",
    "agent",
    "model",
    "metric",
    "yours",
    "95% CI",
    "scored",
    "errors",
    "published",
    "paper's model",
    "source",
    "check",
]
METRIC_NAMES: dict[Metric, str] = {"success_rate": "success rate", "mean_score": "mean score"}


def protocol_of(name: str | None, suite_protocols: Iterable[Protocol]) -> Protocol | None:
    """The protocol called ``name`` among a suite's, or None (no name, or one the suite no longer has)."""
    return next((p for p in suite_protocols if p.name == name), None) if name else None


def published_table(protocol: Protocol, episodes: list[Episode]) -> ReportTable | None:
    """One row per (condition, agent, model) of ``episodes`` and metric the paper published for that condition;
    None when the protocol has no figure for any condition the run played."""
    rows: list[list[object]] = []
    for (agent, model, condition), members in by_agent(episodes):
        for metric in ("success_rate", "mean_score"):
            figures = protocol.figures_for(condition, metric)
            if figures:
                paper_name = protocol.reference_rows.get(agent.split("[", 1)[0]) if model == "-" else None
                cells = _cells(members, model, paper_name, metric, figures)
                rows.append([condition, agent, model, METRIC_NAMES[metric], *cells])
    if not rows:
        return None
    return ReportTable(
        title=f"Published figures beside yours ({protocol.name}: {', '.join(protocol.tables)})",
        columns=COLUMNS,
        rows=rows,
        notes=[
            "published: the paper's figure for your model (or reference solver) when it reports it, else the range "
            "over the models it reports (their count in brackets); source: the figure's table, row and column",
            "95% CI: Wilson score interval for a success rate, mean ± t times the standard error for a mean score, "
            "over the scored episodes; episodes that ended in an error (the harness's or the environment's, not "
            "the agent's) are left out and counted under errors",
            "check: inside or outside when the published value is compared with your interval; within or beyond "
            "the paper's range when your model is not in the paper",
            f"differences from the paper: {'; '.join(protocol.differences)}",
        ],
    )


def _cells(
    members: list[Episode], model: str, paper_name: str | None, metric: Metric, figures: list[PublishedFigure]
) -> list[object]:
    """The row's cells after its key: yours, your interval, counts, then the paper's figure for your model (or
    reference solver, ``paper_name``) and the check, or the paper's range over its models."""
    scored = scored_episodes(members)
    errors = sum(e.outcome.status == "error" for e in members)
    yours = success_rate(scored) if metric == "success_rate" else mean_score(scored)
    scores = [float(e.score.value) for e in scored if e.score.value is not None]
    interval = success_interval(scored) if metric == "success_rate" else mean_interval(scores)
    own = [f for f in figures if f.matches_model(model if model != "-" else None) or f.model == paper_name]
    head = [yours, None if interval is None else list(interval), len(scored), errors]
    if own:
        figure = own[0]
        source = f"{figure.source.table}, {figure.source.row}, {figure.source.column}"
        return [*head, figure.value, figure.model, source, _inside(figure.value, interval)]
    values = [f.value for f in figures]
    low, high = min(values), max(values)
    models = len({f.model for f in figures})
    tables = sorted({f.source.table for f in figures})
    check = "-" if yours is None else ("within range" if low <= yours <= high else "beyond range")
    published = f"{low:.3f}-{high:.3f} ({models} models)" if models > 1 else f"{low:.3f}"
    paper_models = "the paper's models" if models > 1 else figures[0].model
    return [*head, published, paper_models, ", ".join(tables), check]


def _inside(value: float, interval: tuple[float, float] | None) -> str:
    if interval is None:
        return "-"
    return "inside" if interval[0] <= value <= interval[1] else "outside"


def mean_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """The t interval of the mean of ``values``; None below two values."""
    if len(values) < 2:
        return None
    from scipy import stats  # only a protocol run's report needs it, and its import is slow

    mean = math.fsum(values) / len(values)
    spread = stats.tstd(values) / math.sqrt(len(values))
    half = float(stats.t.ppf(0.5 + confidence / 2, len(values) - 1)) * spread
    return mean - half, mean + half
