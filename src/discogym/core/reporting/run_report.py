"""``discogym report``: what was run, the generic aggregate table and each suite's own tables, for one run or
for every run in a folder of runs (what ``discogym sweep`` and ``make run`` write).

What is read is checked first: an episode file not named after the key it holds (a copy) is not counted, an
episode its run did not plan is left out, a file of another format version is refused, and a stored score
that is not the one recomputed from the episode's log is replaced by the recomputed one. Each is a warning.
Recomputed scores are remembered by the episode file's content (:mod:`discogym.core.reporting.score_cache`), so
a report scores only the files that changed since the last one.
"""

import base64
import html
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path

import orjson
from pydantic import BaseModel, Field, PrivateAttr

from discogym.core.model.agent import AgentOptions, Usage
from discogym.core.model.episode import Episode, EpisodeKey
from discogym.core.model.errors import UserError
from discogym.core.model.jsonsafe import JsonDict
from discogym.core.model.report_table import ReportTable
from discogym.core.model.suite import Suite, get_suite
from discogym.core.model.termination import EndingKind
from discogym.core.reporting.citation import Citation, citation, model_facts_text
from discogym.core.reporting.human_baselines import DEFAULT_MIN_PEOPLE, human_baseline_table
from discogym.core.reporting.plots import plots_available, score_plot
from discogym.core.reporting.published import protocol_of, published_table
from discogym.core.reporting.report_tables import (
    group_by,
    mean_score,
    present_mean,
    standard_error,
    success_interval,
    success_rate,
    table_html,
    table_markdown,
)
from discogym.core.reporting.score_cache import ScoreCache
from discogym.core.running.crosscheck import made_as_planned, mismatch_warning, score_warning
from discogym.core.running.planning import plan_episode
from discogym.core.running.process import collector_paused
from discogym.core.running.run_file import RunRecord, read_run_file
from discogym.core.running.storage import RUN_FILE, RunDir, StoredEpisode
from discogym.core.running.versions import SHORT_DIGEST, mixed_versions, stamp_of
from discogym.core.terminal.console import plural

