"""The ``discogym`` command: list suites and tasks, run agents, report on runs."""

import os
import signal
import sys
import tempfile
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Column, Table
from rich.text import Text
from typer.exceptions import TyperException

from discogym.core import UserError
from discogym.core.terminal.console import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    JsonOption,
    fail,
    plural,
    print_json,
    stderr,
    stdout,
    styled,
    user_errors,
)
from discogym.interfaces.suite_commands import SuiteCommandsGroup

# Start-up time: this module imports only what every invocation needs (`discogym --version` must not pay for
# numpy or any suite). Each command imports the harness modules it uses in its body; the suites' own commands
# are imported only when invoked (SuiteCommandsGroup).
if TYPE_CHECKING:
    from discogym.core import AgentOptions, Protocol, Suite
    from discogym.core.reporting.run_report import RunReport
    from discogym.core.running.executors import Executor, RunListener
    from discogym.core.running.runner import RunConfig, RunSummary

app = typer.Typer(
    name="discogym",
    help="Measure how well AI agents do science: discover hidden rules by experiment, then use them.",
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=SuiteCommandsGroup,
)


def suite_document(suite: "Suite", digests: bool = False) -> dict[str, Any]:
    """What ``list --json`` says about one suite (``task_counts`` is None for a split that cannot be counted
    offline, such as crafting's before its data is fetched); with ``digests``, each split's content digest too
    (None for a split that cannot be loaded here)."""
    from discogym.core.running.agent_lookup import REFERENCE, accepted_options, agent_names

    agents = agent_names(suite)
    return {
        "name": suite.name,
        "aliases": list(suite.aliases),
        "description": suite.description,
        "version": suite.version,
        "papers": [paper.model_dump(mode="json") for paper in suite.papers],
        "splits": suite.splits(),
        "default_split": suite.splits()[0],
        "task_counts": {split: _task_count(suite, split) for split in suite.splits()},
        **({"set_digests": {split: _set_digest(suite, split) for split in suite.splits()}} if digests else {}),
        "conditions": [c.name for c in suite.conditions()],
        "agents": agents,
        "agent_options": {name: list(accepted_options(suite, name)) for name in agents if name != REFERENCE},
    }


def _task_count(suite: "Suite", split: str) -> int | None:
    try:
        return suite.task_count(split)
    except UserError:  # a split whose tasks cannot be loaded here: listed without a count
        return None


def _set_digest(suite: "Suite", split: str) -> str | None:
    from discogym.core.running.versions import suite_set_digest

    try:
        return suite_set_digest(suite, split)
    except UserError:  # a split whose tasks cannot be loaded here (crafting's before its data is fetched)
        return None


def splits_cell(doc: dict[str, Any]) -> str:
    """``core-v0 (10, default), l2-v0 (10)``: each split with its task count, the default marked."""
    cells = []
    for split in doc["splits"]:
        notes = [] if doc["task_counts"][split] is None else [f"{doc['task_counts'][split]:,}"]
        notes += ["default"] if split == doc["default_split"] else []
        cells.append(f"{split} ({', '.join(notes)})" if notes else split)
    return ", ".join(cells)