# What a row of the generic, endings and memory tables stands for: episodes of one suite, task set (its name and
# the start of its content digest), condition, agent, model, and the model's scaffold and context policy.
KEY_COLUMNS = ["suite", "set", "set digest", "condition", "agent", "model", "scaffold", "context"]
GENERIC_COLUMNS = [
    *KEY_COLUMNS,
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
SUMMARY_TITLE = "All runs"
# The keys of an agent's recorded settings that are facts of its model (shown once per model in the header).
MODEL_KEYS = ("model", "context_window", "output_limit", "price_per_million_tokens")


class TaskSetFacts(BaseModel):
    """A task set episodes were played from: its suite, name, content digest
    (:func:`~discogym.core.running.versions.set_digest`) and number of tasks, as ``run.json`` records them
    (digest and size None for a set no record names, such as ``play``'s)."""

    suite: str
    name: str
    digest: str | None = None
    tasks: int | None = None

    def label(self) -> str:
        """``petri/core-v1 (12 tasks, sha256 3f2a9c1b0d4e...)``."""
        notes = [] if self.tasks is None else [plural(self.tasks, "task")]
        notes.append("digest not recorded" if self.digest is None else f"sha256 {self.digest}")
        return f"{self.suite}/{self.name} ({', '.join(notes)})"


class RunHeader(BaseModel):
    """What was run, taken from ``run.json`` and from the episodes' keys, provenance and runtime sidecars
    (never from the clock), so the same files always give the same header.

    ``suite_versions`` lists each suite's versions, ``task_sets`` every set with its digest, ``model_facts`` the
    facts (context window, output limit, prices per million tokens) of each model as its agents recorded them,
    and the token and cost totals are summed over the counted episodes.
    """

    suites: list[str] = Field(default_factory=list)
    splits: list[str] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    conditions: list[str] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)
    repeats: int | None = None  # the most repeats planned or played
    discogym_versions: list[str] = Field(default_factory=list)
    suite_versions: dict[str, list[str]] = Field(default_factory=dict)
    task_sets: list[TaskSetFacts] = Field(default_factory=list)
    model_facts: list[JsonDict] = Field(default_factory=list)
    git_commits: list[str] = Field(default_factory=list)
    first_started: str | None = None
    last_started: str | None = None
    input_tokens: int = 0  # every request billed: the episodes', and those below
    output_tokens: int = 0
    cost_usd: float = 0.0
    retried: int = 0  # episodes played again after an error, their earlier files in RUN/retried/
    set_aside_spent: Usage = Field(default_factory=Usage)  # what those earlier files had cost
    lost_plays: int = 0  # plays abandoned unwritten by infrastructure faults (RUN/faults.jsonl)
    lost_spent: Usage = Field(default_factory=Usage)  # what they had cost, as far as known
    lost_unknown: int = 0  # those of unknown cost, and unreadable lines of faults.jsonl
    failed_attempts: int = 0  # requests' attempts that failed, in all of the above (their bill unknown)
    failed_input_tokens: int = 0  # what they sent, as counted here
    protocols: list[str] = Field(default_factory=list)  # the papers' protocols the runs followed (run --protocol)

    def set_digests(self) -> dict[tuple[str, str], str | None]:
        """The digest of each (suite, set name); the last one listed when a set has several."""
        return {(s.suite, s.name): s.digest for s in self.task_sets}

    @classmethod
    def merged(cls, headers: Iterable["RunHeader"]) -> "RunHeader":
        """One header for several runs: every value any of them lists, the widest date range."""
        headers = list(headers)
        starts = [h.first_started for h in headers] + [h.last_started for h in headers]
        ordered = _by_time(filter(None, starts))
        versions: dict[str, set[str]] = {}
        for header in headers:
            for suite, found in header.suite_versions.items():
                versions.setdefault(suite, set()).update(found)
        return cls(
            **{
                name: sorted({value for h in headers for value in getattr(h, name)})
                for name in (
                    "suites",
                    "splits",
                    "agents",
                    "models",
                    "conditions",
                    "seeds",
                    "discogym_versions",
                    "protocols",
                )
            },
            suite_versions={suite: sorted(found) for suite, found in sorted(versions.items())},
            task_sets=_unique_sets(s for h in headers for s in h.task_sets),
            model_facts=_unique_facts(f for h in headers for f in h.model_facts),
            git_commits=sorted({c for h in headers for c in h.git_commits}),
            repeats=max((h.repeats for h in headers if h.repeats is not None), default=None),
            first_started=ordered[0] if ordered else None,
            last_started=ordered[-1] if ordered else None,
            input_tokens=sum(h.input_tokens for h in headers),
            output_tokens=sum(h.output_tokens for h in headers),
            cost_usd=round(sum(h.cost_usd for h in headers), 6),
            retried=sum(h.retried for h in headers),
            set_aside_spent=Usage.total(h.set_aside_spent for h in headers),
            lost_plays=sum(h.lost_plays for h in headers),
            lost_spent=Usage.total(h.lost_spent for h in headers),
            lost_unknown=sum(h.lost_unknown for h in headers),
            failed_attempts=sum(h.failed_attempts for h in headers),
            failed_input_tokens=sum(h.failed_input_tokens for h in headers),
        )

    def lines(self) -> list[tuple[str, str]]:
        """(label, text) pairs, as the report shows them."""

        def listed(values: Iterable[object]) -> str:
            return ", ".join(map(str, values)) or "-"

        dates = "-" if self.first_started is None else f"{self.first_started} to {self.last_started}"
        protocol = [("protocol", listed(self.protocols))] if self.protocols else []
        return [
            *protocol,
            ("suites", listed(self.suites)),
            ("splits", listed(self.splits)),
            ("agents", listed(self.agents)),
            ("models", listed(self.models)),
            ("conditions", listed(self.conditions)),
            ("seeds", listed(self.seeds)),
            ("repeats", "-" if self.repeats is None else str(self.repeats)),
            ("discogym", listed(self.discogym_versions)),
            ("suite versions", listed(f"{s} {v}" for s, found in self.suite_versions.items() for v in found)),
            ("task sets", listed(s.label() for s in self.task_sets)),
            ("model facts", listed(model_facts_text(f) for f in self.model_facts)),
            ("git commit", listed(self.git_commits) if self.git_commits else "not recorded"),
            ("episodes started", dates),
            ("tokens", f"{self.input_tokens:,} in, {self.output_tokens:,} out; cost ${self.cost_usd:,.4f}"),
            *self._spent_elsewhere(),
            ("played again after an error", f"{self.retried:,} (earlier files in retried/)" if self.retried else "0"),
        ]

    def _spent_elsewhere(self) -> list[tuple[str, str]]:
        """The lines that say which of the tokens no counted episode holds, and the failed attempts."""
        lines = []
        outside = self.set_aside_spent + self.lost_spent
        if self.retried or self.lost_plays:
            parts = []
            if self.lost_plays:
                unknown = f"; {self.lost_unknown:,} of unknown cost" if self.lost_unknown else ""
                lost = plural(self.lost_plays, "play")
                parts.append(f"{lost} abandoned by infrastructure faults (faults.jsonl{unknown})")
            if self.retried:
                parts.append(f"{plural(self.retried, 'episode')} played again after an error (retried/)")
            spent = f"{outside.input_tokens:,} in, {outside.output_tokens:,} out, ${outside.cost_usd:,.4f}"
            lines.append(("of them in no counted episode", f"{spent}: {' and '.join(parts)}"))
        if self.failed_attempts:
            failed = Usage(failed_attempts=self.failed_attempts, failed_input_tokens=self.failed_input_tokens)
            lines.append(("failed attempts", f"{failed.failures_said()}; not in the tokens above"))
        return lines


def _unique_sets(sets: Iterable[TaskSetFacts]) -> list[TaskSetFacts]:
    """Each (suite, name, digest) once, sorted; a set without a digest is left out when it also has one."""
    found = {(s.suite, s.name, s.digest): s for s in sets}
    dated = {(suite, name) for suite, name, digest in found if digest is not None}
    kept = [s for key, s in found.items() if key[2] is not None or key[:2] not in dated]
    return sorted(kept, key=lambda s: (s.suite, s.name, s.digest or ""))


def _unique_facts(facts: Iterable[JsonDict]) -> list[JsonDict]:
    """Each model's facts once (as recorded: the same model with other facts twice), by model."""
    unique = {orjson.dumps(f, option=orjson.OPT_SORT_KEYS): f for f in facts}
    return [unique[key] for key in sorted(unique)]


class RunReport(BaseModel):
    """Everything ``discogym report`` prints, also as its ``--json`` document.

    For one run, ``tables`` are the generic table then each suite's own. For a folder of runs, ``tables`` hold
    the summary across them (one row per run, suite, condition, agent and model) and ``runs`` each run's report.
    """

    run_dir: str
    episodes: int
    rescored: bool
    header: RunHeader = Field(default_factory=RunHeader)
    tables: list[ReportTable]
    plots: list[str] = Field(default_factory=list)
    # Mixed versions, copied, unplanned or re-scored episodes, cached outcomes at odds with the log.
    warnings: list[str] = Field(default_factory=list)
    runs: list["RunReport"] = Field(default_factory=list)
    _episodes: list[Episode] = PrivateAttr(default_factory=list)  # what a folder's human baselines are made of

    def markdown(self, title: str = "discogym report") -> str:
        """The report as markdown."""
        header = "".join(f"- {label}: {text}\n" for label, text in self.header.lines())
        parts = [
            f"# {title}: {self.run_dir}\n\n{plural(self.episodes, 'episode')}"
            + (" (rescored)" if self.rescored else "")
            + f"\n\n{header}\n",
            "\n".join(table_markdown(table) for table in self.tables),
        ]
        if self.plots:
            parts.append("\n" + "".join(f"- plot: {path}\n" for path in self.plots))
        if not self.runs:  # a folder's warnings are shown in each run's section
            parts.append("".join(f"\n**warning:** {line}\n" for line in self.warnings))
        parts.extend("\n" + run.markdown("run") for run in self.runs)
        return "".join(parts)

    def citation(self) -> Citation:
        """What was run as a citable paragraph and BibTeX-like records (``discogym cite``)."""
        return citation(self.run_dir, self.episodes, self.header, self.tables[0])

    def html(self) -> str:
        """The report as a standalone HTML page (plots embedded), ending with the citable block."""
        cited = self.citation()
        block = (
            f'<h2 id="cite">How to cite</h2>\n<p>{html.escape(cited.paragraph)}</p>\n'
            f"<pre>{html.escape(cited.bibtex)}</pre>\n"
        )
        return (
            '<!doctype html>\n<html><head><meta charset="utf-8"><title>discogym report</title>'
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}.warning{color:#a60}"
            "pre{white-space:pre-wrap;overflow-wrap:anywhere}</style></head>\n"
            f"<body>\n{self._html_section('discogym report')}{block}</body></html>\n"
        )

    def _html_section(self, title: str) -> str:
        header = "".join(f"<li>{html.escape(label)}: {html.escape(text)}</li>" for label, text in self.header.lines())
        body = "\n".join(table_html(table) for table in self.tables)
        for path in self.plots:
            encoded = base64.b64encode(Path(path).read_bytes()).decode("ascii")
            body += f'<p><img alt="{html.escape(Path(path).name)}" src="data:image/png;base64,{encoded}"></p>\n'
        if not self.runs:
            body += "".join(f'<p class="warning">warning: {html.escape(line)}</p>\n' for line in self.warnings)
        body += "".join(run._html_section("run") for run in self.runs)
        return (
            f"<h1>{html.escape(title)}: {html.escape(self.run_dir)}</h1>\n<p>{plural(self.episodes, 'episode')}</p>\n"
            f"<ul>{header}</ul>\n{body}"
        )