@app.command("list")
def list_command(
    suite: Annotated[str | None, typer.Argument(help="A suite whose tasks to list.")] = None,
    split: Annotated[
        str | None, typer.Option("--split", "--set", help="The task set (default: the suite's first).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the suites, or the tasks of one suite."""
    from discogym.core import get_suite

    with user_errors():
        if suite is None:
            _list_suites(as_json)
        else:
            _list_tasks(get_suite(suite), split, as_json)


@app.command("models")
def models_command(
    url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="List what the OpenAI-compatible server at URL (its .../v1) serves instead, with each model's "
            "context window where the server says it (vLLM, llama.cpp's server).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the models discogym knows: the papers' and every priced one, with context window, output limit,
    prices (dollars per million tokens) and whether the key is set. Any other Inspect model name works too."""
    if url is not None:
        _served_models(url, as_json)
        return
    with user_errors():
        try:
            from discogym.llm.models import PAPER_MODELS, known_models
        except ImportError as err:
            raise UserError(f"discogym models needs the model SDKs: pip install 'discogym[llm]' ({err})") from None
        facts = known_models()
    if as_json:
        print_json({"models": [f.model_dump() for f in facts]})
        return
    headers = ("paper", "context", "max output", "input", "output", "cache write", "cache read", "key")
    table = Table(Column("model", no_wrap=True), *headers)
    for fact in facts:
        price = fact.price
        rates = [price.input, price.output, price.cache_write, price.cache_read] if price else [None] * 4
        key = "not needed" if fact.key_variable is None else ("set" if fact.key_set else f"{fact.key_variable} unset")
        table.add_row(
            fact.model,
            PAPER_MODELS.get(fact.model, ""),
            _tokens(fact.context_window),
            _tokens(fact.output_limit),
            *("" if rate is None else f"{rate:g}" for rate in rates),
            key,
        )
    stdout.print(table)
    stdout.print("Prices: US dollars per million tokens (DISCOGYM_PRICES adds or overrides them; see docs/llm.md).")


def _served_models(url: str, as_json: bool) -> None:
    with user_errors():
        from discogym.llm.servers import served_models

        served = served_models(url)
    if as_json:
        print_json({"url": url, "models": [model.model_dump() for model in served]})
        return
    table = Table(Column("model for --model", no_wrap=True), "context", "context from")
    for model in served:
        table.add_row(f"openai-compatible/{model.name}@{url}", _tokens(model.context_window), model.source or "")
    stdout.print(table)
    if any(model.context_window is None for model in served):
        stdout.print("A model without a context window needs --agent-opt context_window=N (the server's setting).")


@app.command("protocols")
def protocols_command(
    suite: Annotated[str | None, typer.Argument(help="Only this suite's protocols.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List the papers' protocols: each paper's headline experiment as it was published (task sets, conditions,
    repeats, setting, the llm agent's options), the table it follows, where discogym differs, and the figures the
    paper published (with --json). `discogym run --protocol NAME --model M` runs one."""
    from discogym.core import get_suite
    from discogym.core.running.protocols import all_protocols

    with user_errors():
        found = all_protocols([get_suite(suite)] if suite else None)
        if as_json:
            documents = [p.document() | {"episodes_per_agent": _protocol_episodes(s, p)} for s, p in found]
            print_json({"protocols": documents})
            return
    table = Table("protocol", "suite", "follows", "runs", Column("episodes per agent", justify="right"), "figures")
    for owner, protocol in found:
        runs = "; ".join(
            f"{part.name}: set {part.split}, {', '.join(part.conditions)}, x{part.repeats}"
            + (f", {part.setting}" if part.setting != "independent" else "")
            + (f", {' '.join(f'{k}={v}' for k, v in part.llm_options.items())}" if part.llm_options else "")
            for part in protocol.parts
        )
        episodes = _protocol_episodes(owner, protocol)
        table.add_row(
            protocol.name,
            owner.name,
            f"{protocol.section}; {', '.join(protocol.tables)}",
            runs,
            "?" if episodes is None else f"{episodes:,}",
            f"{len(protocol.figures):,}",
        )
    stdout.print(table)
    stdout.print(
        "Run one with `discogym run --protocol NAME --model M` (--estimate first: what it would cost); "
        "`discogym protocols --json` gives each one's differences from its paper and the published figures; "
        "docs/papers.md describes them.",
        highlight=False,
    )


def _protocol_episodes(suite: "Suite", protocol: "Protocol") -> int | None:
    """The episodes one agent plays in ``protocol``; None when a task set cannot be counted offline."""
    total = 0
    for part in protocol.parts:
        try:
            count = suite.task_count(part.split)
        except UserError:  # a set whose data is missing here
            count = None
        if count is None:
            return None
        total += count * len(part.conditions) * part.repeats
    return total


def _tokens(count: int | None) -> str:
    return "?" if count is None else f"{count:,}"


def _list_suites(as_json: bool) -> None:
    import discogym.core.running.generic_agents  # noqa: F401 - registers random, human and replay before they are listed
    from discogym.core import all_suites
    from discogym.core.model.agent import generic_agents

    suites = all_suites()
    agents = [{"name": a.name, "description": a.description, "options": list(a.options)} for a in generic_agents()]
    if as_json:
        from discogym import __version__

        documents = [suite_document(s, digests=True) for s in suites]
        print_json({"discogym_version": __version__, "suites": documents, "generic_agents": agents})
        return
    if not suites:
        stdout.print("No suites are registered.")
    else:
        stdout.print(suites_table([suite_document(s) for s in suites], stdout.width))
    stdout.print("Agents for every suite: " + "; ".join(f"{a['name']} ({a['description']})" for a in agents))


NAME_HEADERS = ("suite", "aliases", "splits", "conditions", "agents")
DESCRIPTION_MIN_WIDTH = 20  # narrower than this, each suite is a block of its own instead of a table row


def suites_table(docs: list[dict[str, Any]], width: int) -> Table:
    """The suites as one table whose columns of names (suites, aliases, splits, conditions, agents: things a
    person types) wrap between names and never cut one, beside a description that wraps in the room left. When
    the names leave the description less than DESCRIPTION_MIN_WIDTH columns, one two-column block per suite."""
    rows = [
        [
            doc["name"],
            ", ".join(doc["aliases"]),
            splits_cell(doc),
            ", ".join(doc["conditions"]),
            ", ".join(doc["agents"]),
        ]
        for doc in docs
    ]
    columns = [[header, *(row[i] for row in rows)] for i, header in enumerate(NAME_HEADERS)]
    descriptions = ["description", *(doc["description"] for doc in docs)]
    least = [longest_word(cells) for cells in columns] + [DESCRIPTION_MIN_WIDTH]
    border = 3 * len(least) + 1  # a rule and a space either side of each cell
    widths = shared_widths([*columns, descriptions], least, width - border)
    if widths is not None:
        headers = [*NAME_HEADERS, "description"]
        table = Table(*(Column(header, width=w, overflow="fold") for header, w in zip(headers, widths, strict=True)))
        for row, doc in zip(rows, docs, strict=True):
            table.add_row(*row, doc["description"])
        return table
    blocks = Table("suite", "about", show_lines=True)
    for row, doc in zip(rows, docs, strict=True):
        facts = Table.grid(padding=(0, 1))
        facts.add_column(no_wrap=True)
        facts.add_column(min_width=longest_word(row[1:]))
        for header, cell in zip(NAME_HEADERS[1:], row[1:], strict=True):
            facts.add_row(header, cell)
        facts.add_row("", doc["description"])
        blocks.add_row(Text(doc["name"], no_wrap=True), facts)
    return blocks


def longest_word(cells: list[str]) -> int:
    """The widest space-separated word of ``cells``: a column of names narrower than this cuts a name."""
    return max((len(word) for cell in cells for word in cell.split()), default=1)


def shared_widths(columns: list[list[str]], least: list[int], room: int) -> list[int] | None:
    """A width for each column within ``room`` characters: each at least its ``least``, the room left shared out
    a character at a time to the columns whose widest cell would still wrap; None if the least do not fit."""
    if sum(least) > room:
        return None
    widths, wanted = list(least), [max(len(cell) for cell in cells) for cells in columns]
    spare = room - sum(widths)
    while spare > 0 and any(w < most for w, most in zip(widths, wanted, strict=True)):
        for i, most in enumerate(wanted):
            if spare > 0 and widths[i] < most:
                widths[i] += 1
                spare -= 1
    return widths


def _list_tasks(suite: "Suite", split: str | None, as_json: bool) -> None:
    chosen = split or suite.splits()[0]
    tasks = suite.tasks(chosen)
    if as_json:
        print_json(
            {
                "suite": suite.name,
                "suite_version": suite.version,
                "split": chosen,
                "set_digest": _set_digest(suite, chosen),
                "tasks": [{"id": t.id, "brief": t.brief, "params": t.params} for t in tasks],
            }
        )
        return
    title = f"{suite.name} / {chosen}: {plural(len(tasks), 'task')}"
    table = Table(Column("task", no_wrap=True), "brief", title=title)  # an id is typed: never cut
    for task in tasks:
        table.add_row(task.id, task.brief.strip().splitlines()[0] if task.brief.strip() else "")
    stdout.print(table)


def out_folder(value: str | Path) -> Path:
    """An ``--out`` value as a path (typer also passes a default through here). An empty one is refused: it would
    quietly mean the current folder."""
    if not str(value).strip():
        raise typer.BadParameter("must name a folder; it is empty")
    return Path(value)


def parse_agent_options(pairs: list[str], suite: str | None = None) -> dict[str, str]:
    """``["k=v", "crafting:k=v", ...]`` to the options of ``suite``'s agents (a pair that names another suite is
    left out; with no ``suite``, such a pair is refused), or a UserError naming the malformed pair."""
    options = {}
    for pair in pairs:
        named, key, value = split_agent_option(pair)
        if named is not None and suite is None:
            raise UserError(f"--agent-opt {pair}: SUITE:KEY=VALUE goes with discogym sweep")
        if named is None or named == suite:
            options[key] = value
    return options


def split_agent_option(pair: str) -> tuple[str | None, str, str]:
    """``[SUITE:]KEY=VALUE`` as (the suite's name or None, key, value); the suite may be named by an alias."""
    key, sep, value = pair.partition("=")
    named, colon, key = key.rpartition(":")
    if not sep or not key or (colon and not named):
        raise UserError(f"--agent-opt takes KEY=VALUE or SUITE:KEY=VALUE, got {pair!r}")
    return (_suite_name(named) if colon else None), key, value


def per_suite(values: list[str], option: str) -> dict[str | None, list[str]]:
    """``--split``/``--condition`` values of a sweep, ``SUITE=VALUE`` or ``VALUE`` (every suite), by suite name
    (None for every suite)."""
    chosen: dict[str | None, list[str]] = {}
    for text in values:
        named, sep, value = text.rpartition("=")
        if sep and not (named and value):
            raise UserError(f"{option} takes VALUE or SUITE=VALUE, got {text!r}")
        chosen.setdefault(_suite_name(named) if sep else None, []).append(value)
    return chosen


def _suite_name(name: str) -> str:
    from discogym.core import get_suite

    return get_suite(name).name


def requested_agents(
    agents: list[str] | None,
    models: list[str] | None,
    options: dict[str, str],
    token_limit: int | None,
    cost_limit: float | None,
) -> list["AgentOptions"]:
    """One agent per (``--agent``, ``--model``) pair; ``--model`` alone means ``--agent llm``. Agents that
    take no model lose it (and the budgets) when the run is configured."""
    from discogym.core import AgentOptions

    names = agents or (["llm"] if models else ["reference"])
    return [
        AgentOptions(name=name, model=model, options=options, token_limit=token_limit, cost_limit=cost_limit)
        for name in names
        for model in (list(models) if models else [None])
    ]


def run_summary_document(summary: "RunSummary") -> dict[str, Any]:
    """What ``run --json`` prints."""
    scores = summary.scores
    return {
        "run_dir": str(summary.run_dir),
        "planned": summary.planned,
        "skipped": summary.skipped,
        "written": summary.written,
        "errors": summary.errors,
        "retried": summary.retried,
        "faults": summary.faults,
        "lost_plays": summary.lost_plays,
        "lost_spent": summary.lost_spent.model_dump(mode="json"),
        "lost_unknown": summary.lost_unknown,
        "complete": summary.complete,
        "mean_score": sum(scores) / len(scores) if scores else None,
    }


def execute_run(
    suite: "Suite",
    config: "RunConfig",
    out: Path,
    workers: int,
    retries: int,
    listener: "RunListener",
    executor: "Executor | None" = None,
    concurrency: int = 1,
    keep_errors: bool = False,
) -> "RunSummary":
    """Run, turning Ctrl-C into a clear message and exit code."""
    from discogym.core.running.runner import Runner

    runner = Runner(
        suite,
        config,
        out,
        workers=workers,
        concurrency=concurrency,
        retries=retries,
        listener=listener,
        executor=executor,
        keep_errors=keep_errors,
    )
    previous_term = signal.signal(signal.SIGTERM, runner.interrupt)  # `kill PID` stops as cleanly as Ctrl-C
    previous_int = signal.signal(signal.SIGINT, runner.interrupt)
    try:
        return runner.run()
    except KeyboardInterrupt:
        written = len(runner.run_dir.episode_paths())
        fail(
            f"interrupted; {plural(written, 'finished episode')} in {out}; rerun the same command to resume",
            EXIT_INTERRUPTED,
        )
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        signal.signal(signal.SIGINT, previous_int)


def report_incomplete(summary: "RunSummary") -> None:
    """Tell the user which episodes were left unfinished and exit non-zero if any were."""
    if summary.complete:
        return
    for stem, message in sorted(summary.faults.items()):
        stderr.print(styled("not finished", "yellow", f"{stem}: {message}"), highlight=False)
    count = len(summary.faults)
    fail(
        f"{plural(count, 'episode')} {'was' if count == 1 else 'were'} not finished because of infrastructure faults; "
        "rerun the same command to retry them",
        EXIT_INCOMPLETE,
    )


# Options that `run` and `sweep` share.
SplitOption = Annotated[str | None, typer.Option("--split", "--set", help="Task set (default: the suite's first).")]
TasksOption = Annotated[list[str] | None, typer.Option("--tasks", "--task", help="Only these task ids (repeatable).")]
ConditionOption = Annotated[list[str] | None, typer.Option(help="Condition(s) (default: the suite's first).")]
ModelOption = Annotated[
    list[str] | None,
    typer.Option(help="Model of a language-model agent, e.g. openai/gpt-5 (repeatable; implies --agent llm)."),
]
AgentOptOption = Annotated[
    list[str] | None, typer.Option(metavar="KEY=VALUE", help="Agent option KEY=VALUE (repeatable).")
]
TokenLimitOption = Annotated[
    int | None, typer.Option(min=1, help="Per-episode budget of input+output tokens for model agents.")
]
CostLimitOption = Annotated[float | None, typer.Option(help="Per-episode budget in US dollars for model agents.")]
RepeatsOption = Annotated[int, typer.Option(min=1, help="Episodes per (task, condition, agent).")]
SeedOption = Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Run seed; every episode's seeds derive from it.")]
WorkersOption = Annotated[int, typer.Option(min=1, help="Episodes played in parallel processes.")]
RetriesOption = Annotated[int, typer.Option(min=0, help="Retries per episode after infrastructure faults.")]
KeepErrorsOption = Annotated[
    bool,
    typer.Option(
        "--keep-errors",
        help="Keep episodes that ended in an error (environment, harness, configuration) as done; by default a "
        "resume plays them again, their files moved to RUN_DIR/retried/.",
    ),
]
ConcurrencyOption = Annotated[
    int,
    typer.Option(
        min=1,
        help="Episodes played at once in each process, in threads: for agents that wait on a model (llm). "
        "Multiplies with --workers.",
    ),
]


class Backend(StrEnum):
    """Where a run's episodes are played (``--backend``)."""

    local = "local"
    ray = "ray"


def executor_of(backend: Backend, address: str | None, workers: int, concurrency: int = 1) -> "Executor | None":
    """The executor ``--backend`` asks for: None (the runner's own, by ``--workers`` and ``--concurrency``) for
    local runs."""
    if backend is Backend.local:
        if address is not None:
            raise UserError("--address names a Ray cluster: use it with --backend ray")
        return None
    if concurrency > 1:
        raise UserError("--concurrency is not supported with --backend ray: Ray plays one episode per task")
    from discogym.core.running.ray_executor import RayExecutor

    return RayExecutor(address, workers if workers > 1 else None)


@app.command("estimate")
def estimate_command(
    suite_names: Annotated[
        list[str] | None,
        typer.Argument(metavar="[SUITE...]", help="Suite names or aliases, or `all` for every suite."),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option(help="The model to estimate, e.g. openai/gpt-5 (repeatable; required).")
    ] = None,
    split: SplitOption = None,
    task: TasksOption = None,
    condition: ConditionOption = None,
    agent_opt: AgentOptOption = None,
    token_limit: TokenLimitOption = None,
    cost_limit: CostLimitOption = None,
    repeats: RepeatsOption = 1,
    explore: Annotated[
        int | None, typer.Option(min=0, help="autumn: this many exploration acts before the reference's calls.")
    ] = None,
    from_run: Annotated[
        Path | None,
        typer.Option("--from", metavar="RUN_DIR", help="Replay the calls of an earlier run's episodes instead."),
    ] = None,
    summary_tokens: Annotated[
        int, typer.Option(min=1, help="Length of each stand-in summary (context=compact), in tokens.")
    ] = 400,
    protocol: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="A paper's protocol instead of suites (repeatable; `papers`: every one's)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Estimate what an llm run would cost, without calling a model: low, expected and high. Each case's calls (the
    reference agent's; what the suite expects of a model, e.g. autumn's exploration to its step cap; more steps and
    longer replies) are replayed through the llm agent and its context policy, and counted with the model's own
    tokenizer where one works offline, else as a quarter of the characters. Several suites get one total."""
    if not model:
        with user_errors():
            raise UserError("an estimate is of a language model: give --model, e.g. --model openai/gpt-5")
    if protocol:
        from discogym.core.running.protocols import protocol_names, refuse_overrides

        with user_errors():
            given = {"SUITE": suite_names, "--split": split, "--task": task, "--condition": condition}
            refuse_overrides(given | {"--repeats": repeats != 1, "--explore": explore, "--from": from_run})
            names = protocol_names(protocol)

        def agents_of(suite: "Suite", _protocol: "Protocol") -> list["AgentOptions"]:
            options = parse_agent_options(agent_opt or [], suite.name)
            return requested_agents(["llm"], model, options, token_limit, cost_limit)

        _estimate_protocols(names, agents_of, as_json)
        return
    with user_errors():
        from discogym.core import all_suites, get_suite

        if not suite_names:
            raise UserError("name the suites to estimate (or `all`), or a paper's protocol with --protocol NAME")
        suites = all_suites() if suite_names == ["all"] else [get_suite(name) for name in suite_names]
        requested = requested_agents(["llm"], model, parse_agent_options(agent_opt or []), token_limit, cost_limit)
        if len(suites) > 1 and (explore is not None or from_run is not None):
            raise UserError("--explore and --from are for one suite")
        estimates = estimate_agents(
            suites, requested, split, task, condition, explore, from_run, summary_tokens, repeats
        )
    show_estimates(estimates, as_json)


def estimate_agents(
    suites: "Suite | list[Suite]",
    agents: list["AgentOptions"],
    split: str | None,
    tasks: list[str] | None,
    conditions: list[str] | None,
    explore: int | None = None,
    from_run: Path | None = None,
    summary_tokens: int = 400,
    repeats: int = 1,
) -> list[Any]:
    """The estimates of the ``llm`` agents among ``agents`` on ``suites`` (a UserError if there is none); a suite
    without a reference agent is skipped, said on stderr, when there are several."""
    try:
        from discogym.llm.estimate import estimate_run, estimate_suites
    except ImportError as err:
        raise UserError(f"an estimate needs the model SDKs: pip install 'discogym[llm]' ({err})") from None
    chosen = suites if isinstance(suites, list) else [suites]
    if len(chosen) > 1 or (explore is None and from_run is None):
        skipped: list[str] = []
        estimates = estimate_suites(
            chosen,
            agents,
            repeats=repeats,
            split=split,
            tasks=tasks,
            conditions=conditions,
            summary_tokens=summary_tokens,
            skipped=skipped if len(chosen) > 1 else None,
        )
        for message in skipped:
            stderr.print(styled("skipped:", "yellow", message), highlight=False)
        return estimates
    models = [agent for agent in agents if agent.name == "llm"]
    if not models:
        raise UserError("an estimate is of language-model agents: give --model (and --agent llm, if --agent is given)")
    return [
        estimate_run(
            chosen[0],
            agent,
            split=split,
            tasks=tasks,
            conditions=conditions,
            explore=explore,
            from_run=from_run,
            summary_tokens=summary_tokens,
            repeats=repeats,
        )
        for agent in models
    ]


def _dollars(value: float | None) -> str:
    if value is None:
        return "no price"
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"


def show_estimates(estimates: list[Any], as_json: bool) -> None:
    """Print estimates (:class:`discogym.llm.estimate.Estimate`): per suite and model, the expected case task by task
    and each case's total with what it assumes; with several, one total of them all. Or JSON."""
    from discogym.llm.estimate import CASES, CAVEAT, grand_total

    total = grand_total(estimates)
    if as_json:
        print_json({"estimates": [estimate.document() for estimate in estimates], "total": total})
        return
    for estimate in estimates:
        doc = estimate.document()
        options = " ".join(f"{k}={v}" for k, v in doc["agent_options"].items())
        repeated = f", {estimate.repeats} repeats" if estimate.repeats > 1 else ""
        budgets = doc["budgets"]
        limits = [f"token limit {budgets['token_limit']:,}"] if "token_limit" in budgets else []
        limits += [f"cost limit ${budgets['cost_limit']:g}"] if "cost_limit" in budgets else []
        what = " ".join([doc["model"], *filter(None, [options]), *limits])
        title = f"{doc['suite']}: {what} (estimate, expected case{repeated})"
        table = Table(title=title)
        for column in (*ESTIMATE_COLUMNS, "ending"):
            table.add_column(column, justify="left" if column in ("task", "ending") else "right")
        for row in doc["tasks"]:
            name = (
                row["task"] if len({r["condition"] for r in doc["tasks"]}) == 1 else f"{row['task']} {row['condition']}"
            )
            table.add_row(*_estimate_cells(name, row), row["ending"])
        table.add_section()
        for case in CASES:
            table.add_row(*_estimate_cells(f"total, {case.name}", doc["cases"][case.name]), "")
        stdout.print(table)
        for case in CASES:
            stdout.print(f"{case.name}: {doc['cases'][case.name]['assumes']}.", highlight=False)
        stdout.print(f"Tokens: {doc['tokenizer']} ({doc['tokenizer_reason']}).", highlight=False)
        if estimate.repeats > 1:
            stdout.print(
                f"Repeats: each task {estimate.repeats} times; a repeat replays the same calls, so the totals are "
                f"{estimate.repeats} times one play (the rows above are one play).",
                highlight=False,
            )
        if estimate.price is None:
            stdout.print(
                f"No price for {doc['model']}: dollars are not shown (add one with a DISCOGYM_PRICES file; "
                "see docs/llm.md).",
                highlight=False,
            )
    if len(estimates) > 1:
        table = Table(title="all suites and models (estimate)")
        for column in ("case", "requests", "compactions", "peak prompt", "input", "cached", "output", "dollars"):
            table.add_column(column, justify="left" if column == "case" else "right")
        for case in CASES:
            table.add_row(*_estimate_cells(case.name, total[case.name]))
        stdout.print(table)
    stdout.print(CAVEAT, highlight=False)


ESTIMATE_COLUMNS = ("task", "requests", "compactions", "peak prompt", "input", "cached", "output", "dollars")


def _estimate_cells(name: str, row: dict[str, Any]) -> list[str]:
    return [
        name,
        f"{row['requests']:,}",
        f"{row['compactions']:,}",
        f"{row['peak_prompt']:,}",
        f"{row['input_tokens']:,}",
        f"{row['cached_tokens']:,}",
        f"{row['output_tokens']:,}",
        _dollars(row["dollars"]),
    ]


BackendOption = Annotated[
    Backend,
    typer.Option(
        help="local: this machine (--workers processes); ray: Ray tasks on RAY_ADDRESS, --address, or a Ray "
        "instance started here (--workers CPUs, default all). Needs pip install 'discogym[ray]'."
    ),
]
AddressOption = Annotated[str | None, typer.Option(help="The Ray cluster's address (with --backend ray).")]
EstimateOption = Annotated[
    bool,
    typer.Option(
        "--estimate", help="Run nothing: print what the run's llm agents would cost (see `discogym estimate`)."
    ),
]


class SettingChoice(StrEnum):
    """How a run plays its tasks (``--setting``)."""

    independent = "independent"
    curriculum = "curriculum"


QuietOption = Annotated[bool, typer.Option(help="No progress bar.")]


ProtocolOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="Run a paper's protocol as published (`discogym protocols` lists them): it sets the task set, "
        "conditions, repeats, setting and the llm agent's options; the report shows the paper's figures beside.",
    ),
]


@app.command()
def run(
    suite_name: Annotated[
        str | None, typer.Argument(metavar="[SUITE]", help="Suite name or alias (implied by --protocol).")
    ] = None,
    agent: Annotated[list[str] | None, typer.Option(help="Agent(s) to run; default: reference.")] = None,
    split: SplitOption = None,
    task: TasksOption = None,
    condition: ConditionOption = None,
    model: ModelOption = None,
    agent_opt: AgentOptOption = None,
    token_limit: TokenLimitOption = None,
    cost_limit: CostLimitOption = None,
    repeats: RepeatsOption = 1,
    seed: SeedOption = 0,
    setting: Annotated[
        SettingChoice,
        typer.Option(
            help="independent: each task on its own; curriculum: the suite's chains in order (redstone: L1 to L5 "
            "per family), each episode starting from what the one before left."
        ),
    ] = SettingChoice.independent,
    out: Annotated[Path | None, typer.Option(parser=out_folder, help="Run directory (default: runs/SUITE).")] = None,
    workers: WorkersOption = 1,
    concurrency: ConcurrencyOption = 1,
    retries: RetriesOption = 0,
    keep_errors: KeepErrorsOption = False,
    backend: BackendOption = Backend.local,
    address: AddressOption = None,
    quiet: QuietOption = False,
    estimate: EstimateOption = False,
    protocol: ProtocolOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run agents on a suite's tasks, or a paper's protocol (--protocol). Rerunning the same command on the same
    --out resumes."""
    from discogym.core import get_suite
    from discogym.core.running.executors import RunListener
    from discogym.core.running.runner import RunConfig
    from discogym.interfaces.progress import ProgressBar

    if protocol is not None:
        given: dict[str, object] = {"--split": split, "--task": task, "--condition": condition}
        given |= {"--repeats": repeats != 1, "--setting": setting is not SettingChoice.independent}
        with user_errors():
            requested = _protocol_agents(suite_name, protocol, agent, model, agent_opt, token_limit, cost_limit, given)
            executor = None if estimate else executor_of(backend, address, workers, concurrency)
        if estimate:
            _estimate_protocols([protocol], lambda _suite, _protocol: requested, as_json)
        else:
            run_options = (workers, concurrency, retries, keep_errors, executor, quiet, seed)
            folder = out or Path("runs") / protocol
            _run_protocols([protocol], lambda _suite, _protocol: requested, folder, run_options, as_json)
        return
    with user_errors():
        if suite_name is None:
            raise UserError("name a SUITE, or a paper's protocol with --protocol NAME (`discogym protocols`)")
        suite = get_suite(suite_name)
        options = parse_agent_options(agent_opt or [], suite.name)
        requested = requested_agents(agent, model, options, token_limit, cost_limit)
        if estimate:
            if setting is not SettingChoice.independent:
                raise UserError("--estimate plays each task on its own: leave out --setting curriculum")
            estimates = estimate_agents(suite, requested, split, task, condition, repeats=repeats)
    if estimate:
        show_estimates(estimates, as_json)
        return
    with user_errors():
        config = RunConfig.for_suite(
            suite,
            requested,
            split=split,
            tasks=task,
            conditions=condition,
            repeats=repeats,
            seed=seed,
            setting=setting.value,
        )
        out = out or Path("runs") / suite.name
        listener = RunListener() if quiet else ProgressBar(f"{suite.name}", stderr)
        executor = executor_of(backend, address, workers, concurrency)
        summary = execute_run(suite, config, out, workers, retries, listener, executor, concurrency, keep_errors)
    if as_json:
        print_json(run_summary_document(summary))
    else:
        say_run_summary(summary, out)
    report_incomplete(summary)


def _protocol_agents(
    suite_name: str | None,
    name: str,
    agent: list[str] | None,
    model: list[str] | None,
    agent_opt: list[str] | None,
    token_limit: int | None,
    cost_limit: float | None,
    given: dict[str, object],
) -> list["AgentOptions"]:
    """The agents asked for on a protocol's suite; a UserError for options the protocol sets or another suite."""
    from discogym.core import get_suite
    from discogym.core.running.protocols import find_protocol, refuse_overrides

    refuse_overrides(given)
    suite, protocol = find_protocol(name)
    if suite_name is not None and get_suite(suite_name).name != suite.name:
        raise UserError(f"protocol {protocol.name} is of suite {suite.name}, not {suite_name}")
    agents = agent or (None if model else protocol.default_agents())
    return requested_agents(agents, model, parse_agent_options(agent_opt or [], suite.name), token_limit, cost_limit)


RunOptions = tuple[int, int, int, bool, "Executor | None", bool, int]


def _run_protocols(
    names: list[str],
    agents_of: "Callable[[Suite, Protocol], list[AgentOptions]]",
    out: Path,
    options: RunOptions,
    as_json: bool,
    nested: bool = False,
) -> None:
    """Play every part of the protocols ``names`` (all checked before the first episode), each into its folder
    (``out``, or with ``nested`` ``out/PROTOCOL``; then ``/PART`` for a protocol of several parts); then say where
    the report is."""
    from discogym.core.running.executors import RunListener
    from discogym.core.running.protocols import find_protocol, part_config, part_folder
    from discogym.interfaces.progress import ProgressBar

    workers, concurrency, retries, keep_errors, executor, quiet, seed = options
    with user_errors():
        plans = []
        for name in names:
            suite, protocol = find_protocol(name)
            root = out / protocol.name if nested else out
            for part in protocol.parts:
                config = part_config(suite, protocol, part, agents_of(suite, protocol), seed)
                plans.append((suite, protocol, part, config, part_folder(root, protocol, part)))
        _check_sweep([(suite, config) for suite, _, _, config, _ in plans])
    summaries = []
    for suite, protocol, part, config, folder in plans:
        with user_errors():
            listener = RunListener() if quiet else ProgressBar(f"{protocol.name} {part.name}", stderr)
            summary = execute_run(suite, config, folder, workers, retries, listener, executor, concurrency, keep_errors)
        summaries.append(summary)
        if not as_json:
            say_run_summary(summary, folder)
    if as_json:
        print_json({"protocols": names, "out": str(out), "runs": [run_summary_document(s) for s in summaries]})
    else:
        stderr.print(f"`discogym report {out}` sets the papers' figures beside these.", highlight=False)
    for summary in summaries:
        report_incomplete(summary)


def _estimate_protocols(
    names: list[str], agents_of: "Callable[[Suite, Protocol], list[AgentOptions]]", as_json: bool
) -> None:
    """What the ``llm`` agents among ``agents_of(suite, protocol)`` would cost on every part of the protocols
    ``names``."""
    from discogym.core.running.protocols import find_protocol, part_options

    with user_errors():
        estimates = []
        for name in names:
            suite, protocol = find_protocol(name)
            for part in protocol.parts:
                chosen = [part_options(part, agent) for agent in agents_of(suite, protocol)]
                estimates += estimate_agents(
                    suite, chosen, part.split, None, list(part.conditions), repeats=part.repeats
                )
                if part.setting != "independent":
                    stderr.print(
                        f"{protocol.name} {part.name}: estimated as if each task were played on its own "
                        f"(the {part.setting} setting carries what one episode leaves to the next)",
                        highlight=False,
                    )
    show_estimates(estimates, as_json)


def say_run_summary(summary: "RunSummary", out: Path) -> None:
    """One line on stderr: what a pass over a run did."""
    doc = run_summary_document(summary)
    mean = "-" if doc["mean_score"] is None else f"{doc['mean_score']:.3f}"
    again = (
        f" ({summary.retried:,} of them played again after an error; the earlier files are in {out / 'retried'})"
        if summary.retried
        else ""
    )
    stderr.print(
        f"{plural(summary.written, 'episode')} written{again}, {summary.skipped:,} already done, "
        f"{summary.errors:,} ended in an error; mean score {mean}; run directory {out}",
        highlight=False,
    )
    if summary.lost_plays:
        from discogym.core.running.storage import FAULTS_FILE

        counted = f"the run's report counts it from {out / FAULTS_FILE}"
        stderr.print(f"{lost_spent_text(summary)}; {counted}", highlight=False)


def lost_spent_text(summary: "RunSummary") -> str:
    """What the plays abandoned by infrastructure faults had cost, in words."""
    spent = summary.lost_spent
    text = (
        f"{plural(summary.lost_plays, 'play')} abandoned by infrastructure faults had cost "
        f"{spent.input_tokens:,} tokens in, {spent.output_tokens:,} out, ${spent.cost_usd:.4f}"
    )
    if spent.failed_attempts:
        text += f", and {spent.failures_said()}"
    if summary.lost_unknown:
        text += f" ({summary.lost_unknown:,} of them not known: a worker died with them)"
    return text


@app.command()
def report(
    run_dir: Annotated[
        Path,
        typer.Argument(
            metavar="RUN_DIR", help="A directory written by `discogym run`, or a folder of them (`discogym sweep`)."
        ),
    ],
    html: Annotated[Path | None, typer.Option(help="Also write the report as an HTML page here.")] = None,
    rescore: Annotated[bool, typer.Option(help="Recompute scores and audits from the episode logs.")] = False,
    plots: Annotated[
        Path | None, typer.Option(help="Folder for PNG plots (default: each run's RUN_DIR/plots).")
    ] = None,
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Write no plots.")] = False,
    min_people: Annotated[
        int, typer.Option(min=1, max=1_000_000, help="People a problem needs for its human baseline.")
    ] = 5,
    as_json: JsonOption = False,
) -> None:
    """Aggregate a run's episodes, or every run's in a folder, into tables (markdown on stdout) and plots (PNG)."""
    from discogym.core.running.process import collector_paused

    with user_errors(), tempfile.TemporaryDirectory() as scratch:
        log = run_dir if run_dir.suffix == ".eval" and run_dir.is_file() else None
        if log is not None:  # an Inspect log: its episodes replayed into a run
            run_dir = inspect_log_as_run(log, Path(scratch) / log.stem)
            no_plots = no_plots or plots is None  # no plots beside the log unless --plots says where
        with collector_paused():  # the report's episodes are freed before the collector would traverse them
            _build_and_show(run_dir, log, html, rescore, plots, no_plots, min_people, as_json)


@app.command()
def cite(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A directory written by `discogym run`, or a folder of them.")
    ],
    as_json: JsonOption = False,
) -> None:
    """Print what was run as a citable paragraph and BibTeX-like records: suites and their versions, task sets
    and their digests, agents and models (scaffold, context policy, model facts), repeats, dates, tokens and
    cost, and the papers the suites implement."""
    from discogym.core.reporting.run_report import build_report
    from discogym.core.running.process import collector_paused

    with user_errors(), collector_paused():
        cited = build_report(run_dir).citation()
    if as_json:
        print_json(cited.model_dump(mode="json") | {"bibtex": cited.bibtex})
    else:
        sys.stdout.write(cited.text())


def _build_and_show(
    run_dir: Path,
    log: Path | None,
    html: Path | None,
    rescore: bool,
    plots: Path | None,
    no_plots: bool,
    min_people: int,
    as_json: bool,
) -> None:
    from discogym.core.reporting.plots import plots_available
    from discogym.core.reporting.run_report import build_report

    in_runs = not no_plots and plots is None and plots_available()
    built = build_report(
        run_dir, rescore=rescore, plots_dir=None if no_plots else plots, plots_in_runs=in_runs, min_people=min_people
    )
    if log is not None:  # titled after the log, not the scratch folder it was replayed into
        built = built.model_copy(update={"run_dir": str(log)})
    if html is not None:
        html.write_text(built.html(), encoding="utf-8")
    for line in built.warnings:  # mixed versions; copied, unplanned or re-scored episodes; cached outcomes at odds
        stderr.print(styled("warning:", "yellow", line), highlight=False)
    if as_json:
        print_json(built.model_dump(mode="json"))
    else:
        sys.stdout.write(built.markdown())


def inspect_log_as_run(log: Path, folder: Path) -> Path:
    """Write the discogym episodes of an Inspect log (replayed from its tool calls) as a run in ``folder``."""
    try:
        from discogym.interfaces.inspect.logs import episodes_of_log
    except ImportError:
        raise UserError("reading Inspect logs needs inspect-ai: pip install 'discogym[inspect]'") from None
    from discogym.core.model.episode import EpisodeRuntime
    from discogym.core.running.storage import RunDir

    run = RunDir(folder)
    for episode in episodes_of_log(log):
        run.write_episode(episode, EpisodeRuntime(key=episode.key, started_at="", total_s=0.0, steps=[]))
    return folder


@app.command("training")
def training_command(
    suite: Annotated[str, typer.Argument(help="The suite.")],
    seed: Annotated[int, typer.Option(min=0, help="The training source's seed: the same seed, the same tasks.")] = 0,
    count: Annotated[int, typer.Option(min=1, max=1_000_000, help="How many training tasks.")] = 100,
    check: Annotated[
        str | None, typer.Option(metavar="SPLIT", help="Compare this split's tasks with the evaluation sets instead.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Make training tasks from the suite's own generator (the split training:SEED:COUNT, which `discogym run`,
    `gymnasium.make` and `discogym export-sft` take) and show that none is an evaluation task: each is compared, by
    the digest of its problem, with every task of the suite's evaluation sets, and any equal one is left out.
    docs/training.md."""
    from discogym.core import get_suite
    from discogym.core.running.training import EvaluationDigests, guarded_training_tasks, training_split
    from discogym.core.running.versions import listed, set_digest

    with user_errors():
        chosen = get_suite(suite)
        if check is None:
            split = training_split(seed, count)
            made = guarded_training_tasks(chosen, seed, count)
            tasks, compared, left_out = made.tasks, made.compared, made.left_out
            equal: list[str] = []
        else:
            split, tasks = check, chosen.tasks(check)
            evaluation = EvaluationDigests(chosen)
            compared, left_out = evaluation.compared, []
            equal = [f"{task.id} = {owner}" for task in tasks if (owner := evaluation.match(task)) is not None]
    document = {
        "suite": chosen.name,
        "split": split,
        "tasks": len(tasks),
        "digest": set_digest(tasks),
        "compared": [entry.model_dump() for entry in compared],
        "left_out": left_out,
        "equal": equal,
    }
    if as_json:
        print_json(document)
    else:
        sets = ", ".join(f"{entry.split} ({entry.tasks:,})" for entry in compared if entry.unavailable is None)
        verdict = f"{len(equal):,} are evaluation tasks" if equal else "none is an evaluation task"
        stdout.print(f"{chosen.name} {split}: {len(tasks):,} tasks; {verdict} of {sets}", highlight=False)
        stdout.print(f"task set sha256 {document['digest']}", highlight=False)
        for entry in compared:
            if entry.unavailable is not None:
                stdout.print(f"not compared with {entry.split}: {entry.unavailable}", highlight=False)
        if left_out:
            stdout.print(f"left out as evaluation tasks: {len(left_out):,} ({listed(left_out)})", highlight=False)
    if equal:
        fail(f"{len(equal):,} tasks of {split} are evaluation tasks: {listed(equal)}")


@app.command("export-sft")
def export_sft_command(
    suite: Annotated[str, typer.Argument(help="The suite.")],
    out: Annotated[Path, typer.Option(help="JSON-lines file to write: one chat conversation per episode.")],
    split: Annotated[
        str, typer.Option("--split", help="Task set; by default training tasks (discogym training).")
    ] = "training:0:100",
    condition: Annotated[str | None, typer.Option(help="Condition (default: the suite's first).")] = None,
    agent: Annotated[str, typer.Option(help="The solver whose episodes are written.")] = "reference",
    runs: Annotated[
        Path | None,
        typer.Option(parser=out_folder, help="Run folder the episodes are played into (default: runs/sft/SUITE)."),
    ] = None,
    workers: WorkersOption = 1,
    as_json: JsonOption = False,
) -> None:
    """A reference solver's successful episodes as chat conversations for fine-tuning: the instructions, the brief,
    each action as the text that makes it and each observation, as `discogym.gym` shows them (docs/training.md).
    The episodes are played as a run into --runs first (an export again resumes it)."""
    from discogym.core import get_suite
    from discogym.core.running.executors import RunListener
    from discogym.core.running.planning import plan_episodes
    from discogym.core.running.runner import RunConfig
    from discogym.core.running.versions import listed
    from discogym.interfaces.sft import check_writable, conversations_of, write_conversations

    with user_errors():
        check_writable(out)
        chosen = get_suite(suite)
        config = RunConfig.for_suite(chosen, [agent], split=split, conditions=[condition] if condition else None)
        folder = runs or Path("runs") / "sft" / chosen.name
        summary = execute_run(chosen, config, folder, workers, retries=0, listener=RunListener())
        planned = [item.key for item in plan_episodes(chosen, config)]
        conversations, left_out = conversations_of(chosen, folder, planned)
        write_conversations(conversations, out)
    if as_json:
        print_json({"out": str(out), "runs": str(folder), "conversations": len(conversations), "left_out": left_out})
    else:
        stdout.print(f"{len(conversations):,} conversations written to {out} (episodes in {folder})", highlight=False)
        if left_out:
            stdout.print(f"left out: {len(left_out):,} ({listed(left_out)})", highlight=False)
    report_incomplete(summary)


@app.command("export-inspect")
def export_inspect(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN_DIR", help="A directory written by `discogym run`.")],
    out: Annotated[Path, typer.Argument(metavar="OUT_DIR", help="Folder for the Inspect logs (.eval).")],
) -> None:
    """Write a run's episodes as Inspect logs, one per agent, for `inspect view --log-dir OUT_DIR`."""
    with user_errors():
        try:
            from discogym.interfaces.inspect.logs import export_run
        except ImportError:
            raise UserError("exporting to Inspect needs inspect-ai: pip install 'discogym[inspect]'") from None
        written = export_run(run_dir, out)
    for path in written:
        stderr.print(f"wrote {path}", highlight=False)


@app.command()
def sweep(
    suites: Annotated[list[str] | None, typer.Argument(help="Suites to run (default: all registered).")] = None,
    agent: Annotated[
        list[str] | None, typer.Option(help="Agent(s) to run on every suite that has them; default: reference.")
    ] = None,
    model: ModelOption = None,
    split: Annotated[
        list[str] | None,
        typer.Option(
            "--split", "--set", metavar="[SUITE=]SPLIT", help="A suite's task set (repeatable; default: its first)."
        ),
    ] = None,
    condition: Annotated[
        list[str] | None,
        typer.Option(metavar="[SUITE=]CONDITION", help="Condition(s) of a suite (repeatable; default: its first)."),
    ] = None,
    agent_opt: Annotated[
        list[str] | None,
        typer.Option(
            metavar="[SUITE:]KEY=VALUE",
            help="Agent option for every suite, or for one (crafting:scaffold=plancraft) (repeatable).",
        ),
    ] = None,
    token_limit: TokenLimitOption = None,
    cost_limit: CostLimitOption = None,
    repeats: RepeatsOption = 1,
    seed: SeedOption = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            parser=out_folder,
            help="Parent directory; each suite's run goes in OUT/SUITE (default: runs/reference, or runs/sweep "
            "with --agent or --model).",
        ),
    ] = None,
    workers: WorkersOption = 1,
    concurrency: ConcurrencyOption = 1,
    retries: RetriesOption = 0,
    keep_errors: KeepErrorsOption = False,
    backend: BackendOption = Backend.local,
    address: AddressOption = None,
    quiet: QuietOption = False,
    estimate: EstimateOption = False,
    protocol: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="Papers' protocols to run instead of the suites' default sets (repeatable; `papers`: each suite's "
            "headline protocol), each into OUT/NAME (default OUT: runs/papers).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """The main job: every suite's default task set with its reference agent, offline, then the reports. With
    --agent or --model, those agents instead (a suite without them is skipped), into runs/sweep. Every suite's
    configuration is checked before the first episode; ends with one summary table across the suites."""
    from discogym.core import all_suites, get_suite
    from discogym.core.reporting.report_tables import table_markdown
    from discogym.core.reporting.run_report import summary_table

    if protocol:
        from discogym.core.running.protocols import protocol_names, refuse_overrides

        def agents_of(suite: "Suite", protocol: "Protocol") -> list["AgentOptions"]:
            options = parse_agent_options(agent_opt or [], suite.name)
            agents = agent or (None if model else protocol.default_agents())
            return requested_agents(agents, model, options, token_limit, cost_limit)

        with user_errors():
            refuse_overrides({"SUITE": suites, "--split": split, "--condition": condition, "--repeats": repeats != 1})
            names = protocol_names(protocol)
            if estimate and not model:
                raise UserError("an estimate is of language-model agents: give --model")
            executor = None if estimate else executor_of(backend, address, workers, concurrency)
        if estimate:
            _estimate_protocols(names, agents_of, as_json)
        else:
            run_options = (workers, concurrency, retries, keep_errors, executor, quiet, seed)
            _run_protocols(names, agents_of, out or Path("runs") / "papers", run_options, as_json, nested=True)
        return
    reference = not agent and not model
    out = out or Path("runs") / ("reference" if reference else "sweep")
    with user_errors():
        chosen = [get_suite(name) for name in suites] if suites else all_suites()
        if not chosen:
            stderr.print("No suites are registered yet; nothing to run.")
        if reference and (agent_opt or token_limit or cost_limit):
            raise UserError("--agent-opt, --token-limit and --cost-limit go with --agent or --model")
        if estimate and not model:
            raise UserError("an estimate is of language-model agents: give --model")
        splits, conditions = per_suite(split or [], "--split"), per_suite(condition or [], "--condition")
        named = {name for name in (*splits, *conditions) if name is not None}
        unknown = sorted(named - {suite.name for suite in chosen})
        if unknown:
            raise UserError(f"--split or --condition names suite {unknown[0]!r}, which this sweep does not run")
        plans = []
        for suite in chosen:
            requested = (
                None
                if reference
                else requested_agents(
                    agent, model, parse_agent_options(agent_opt or [], suite.name), token_limit, cost_limit
                )
            )
            split_named = _one(splits, suite.name, "--split")
            config = _sweep_config(suite, requested, split_named, conditions, repeats, seed, checked=not estimate)
            if config is not None:
                plans.append((suite, config))
        if chosen and not plans:
            raise UserError("no suite has the agents asked for; nothing was run")
        if estimate:
            estimates = [
                estimate
                for suite, config in plans
                for estimate in estimate_agents(
                    suite, config.agents, config.split, config.tasks, config.conditions, repeats=repeats
                )
            ]
        else:
            _check_sweep(plans)
            executor = executor_of(backend, address, workers, concurrency)
    if estimate:
        show_estimates(estimates, as_json)
        return
    with user_errors():
        results: dict[str, Any] = {}
        summaries, reports = [], []
        for suite, config in plans:
            summary, built = _sweep_suite(
                suite, config, out / suite.name, workers, concurrency, retries, keep_errors, executor, quiet
            )
            summaries.append(summary)
            reports.append(built)
            results[suite.name] = {"run": run_summary_document(summary), "report": built.model_dump(mode="json")}
            if not as_json:
                sys.stdout.write(built.markdown() + "\n")
        summary_doc = summary_table(out, reports) if reports else None
    if as_json:
        document = {"out": str(out), "suites": results}
        print_json(document | ({"summary": summary_doc.model_dump(mode="json")} if summary_doc else {}))
    elif summary_doc is not None:
        sys.stdout.write(table_markdown(summary_doc))
        _sweep_end(out, reports)
    for summary in summaries:
        report_incomplete(summary)


def _one(chosen: dict[str | None, list[str]], suite: str, option: str) -> str | None:
    """The one value of ``option`` for ``suite`` (its own, else the one for every suite), or None."""
    values = chosen.get(suite) or chosen.get(None) or []
    if len(values) > 1:
        raise UserError(f"{option} names {len(values)} values for suite {suite}; give one")
    return values[0] if values else None


def _sweep_end(out: Path, reports: list["RunReport"]) -> None:
    """After the summary: the combined score plot of every suite's episodes (``OUT/plots/scores.png``, one
    panel per suite), then a last line saying where the results are and how to open them."""
    from discogym.core.reporting.plots import plots_available
    from discogym.core.reporting.run_report import combined_score_plot

    plot = combined_score_plot(reports, out / "plots" / "scores.png") if plots_available() else None
    if plot is not None:
        sys.stdout.write(f"\n- plot: {plot}\n")
    sys.stdout.write(
        f"\nResults are in {out}: `discogym report {out} --html {out / 'report.html'}` writes them as one page, "
        f"`discogym serve --runs {out}` browses them, `discogym cite {out}` says how to cite them.\n"
    )


def _sweep_config(
    suite: "Suite",
    requested: list["AgentOptions"] | None,
    split: str | None,
    conditions: dict[str | None, list[str]],
    repeats: int,
    seed: int,
    checked: bool = True,
) -> "RunConfig | None":
    """The run configuration of one suite in a sweep: its reference agent, or those of the ``requested`` agents
    it has; None (said in one line) when it has none of them. Any other mistake (a missing API key, an option no
    agent takes, an unknown split or condition) is a UserError, which stops the sweep before it starts. Unless
    ``checked``, the agents are taken as asked, not built (an estimate needs no API key)."""
    from discogym.core.running.agent_lookup import agent_names
    from discogym.core.running.runner import RunConfig

    if requested is None and not suite.reference_agents():
        stderr.print(f"{suite.name}: no reference agent, skipped", highlight=False)
        return None
    agents = [a for a in requested if a.name in agent_names(suite)] if requested is not None else ["reference"]
    if not agents:
        stderr.print(f"{suite.name}: none of the agents asked for, skipped", highlight=False)
        return None
    named_conditions = conditions.get(suite.name) or conditions.get(None)
    try:
        if not checked:  # planned with a stand-in agent that needs nothing, then given the agents asked for
            config = RunConfig.for_suite(
                suite, ["random"], split=split, conditions=named_conditions, repeats=repeats, seed=seed
            )
            return config.model_copy(update={"agents": agents})
        return RunConfig.for_suite(suite, agents, split=split, conditions=named_conditions, repeats=repeats, seed=seed)
    except UserError as err:
        raise in_suite(suite, err) from None


def _check_sweep(plans: list[tuple["Suite", "RunConfig"]]) -> None:
    """Refuse the sweep, before any episode, when a suite's tasks or conditions are unknown or its first
    episodes would refuse a setting as they start (a preset on the wrong suite)."""
    from discogym.core.running.episode_loop import preflight
    from discogym.core.running.runner import plan_episodes

    for suite, config in plans:
        try:
            preflight(suite, plan_episodes(suite, config))
        except UserError as err:
            raise in_suite(suite, err) from None


def in_suite(suite: "Suite", err: UserError) -> UserError:
    """``err`` said of one suite of a sweep: its message begins with the suite's name."""
    message = str(err)
    return UserError(message if message.startswith(suite.name) else f"{suite.name}: {message}")


def _sweep_suite(
    suite: "Suite",
    config: "RunConfig",
    out: Path,
    workers: int,
    concurrency: int,
    retries: int,
    keep_errors: bool,
    executor: "Executor | None",
    quiet: bool,
) -> tuple["RunSummary", "RunReport"]:
    from discogym.core.reporting.plots import plots_available
    from discogym.core.reporting.run_report import build_report
    from discogym.core.running.executors import RunListener
    from discogym.interfaces.progress import ProgressBar

    listener = RunListener() if quiet else ProgressBar(suite.name, stderr)
    summary = execute_run(suite, config, out, workers, retries, listener, executor, concurrency, keep_errors)
    return summary, build_report(out, plots_dir=out / "plots" if plots_available() else None)


@app.command("check-suite")
def check_suite_command(
    suite_name: Annotated[str, typer.Argument(metavar="SUITE", help="Suite name or alias.")],
    episodes: Annotated[
        int, typer.Option(min=1, help="Tasks of the default split to open and to play twice with the random agent.")
    ] = 3,
    max_steps: Annotated[int, typer.Option(min=1, help="Calls after which a random episode is cut.")] = 40,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Seed of the environments and episodes.")] = 0,
    as_json: JsonOption = False,
) -> None:
    """Check that a suite keeps the harness's rules: stable tasks, deterministic environments and episodes,
    scores that recompute, no ground truth in what agents see, clean tool schemas. Exit 1 if it breaks one."""
    from discogym.core import get_suite
    from discogym.core.checks.conformance import CHECKS, check_suite

    with user_errors():
        suite = get_suite(suite_name)
        with stderr.status(Text(f"checking suite {suite.name}")):  # a str would be read as markup
            findings = check_suite(suite, episodes=episodes, max_steps=max_steps, seed=seed)
    if as_json:
        print_json({"suite": suite.name, "checks": CHECKS, "findings": [f.model_dump() for f in findings]})
    else:
        for finding in findings:
            stdout.print(styled("FAIL", "red", str(finding)), highlight=False)
        verdict = f"{len(findings)} problem(s) found" if findings else "conforms"
        stderr.print(f"{suite.name}: {len(CHECKS)} checks, {verdict}", highlight=False)
    if findings:
        raise typer.Exit(1)


class Transport(StrEnum):
    """How the MCP server talks to its clients."""

    stdio = "stdio"
    http = "http"


@app.command()
def serve(
    runs: Annotated[
        Path, typer.Option(parser=out_folder, help="The runs folder to browse; people's games go to RUNS/web.")
    ] = Path("runs"),
    host: Annotated[str, typer.Option(help="Address to listen on (127.0.0.1: this machine only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="NAME",
            help="Also answer requests for this host name (repeatable; 127.0.0.1, localhost and [::1] always).",
        ),
    ] = None,
    study: Annotated[
        Path | None,
        typer.Option(
            metavar="STUDY.yaml",
            help="Serve this study to its participants only (no browsing); their games go to --out.",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(parser=out_folder, help="The study's folder (default: studies/NAME).")
    ] = None,
    compute_workers: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Processes that compute the games' simulations (petri's), so that they never hold up the "
            "server's other games [default: one fewer than the cores, at least 1; 0: in the server's threads].",
        ),
    ] = None,
) -> None:
    """Serve the web app: people play any task in the browser, and anyone browses the runs; or, with --study,
    a study's participants play their assigned games and reach nothing else."""
    with user_errors():
        try:
            import uvicorn

            from discogym.interfaces.web.app import create_app
            from discogym.interfaces.web.guard import SERVER_LIMITS
        except ImportError as err:
            raise UserError(f"the web app needs the web extra: pip install 'discogym[web]' ({err})") from None
        from discogym.interfaces.listening import bind_http

        workers = default_compute_workers() if compute_workers is None else compute_workers
        if study is not None:
            web_app, where = study_app(study, out, allowed_host or [], host, workers)
        else:
            web_app, where = create_app(runs, allowed_host or [], listen=host, compute_workers=workers), runs / "web"
        listener = bind_http(host, port)
    stderr.print(f"discogym serve: http://{host}:{port}/ (games written to {where}); Ctrl-C stops it", highlight=False)
    try:
        uvicorn.Server(uvicorn.Config(web_app, log_level="warning", **SERVER_LIMITS)).run(sockets=[listener])
    except KeyboardInterrupt:
        fail(f"interrupted; games in progress were written to {where} as server_stopped", EXIT_INTERRUPTED)
    if getattr(web_app.state, "unsaved", []):  # the app named them as it stopped
        raise typer.Exit(1)