Digests = Mapping[tuple[str, str], str | None]


def row_key(episode: Episode, digests: Digests | None = None) -> tuple[str, ...]:
    """The :data:`KEY_COLUMNS` of the row ``episode`` counts in: its set's digest from ``digests`` (by suite and
    set name; '-' when not known), its scaffold and context policy from the settings its agent recorded ('-'
    for an agent without them)."""
    key, settings = episode.key, episode.provenance.agent_settings
    digest = (digests or {}).get((key.suite, episode.task.split))
    return (
        key.suite,
        episode.task.split,
        "-" if digest is None else digest[:SHORT_DIGEST],
        key.condition_label(),
        key.agent_label(),
        key.model or "-",
        str(settings.get("scaffold") or "-"),
        str(settings.get("context") or "-"),
    )


def _row_key(digests: Digests | None) -> Callable[[Episode], tuple[str, ...]]:
    return lambda episode: row_key(episode, digests)


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


GENERIC_NOTES = [
    "scored: the episodes behind mean score, score SE, success rate and its interval; episodes that "
    "ended in an error (or were not scored) are left out of them",
    "score SE: standard error of the mean score ('-' below two scored episodes); success 95% CI: "
    "Wilson score interval; each suite scores on its own scale, so compare rows within a suite",
]


def generic_table(episodes: list[Episode], digests: Digests | None = None) -> ReportTable:
    """One row per :func:`row_key` (suite, set and its digest, condition, agent, model, scaffold, context):
    counts, mean score with its standard error, success rate with its Wilson 95% interval, the number of scored
    episodes behind them, steps, tokens and cost. Episodes of two sets are never pooled."""
    rows = [[*key, *_generic_cells(members)] for key, members in group_by(episodes, _row_key(digests))]
    return ReportTable(title="All episodes", columns=GENERIC_COLUMNS, rows=rows, notes=GENERIC_NOTES)


ENDINGS_TITLE = "How the episodes ended"
ENDINGS_NOTES = [
    "by kind (discogym.core.EndingKind): task, the environment's own end (submitted, crafted, ...); agent, the agent "
    "stopped or gave no usable answer; limit, a step, time, token, cost or turn limit cut it short; error, a bug of "
    "the environment or agent (not scored); abandoned, its player or client left",
]


ENDING_COLUMNS = {
    EndingKind.TASK: "by the task",
    EndingKind.AGENT: "by the agent",
    EndingKind.LIMIT: "by a limit",
    EndingKind.ERROR: "by an error",
    EndingKind.ABANDONED: "abandoned",
}


def endings_table(episodes: list[Episode], digests: Digests | None = None) -> ReportTable:
    """One row per :func:`row_key`: how many episodes ended in each kind of ending, and which endings they
    were."""
    rows = []
    for key, members in group_by(episodes, _row_key(digests)):
        endings = Counter(e.outcome.termination for e in members)
        kinds = Counter(ending.kind for ending in endings.elements())
        listed = ", ".join(f"{name.value} {count}" for name, count in sorted(endings.items()))
        rows.append([*key, *(kinds[kind] for kind in EndingKind), listed])
    columns = [*KEY_COLUMNS, *(ENDING_COLUMNS[kind] for kind in EndingKind), "endings"]
    return ReportTable(title=ENDINGS_TITLE, columns=columns, rows=rows, notes=ENDINGS_NOTES)


MEMORY_TITLE = "Context and memory"
MEMORY_COLUMNS = [
    "compactions",
    "turns replaced",
    "summary tokens",
    "summary cost $",
    "notes written",
    "notes deleted",
    "notes read",
    "scratchpad edits",
]
MEMORY_NOTES = [
    "compactions: older turns of a model's conversation replaced by a summary the model wrote (context=compact); "
    "their tokens and cost are part of the episodes' totals above",
    "notes: the llm agent's notes tool; scratchpad edits: the autumnbench scaffold's tags",
]


def memory_table(episodes: list[Episode], digests: Digests | None = None) -> ReportTable | None:
    """One row per :func:`row_key` whose agents compacted their context or kept notes: how often, and what the
    summaries cost; None when no episode did either."""
    rows = []
    for key, members in group_by(episodes, _row_key(digests)):
        entries = [
            entry
            for episode in members
            for entry in [*(m for event in episode.events for m in event.memory), *episode.outcome.final_memory]
        ]
        if not entries:
            continue
        compactions = [entry for entry in entries if entry.kind == "compaction"]
        usage = sum((entry.usage or Usage() for entry in compactions), Usage())
        actions = Counter(entry.action for entry in entries if entry.kind == "notes")
        rows.append(
            [
                *key,
                len(compactions),
                sum(entry.replaced_turns or 0 for entry in compactions),
                usage.input_tokens + usage.output_tokens,
                round(usage.cost_usd, 6),
                actions["write"],
                actions["delete"],
                actions["read"],
                actions["scratchpad_add"] + actions["scratchpad_del"],
            ]
        )
    if not rows:
        return None
    columns = [*KEY_COLUMNS, *MEMORY_COLUMNS]
    return ReportTable(title=MEMORY_TITLE, columns=columns, rows=rows, notes=MEMORY_NOTES)


def summary_table(root: Path, reports: Iterable[RunReport]) -> ReportTable:
    """The runs' generic tables in one: a row per run (its folder under ``root``) and :func:`row_key`."""
    rows: list[list[object]] = []
    for report in reports:
        name = Path(report.run_dir).relative_to(root).as_posix()
        rows.extend([name, *row] for row in report.tables[0].rows)
    return ReportTable(title=SUMMARY_TITLE, columns=["run", *GENERIC_COLUMNS], rows=rows, notes=GENERIC_NOTES)


def combined_score_plot(reports: Iterable[RunReport], path: Path) -> Path | None:
    """The score plot (one panel per suite) of the episodes of every report, written to ``path``; None when
    none is scored."""
    return score_plot([episode for report in reports for episode in report._episodes], path)


def is_run_dir(folder: Path) -> bool:
    """True for a folder ``discogym run`` (or ``play``, or ``mcp``) wrote: it holds run.json or episodes/."""
    return (folder / RUN_FILE).is_file() or RunDir(folder).episodes_dir.is_dir()


def find_runs(root: Path, *, follow_links: bool = False) -> list[Path]:
    """The run folders at or under ``root``, in path order; the folders inside a run (its episodes, plots,
    redstone's reference devices) are not searched, nor hidden folders, nor folders that are symbolic links unless
    ``follow_links`` (then each folder is searched once, by the first path that reaches it, so a link to a run
    under ``root``, or a loop of links, lists nothing twice)."""
    runs = []
    seen: set[str] = set()
    for folder, subfolders, _ in os.walk(root, followlinks=follow_links):
        real = os.path.realpath(folder)
        if real in seen:
            subfolders.clear()
            continue
        seen.add(real)
        if is_run_dir(Path(folder)):
            runs.append(Path(folder))
            subfolders.clear()
        else:
            subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
    return sorted(runs)