def default_compute_workers() -> int:
    """The web server's worker processes for the games' simulations: one fewer than the cores this process may
    use, so that one is left for the server itself, and at least one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores - 1)


def study_app(
    study_file: Path, out: Path | None, allowed: list[str], host: str, compute_workers: int
) -> tuple[Any, Path]:
    """The participants' app of the study in ``study_file``, its games in ``out`` (default ``studies/NAME``)."""
    from discogym.interfaces.web.study import Study, load_study_file, prepare_study_folder
    from discogym.interfaces.web.study_app import create_study_app

    loaded = load_study_file(study_file)
    folder = out or Path("studies") / loaded.name
    prepare_study_folder(study_file, folder)
    return create_study_app(Study(loaded, folder), allowed, listen=host, compute_workers=compute_workers), folder


@app.command("mcp")
def mcp_command(
    suite_name: Annotated[str, typer.Argument(metavar="SUITE", help="Suite name or alias.")],
    transport: Annotated[Transport, typer.Option(help="stdio (one client) or streamable HTTP.")] = Transport.stdio,
    host: Annotated[str, typer.Option(help="Address to listen on (http).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on (http).")] = 8765,
    split: SplitOption = None,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Run seed the episodes' seeds derive from.")] = 0,
    out: Annotated[
        Path | None, typer.Option(parser=out_folder, help="Run directory for the episodes (default: runs/mcp/SUITE).")
    ] = None,
    idle_timeout: Annotated[
        float,
        typer.Option(min=1, help="Seconds an HTTP session may stay silent before it is freed (episode: abandoned)."),
    ] = 600.0,
) -> None:
    """Serve a suite's tasks and tools to MCP clients; every episode they play is written like a run's."""
    from discogym.core import get_suite

    with user_errors():
        suite = get_suite(suite_name)
        try:
            from discogym.interfaces.mcp.server import build_server, serve_http, serve_stdio
        except ImportError as err:
            raise UserError(f"the MCP server needs the mcp extra: pip install 'discogym[mcp]' ({err})") from None
        from discogym.interfaces.listening import bind_http

        out = out or Path("runs") / "mcp" / suite.name
        server = build_server(suite, out, split=split, seed=seed)
        listener = None if transport is Transport.stdio else bind_http(host, port)
    where = "standard input/output" if listener is None else f"http://{host}:{port}/mcp"
    stderr.print(
        f"discogym mcp: serving {suite.name} on {where}; episodes go to {out}",
        highlight=False,
    )
    try:
        if listener is None:
            serve_stdio(server)
        else:
            serve_http(server, host, listener, idle_timeout=idle_timeout)
    except KeyboardInterrupt:
        fail(f"interrupted; episodes still running were written to {out} as abandoned", EXIT_INTERRUPTED)