def build_report(
    root: Path,
    *,
    rescore: bool = False,
    plots_dir: Path | None = None,
    plots_in_runs: bool = False,
    min_people: int = DEFAULT_MIN_PEOPLE,
) -> RunReport:
    """Read every episode of the run at ``root``, or of every run under it, and build the report.

    ``rescore`` recomputes every score and audit with the suites' current scorers instead of the stored
    ones. Plots (PNG: the generic score plot, then each suite's own) go to ``plots_dir`` (for a folder of runs,
    to ``plots_dir/RUN``), or with ``plots_in_runs`` to each run's ``plots`` folder; otherwise nowhere.
    """
    if not root.is_dir():
        raise UserError(f"no run directory at {root}")
    if (plots_dir is not None or plots_in_runs) and not plots_available():
        raise UserError("plots need matplotlib: pip install 'discogym[plots]' (or leave out --plots)")
    runs = find_runs(root, follow_links=True)  # the researcher's own folders: a run linked in is theirs too
    if runs == [root]:
        where = root / "plots" if plots_in_runs else plots_dir
        return run_report(root, rescore=rescore, plots_dir=where, min_people=min_people)
    reports, empty = [], []
    for run in runs:
        where = run / "plots" if plots_in_runs else None if plots_dir is None else plots_dir / run.relative_to(root)
        if RunDir(run).episode_paths():
            reports.append(run_report(run, rescore=rescore, plots_dir=where, min_people=min_people))
        else:
            empty.append(f"{run}: no episodes yet")
    if not reports:
        raise UserError(f"{root} holds no episodes (expected files under {root / 'episodes'}, or runs in folders)")
    return folder_report(root, reports, rescored=rescore, warnings=empty, min_people=min_people)


def folder_report(
    root: Path, reports: list[RunReport], *, rescored: bool, warnings: list[str], min_people: int = DEFAULT_MIN_PEOPLE
) -> RunReport:
    """The report of several runs under ``root``: their summary table, the human baselines across them (people
    and models usually play in runs of their own), then each run's report."""
    episodes = [episode for report in reports for episode in report._episodes]
    baselines = human_baseline_table(episodes, _human_percentile, min_people)
    return RunReport(
        run_dir=str(root),
        episodes=sum(report.episodes for report in reports),
        rescored=rescored,
        header=RunHeader.merged(report.header for report in reports),
        tables=[summary_table(root, reports), *filter(None, [baselines])],
        warnings=[*warnings, *(f"{report.run_dir}: {line}" for report in reports for line in report.warnings)],
        runs=reports,
    )


def _human_percentile(suite: str) -> float:
    return get_suite(suite).human_percentile


def run_report(
    root: Path, *, rescore: bool = False, plots_dir: Path | None = None, min_people: int = DEFAULT_MIN_PEOPLE
) -> RunReport:
    """The report of the one run at ``root`` (see :func:`build_report`)."""
    with collector_paused():
        return _run_report(root, rescore=rescore, plots_dir=plots_dir, min_people=min_people)


def _run_report(root: Path, *, rescore: bool, plots_dir: Path | None, min_people: int) -> RunReport:
    run_dir = RunDir(root)
    warnings: list[str] = []
    stored = list(run_dir.read_episodes(skipped=warnings))
    if not stored and not run_dir.episode_paths():
        raise UserError(f"{root} holds no episodes (expected files under {run_dir.episodes_dir})")
    records = _read_records(run_dir, warnings)
    planned = [read for read in stored if _planned(read, records[-1] if records else None, warnings)]
    warnings.extend(filter(None, [mixed_versions(run_dir, [stamp_of(read.path, read.episode) for read in stored])]))
    suites = {name: get_suite(name) for name in sorted({read.episode.key.suite for read in planned})}
    cache = ScoreCache(root, read=not rescore)
    episodes = []
    for _, episode, digest in planned:
        recomputed = cache.recomputed(suites[episode.key.suite], episode, digest)
        episodes.append(_checked(episode, recomputed, rescore, warnings))
    cache.save()
    header = run_header(run_dir, records, episodes)
    digests = header.set_digests()
    plots: list[Path] = []
    if plots_dir is not None and episodes:
        plots.extend(filter(None, [score_plot(episodes, plots_dir / "scores.png")]))
    tables = [
        generic_table(episodes, digests),
        endings_table(episodes, digests),
        *filter(None, [memory_table(episodes, digests)]),
    ]
    for name, suite in suites.items():
        by_set = group_by((e for e in episodes if e.key.suite == name), lambda e: (e.task.split,))
        for (split,), own in by_set:
            # a run of several sets gets each set's own tables (titled with the set) and plots (in a folder each)
            several = len(by_set) > 1
            tables.extend(_titled(table, split) if several else table for table in suite.tables(own))
            if plots_dir is not None:
                plots.extend(suite.plots(own, plots_dir / split if several else plots_dir))
    tables.extend(filter(None, [human_baseline_table(episodes, _human_percentile, min_people)]))
    tables.extend(_published_tables(records[-1] if records else None, suites, episodes))
    report = RunReport(
        run_dir=str(root),
        episodes=len(episodes),
        rescored=rescore,
        header=header,
        tables=tables,
        plots=[str(p) for p in plots],
        warnings=warnings,
    )
    report._episodes = episodes
    return report


def _published_tables(record: RunRecord | None, suites: dict[str, Suite], episodes: list[Episode]) -> list[ReportTable]:
    """The published figures beside the run's, when its newest record names a paper's protocol."""
    if record is None or record.protocol is None or record.suite not in suites:
        return []
    protocol = protocol_of(record.protocol, suites[record.suite].protocols())
    table = None if protocol is None else published_table(protocol, episodes)
    return [table] if table is not None else []


def _titled(table: ReportTable, split: str) -> ReportTable:
    """A suite's own table of one set's episodes, its title saying which set."""
    return table.model_copy(update={"title": f"{table.title} (set {split})"})


def _read_records(run_dir: RunDir, warnings: list[str]) -> list[RunRecord]:
    """The records of the run's ``run.json`` (an old single configuration as one), or [] (with a warning when
    it is there but unreadable)."""
    try:
        return read_run_file(run_dir)
    except UserError:
        warnings.append(
            f"{run_dir.config_path} is not a discogym run configuration; the episodes are checked against their seeds"
        )
        return []


def _planned(read: StoredEpisode, config: RunRecord | None, warnings: list[str]) -> bool:
    """True when the run plans this episode: of its suite, with the key and seeds :func:`plan_episode` gives
    with the run's seed (its own recorded seed when there is no run.json: ``play`` and ``mcp`` write none).
    ``config`` is run.json's latest record (every record has the same suite and seed). Membership of a record's
    grid is not asked: a rerun may play other sets, agents or models."""
    episode, key = read.episode, read.episode.key
    seed = episode.provenance.run_seed if config is None else config.seed
    agent = AgentOptions.model_construct(
        name=key.agent,
        model=key.model,
        options=dict(key.agent_options),
        token_limit=key.token_limit,
        cost_limit=key.cost_limit,
    )
    expected = plan_episode(key.suite, episode.task, episode.condition, agent, key.repeat, seed, key.setting)
    if (config is None or key.suite == config.suite) and made_as_planned(episode, expected):
        return True
    run = f"suite '{config.suite}', seed {seed}" if config else f"seed {seed}"
    warnings.append(
        f"{read.path}: not an episode this run plans ({run}): copied from another run or edited; it is left out"
    )
    return False


def _checked(episode: Episode, recomputed: Episode, rescore: bool, warnings: list[str]) -> Episode:
    """The episode rescored from its log (``recomputed``) when ``rescore`` is set or its stored score is not
    the recomputed one (with a warning), else as stored; a warning too when its cached outcome disagrees with
    its log."""
    differs = score_warning(episode, recomputed)
    warnings.extend(filter(None, [differs, mismatch_warning(recomputed)]))
    return recomputed if rescore or differs else episode