@app.command()
def play(
    suite_name: Annotated[str, typer.Argument(metavar="SUITE", help="Suite name or alias.")],
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id (see `discogym list SUITE`).")],
    split: SplitOption = None,
    condition: Annotated[str | None, typer.Option(help="Condition (default: the suite's first).")] = None,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Run seed the episode's seeds derive from.")] = 0,
    out: Annotated[
        Path | None, typer.Option(parser=out_folder, help="Run directory for the episode (default: runs/play/SUITE).")
    ] = None,
) -> None:
    """Play one task yourself in the terminal; the episode is scored and written like any other."""
    from discogym.core import get_suite
    from discogym.core.running.episode_loop import play_episode
    from discogym.core.running.runner import RunConfig, plan_episodes
    from discogym.core.running.session import claim_next_free
    from discogym.core.running.storage import RunDir
    from discogym.core.terminal.human import HumanAgent, PictureFolder

    with user_errors():
        suite = get_suite(suite_name)
        config = RunConfig.for_suite(
            suite, ["human"], split=split, tasks=[task_id], conditions=[condition] if condition else None, seed=seed
        )
        out = out or Path("runs") / "play" / suite.name
        run_dir = RunDir(out)
        run_dir.prepare()  # before the game: a person's play is never lost to a bad --out
        first = plan_episodes(suite, config)[0]
        # Each game is a new repeat, its name claimed (in the folder) until the episode is written.
        planned, claim = claim_next_free(run_dir, suite.name, first.task, first.condition, first.agent, seed)
        try:
            pictures = PictureFolder(out / "play-images" / run_dir.episode_path(planned.key).stem)
            episode, runtime = play_episode(suite, planned, HumanAgent(pictures=pictures), keep_interrupted=True)
            run_dir.write_episode(episode, runtime)
        finally:
            claim.release()
    score = episode.score
    verdict = "success" if score.success else "no success"
    stderr.print(
        f"{verdict} (score {score.value}, {episode.outcome.termination}); episode written to "
        f"{run_dir.episode_path(planned.key)}",
        highlight=False,
    )


def version_callback(value: bool) -> None:
    """Print the version and exit."""
    if value:
        from discogym import __version__

        stdout.print(f"discogym {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=version_callback, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """discogym: explore hidden rules, find them by experiment, use them."""


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``discogym`` command. Usage mistakes (unknown option, bad value) are one line too."""
    args = sys.argv[1:] if argv is None else argv
    command = typer.main.get_command(app)
    try:
        code = command.main(args=args or ["--help"], prog_name="discogym", standalone_mode=False)
    except TyperException as err:
        context = getattr(err, "ctx", None)
        hint = f" (see '{context.command_path} --help')" if context is not None else ""
        stderr.print(styled("error:", "bold red", f"{err.format_message()}{hint}"), highlight=False)
        sys.exit(err.exit_code)
    except typer.Abort:
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["app", "main"]