def run_header(run_dir: RunDir, records: list[RunRecord], episodes: list[Episode]) -> RunHeader:
    """What the run's ``run.json`` records and its counted episodes say was run."""
    keys = [e.key for e in episodes]
    planned_agents = [agent for record in records for agent in record.agents]
    starts = _by_time(filter(None, (_started_at(run_dir, key) for key in keys)))
    set_aside = run_dir.set_aside_spent()
    lost = run_dir.lost_episodes()
    lost_spent = Usage.total(play.spent for play in lost.lost)
    usages = [e.usage() for e in episodes] + [set_aside, lost_spent]
    versions: dict[str, set[str]] = {}
    for suite, version in [(e.key.suite, e.provenance.suite_version) for e in episodes] + [
        (r.suite, r.suite_version) for r in records
    ]:
        if version is not None:
            versions.setdefault(suite, set()).add(version)
    sets = [TaskSetFacts(suite=e.key.suite, name=e.task.split) for e in episodes]
    sets += [TaskSetFacts(suite=r.suite, name=r.split, digest=r.set_digest, tasks=r.set_size) for r in records]
    facts = [e.provenance.agent_settings for e in episodes] + [f for r in records for f in r.agent_facts]
    return RunHeader(
        suites=sorted({k.suite for k in keys} | {r.suite for r in records}),
        splits=sorted({e.task.split for e in episodes} | {r.split for r in records}),
        agents=sorted({k.agent_label() for k in keys} | {_agent_label(a) for a in planned_agents}),
        models=sorted({k.model for k in keys if k.model} | {a.model for a in planned_agents if a.model}),
        conditions=sorted({k.condition for k in keys} | {c for r in records for c in r.conditions}),
        seeds=sorted({e.provenance.run_seed for e in episodes} | {r.seed for r in records}),
        repeats=max([k.repeat + 1 for k in keys] + [r.repeats for r in records], default=None),
        discogym_versions=sorted(
            {e.provenance.discogym_version for e in episodes} | {r.discogym_version for r in records}
        ),
        suite_versions={suite: sorted(found) for suite, found in sorted(versions.items())},
        task_sets=_latest_sets(sets),
        model_facts=_unique_facts(
            {key: f[key] for key in MODEL_KEYS if key in f} for f in facts if isinstance(f.get("model"), str)
        ),
        git_commits=sorted({e.provenance.git_commit for e in episodes if e.provenance.git_commit}),
        first_started=starts[0] if starts else None,
        last_started=starts[-1] if starts else None,
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        cost_usd=round(sum(u.cost_usd for u in usages), 6),
        retried=run_dir.retried_count(),
        set_aside_spent=set_aside,
        lost_plays=len(lost.lost) + lost.unreadable,
        lost_spent=lost_spent,
        lost_unknown=sum(play.spent is None for play in lost.lost) + lost.unreadable,
        failed_attempts=sum(u.failed_attempts for u in usages),
        failed_input_tokens=sum(u.failed_input_tokens for u in usages),
        protocols=sorted({r.protocol for r in records if r.protocol}),
    )


def _latest_sets(sets: Iterable[TaskSetFacts]) -> list[TaskSetFacts]:
    """One entry per (suite, set name): the last that has a digest (run.json's newest record of it), else the
    set without one; sorted."""
    latest: dict[tuple[str, str], TaskSetFacts] = {}
    for facts in sets:
        if facts.digest is not None or (facts.suite, facts.name) not in latest:
            latest[(facts.suite, facts.name)] = facts
    return [latest[key] for key in sorted(latest)]


def _agent_label(agent: AgentOptions) -> str:
    """How an agent of run.json is labelled in the tables."""
    return EpisodeKey(
        suite="-",
        task="-",
        condition="-",
        agent=agent.name,
        model=agent.model,
        agent_options=agent.options,
        token_limit=agent.token_limit,
        cost_limit=agent.cost_limit,
    ).agent_label()


def _started_at(run_dir: RunDir, key: EpisodeKey) -> str | None:
    """When the episode started, as its runtime sidecar records it; None when it has none readable."""
    try:
        started = orjson.loads(run_dir.runtime_path(key).read_bytes()).get("started_at")
        aware = datetime.fromisoformat(started).tzinfo is not None
    except (OSError, orjson.JSONDecodeError, AttributeError, TypeError, ValueError):
        return None
    return started if aware else None


def _by_time(stamps: Iterable[str]) -> list[str]:
    """ISO 8601 time stamps (with their time zone) in time order."""
    return sorted(stamps, key=datetime.fromisoformat)
