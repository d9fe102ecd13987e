"""``discogym autumn ...``: run an Autumn program and print its frames, or check it."""

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from discogym.core import UserError
from discogym.core.terminal.console import JsonOption, print_json, user_errors
from discogym.suites.autumn.compat import FLAVORS
from discogym.suites.autumn.sexpr import AutumnError

app = typer.Typer(help="The Autumn language: run programs and check them.", no_args_is_help=True)

ProgramArgument = Annotated[Path, typer.Argument(metavar="PROGRAM", help="An Autumn program (.sexp).")]


def read_program(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise UserError(f"{path} is not UTF-8 text (byte {err.start}): give an Autumn program (.sexp)") from None


def frame_text(frame: list[list[str]], legend: dict[str, str]) -> list[str]:
    """A frame as rows of one character per cell; new colours get the next letter of the legend."""
    rows = []
    for row in frame:
        for colour in row:
            if colour not in legend:
                legend[colour] = ".abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[len(legend) % 62]
        rows.append("".join(legend[colour] for colour in row))
    return rows


@app.command("run")
def run_command(
    program: ProgramArgument,
    seed: Annotated[int, typer.Option(help="The random generator's seed (0 makes every draw 0).")] = 1,
    actions: Annotated[
        str, typer.Option(help='Actions separated by ";": noop, left, right, up, down, click X Y.')
    ] = "",
    steps: Annotated[
        int | None, typer.Option(min=0, max=100_000, help="Steps to run (default: one per action); noops fill up.")
    ] = None,
    order: Annotated[
        str, typer.Option(help="program (our semantics) or official (the official interpreter's).")
    ] = "program",
    flavor: Annotated[
        str,
        typer.Option(
            help="With --order official: the official build's C++ library (libstdc++, libc++, libc++-wasm32)."
        ),
    ] = "libstdc++",
    stdlib: Annotated[
        str,
        typer.Option(help="discogym (its nextLiquid) or official (the official nextLiquid); docs/autumn-compat.md."),
    ] = "discogym",
    as_json: JsonOption = False,
) -> None:
    """Run a program and print its frames: the initial one, then one per step."""
    from discogym.suites.autumn.interpreter import Interpreter, parse_actions

    with user_errors():
        if order not in ("program", "official"):
            raise UserError("--order is program or official")
        if flavor not in FLAVORS:
            raise UserError(f"--flavor is one of {', '.join(FLAVORS)}")
        if stdlib not in ("discogym", "official"):
            raise UserError("--stdlib is discogym or official")
        chosen: Literal["program", "official"] = "official" if order == "official" else "program"
        library: Literal["discogym", "official"] = "official" if stdlib == "official" else "discogym"
        source = read_program(program)
        try:
            planned = parse_actions(actions)
            count = len(planned) if steps is None else steps
            planned = (planned + [None] * count)[:count]
            interpreter = Interpreter(source, seed=seed, order=chosen, flavor=flavor, stdlib=library)
            frames = [interpreter.frame]
            for action in planned:
                frames.append(interpreter.step(action))
        except AutumnError as err:
            raise UserError(f"{program}: {err.describe()}") from None
    if as_json:
        print_json(
            {"program": str(program), "seed": seed, "order": order, "frames": frames, "printed": interpreter.output}
        )
        return
    legend = {str(interpreter.globals.get("background", "black")).lower(): "."}
    for index, frame in enumerate(frames):
        typer.echo(f"frame {index}")
        for row in frame_text(frame, legend):
            typer.echo(row)
    typer.echo("legend: " + ", ".join(f"{char} {colour}" for colour, char in legend.items()))


@app.command("check")
def check_command(program: ProgramArgument, as_json: JsonOption = False) -> None:
    """Parse and check a program; print every problem with its line and column (exit 1 if any)."""
    from discogym.suites.autumn.lint import check_program

    with user_errors():
        problems = check_program(read_program(program))
    if as_json:
        print_json(
            {
                "program": str(program),
                "ok": not problems,
                "problems": [{"line": p.line, "column": p.column, "message": p.message} for p in problems],
            }
        )
    else:
        for problem in problems:
            typer.echo(f"{program}:{problem.line}:{problem.column}: {problem.message}")
        if not problems:
            typer.echo(f"{program}: ok")
    if problems:
        raise typer.Exit(1)


EnvOption = Annotated[list[str] | None, typer.Option("--env", help="Only this environment (repeatable).")]


SetOption = Annotated[str, typer.Option("--set", help="The set version: v2 (the default) or v1 (the first).")]


@app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Option(help="The task file to write (JSON).")],
    env: EnvOption = None,
    seed: Annotated[int, typer.Option(help="Base seed; the packaged sets use 0.")] = 0,
    set_version: SetOption = "v2",
    jobs: Annotated[int, typer.Option(min=1, max=64, help="Processes side by side (v2; same result).")] = 2,
) -> None:
    """Generate the WorldTest challenges (MFP, planning, change detection) of the environments, by the rules of a
    set version (v2: every environment of the catalogue unless --env; v1: the first 15)."""
    from discogym.suites.autumn.tasks import generate, task_bytes

    with user_errors():
        task_set = generate(env, base_seed=seed, version=set_version, jobs=jobs)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(task_bytes(task_set))
    typer.echo(f"{len(task_set.tasks)} tasks written to {out}")


@app.command("verify")
def verify_command(
    env: EnvOption = None,
    set_versions: Annotated[
        list[str] | None, typer.Option("--set", help="Only this set version (repeatable; default: every one).")
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, max=64, help="Processes side by side (v2; same result).")] = 2,
    as_json: JsonOption = False,
) -> None:
    """Regenerate the packaged task sets (or some environments' tasks) and check they are byte for byte the same;
    an environment a set does not have is skipped in that set."""
    from discogym.suites.autumn.tasks import VERSIONS, check_version, verify_set

    with user_errors():
        chosen = set_versions or list(VERSIONS)
        for version in chosen:
            check_version(version)
        results = {version: verify_set(version, env, jobs) for version in chosen}
        if env and not any(result["environments"] for result in results.values()):
            raise UserError(f"no tasks of {', '.join(env)} in the packaged sets")
    if as_json:
        print_json({"identical": all(r["identical"] for r in results.values()), "sets": results})
    else:
        for version, result in results.items():
            differing = result["differing"]
            verdict = "identical" if result["identical"] else f"DIFFERENT: {', '.join(differing) or 'the lists differ'}"
            typer.echo(
                f"{version}: {result['tasks']} tasks of {len(result['environments'])} environments "
                f"regenerated: {verdict}"
            )
    if not all(result["identical"] for result in results.values()):
        raise typer.Exit(1)


@app.command("baseline")
def baseline_command(
    runs: Annotated[int, typer.Option(min=1, max=10_000, help="Random runs per environment.")] = 50,
    timeout: Annotated[int, typer.Option(min=1, max=100_000, help="Steps per run.")] = 1000,
    env: EnvOption = None,
    set_version: SetOption = "v2",
    jobs: Annotated[int, typer.Option(min=1, max=64, help="Processes side by side (same result).")] = 1,
    split: Annotated[
        str | None,
        typer.Option(help="official: AutumnBench's published tasks (cached), beside the paper's Appendix C table."),
    ] = None,
    as_json: JsonOption = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
) -> None:
    """The random-agent baseline (Appendix C): per environment, how often random actions trigger the change of
    the change-detection task and reach the planning task's goal, and in how many steps. A progress bar on
    stderr counts the runs (none with --quiet or --json). With --split official: the published environments,
    our random agent's figures beside the paper's."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from discogym.suites.autumn.baseline import baseline_envs, random_baseline
    from discogym.suites.autumn.tasks import packaged_tasks

    if split is not None:
        _official_baseline(split, runs, timeout, as_json, quiet)
        return
    with user_errors():
        tasks = packaged_tasks(set_version)
        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), disable=quiet or as_json) as progress:
            bar = progress.add_task("random baseline", total=runs * len(baseline_envs(tasks, env)))

            def advance(name: str) -> None:
                progress.update(bar, advance=1, description=f"random baseline: {name}")

            rows = random_baseline(tasks, runs=runs, timeout=timeout, envs=env, on_run=advance, jobs=jobs)
    if as_json:
        documents = [row.document() for row in rows]
        print_json(
            {"set": set_version, "runs": runs, "timeout": timeout, "environments": documents, "means": _means(rows)}
        )
        return

    def cell(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    typer.echo(f"random agent, {runs} runs of at most {timeout} steps per environment (set {set_version})")
    typer.echo(f"{'environment':<12} {'P(trigger)':>10} {'steps':>7} {'P(goal)':>8} {'steps':>7} {'P(in limit)':>11}")
    for row in rows:
        typer.echo(
            f"{row.env:<12} {cell(row.p_trigger, 2):>10} {cell(row.steps_to_trigger, 0):>7} "
            f"{cell(row.p_goal, 2):>8} {cell(row.steps_to_goal, 0):>7} {cell(row.p_goal_in_limit, 2):>11}"
        )
    means = _means(rows)
    typer.echo(
        f"{'mean':<12} {cell(means['p_trigger'], 2):>10} {'':>7} {cell(means['p_goal'], 2):>8} {'':>7} "
        f"{cell(means['p_goal_in_limit'], 2):>11}"
    )


def _official_baseline(split: str, runs: int, timeout: int, as_json: bool, quiet: bool) -> None:
    """``baseline --split official``: the paper's Table E.3 beside our random agent on the published tasks."""
    from rich.console import Console
    from rich.progress import Progress

    from discogym.suites.autumn.baseline import official_baseline
    from discogym.suites.autumn.official import OFFICIAL_SPLIT, load_official

    with user_errors():
        if split != OFFICIAL_SPLIT:
            raise UserError(f"--split takes {OFFICIAL_SPLIT} (the packaged sets are chosen with --set)")
        tasks = load_official().tasks
        with Progress(console=Console(stderr=True), disable=quiet or as_json) as progress:
            bar = progress.add_task("random baseline (official)", total=runs * len({t.env for t in tasks}))
            rows = official_baseline(tasks, runs, timeout, on_run=lambda _: progress.update(bar, advance=1))
    if as_json:
        print_json({"split": split, "runs": runs, "timeout": timeout, "environments": [r.document() for r in rows]})
        return

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    typer.echo(f"random agent, {runs} runs of at most {timeout} steps per environment; paper: Table E.3 (Appendix C)")
    typer.echo(f"{'environment':<12} {'P(trigger) paper':>16} {'ours':>6} {'P(goal) paper':>14} {'ours':>6}")
    for row in rows:
        typer.echo(
            f"{row.env:<12} {cell(row.paper_trigger):>16} {cell(row.p_trigger):>6} "
            f"{cell(row.paper_goal):>14} {cell(row.p_goal):>6}"
        )


def _means(rows: list[Any]) -> dict[str, float | None]:
    """The mean of each probability over the environments that have it."""
    from statistics import fmean

    keys = ("p_trigger", "p_goal", "p_goal_in_limit")
    values = {key: [getattr(row, key) for row in rows if getattr(row, key) is not None] for key in keys}
    return {key: (fmean(found) if found else None) for key, found in values.items()}


def data_document() -> dict[str, Any]:
    """What ``discogym autumn data`` reports: the cache, its checksums, the environments and tasks, the refusals."""
    from discogym.suites.autumn.official import load_official
    from discogym.suites.autumn.official_data import check_cache, data_dir

    checked = check_cache()
    document: dict[str, Any] = {"cache": str(data_dir()), "available": checked is not None}
    if checked is None:
        return document
    loaded = load_official()
    kinds = [task.kind for task in loaded.tasks]
    return document | {
        "source": checked.source,
        "files": len(checked.files),
        "checksums_ok": not checked.mismatched,
        "mismatched": checked.mismatched,
        "environments": list(loaded.environments),
        "tasks": len(loaded.tasks),
        "by_kind": {kind: kinds.count(kind) for kind in ("mfp", "planning", "cd")},
        "refused": [{"task": r.task, "env": r.env, "kind": r.kind, "reason": r.reason} for r in loaded.refused],
    }


@app.command("data")
def data_command(
    fetch: Annotated[
        bool, typer.Option(help="Download AutumnBench's public manifest and every file it lists into the cache.")
    ] = False,
    source: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="Install a folder you downloaded (raw or the official harness's example_benchmark/ layout).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """AutumnBench's published tasks (the `official` split): what is cached, and --fetch or --from to get them."""
    from discogym.suites.autumn import official_data

    with user_errors():
        if source is not None:
            official_data.install_from(source)
        elif fetch:
            official_data.fetch()
        document = data_document()
    if as_json:
        print_json(document)
        return
    _print_data(document)


def _print_data(document: dict[str, Any]) -> None:
    from discogym.suites.autumn.official_data import get_help

    if not document["available"]:
        typer.echo(f"nothing cached in {document['cache']}")
        typer.echo(get_help())
        return
    checks = "ok" if document["checksums_ok"] else f"MISMATCH: {', '.join(document['mismatched'])}"
    typer.echo(f"AutumnBench public tasks in {document['cache']} (from {document['source']})")
    typer.echo(f"{document['files']} files, checksums {checks}")
    by_kind = ", ".join(f"{kind} {n}" for kind, n in document["by_kind"].items())
    typer.echo(f"{len(document['environments'])} environments: {', '.join(document['environments'])}")
    typer.echo(f"{document['tasks']} tasks posed ({by_kind}); {len(document['refused'])} refused")
    for refusal in document["refused"]:
        typer.echo(f"  refused {refusal['task']} ({refusal['kind']}): {refusal['reason']}")


@app.command("envs")
def envs_command(as_json: JsonOption = False) -> None:
    """The environments: category, description and the paper's Table B.1 statistics, computed from each program."""
    from discogym.suites.autumn.catalog import catalog_rows

    with user_errors():
        rows = catalog_rows()
    if as_json:
        print_json({"environments": rows})
        return
    columns = [key for key in rows[0] if key != "description"] if rows else []
    typer.echo("  ".join(f"{c:>10}" if c != "name" else f"{c:<10}" for c in columns))
    for row in rows:
        typer.echo("  ".join(f"{row[c]!s:>10}" if c != "name" else f"{row[c]!s:<10}" for c in columns))


@app.command("parity")
def parity_command(
    official: Annotated[
        Path, typer.Option(help="The folder holding Autumn.cpp's built Python module (interpreter_module*.so).")
    ],
    programs: Annotated[Path, typer.Option(help="A folder of Autumn programs (.sexp) to run through both.")],
    seeds: Annotated[str, typer.Option(help="Seeds, separated by commas.")] = "1,0",
    runs: Annotated[int, typer.Option(min=1, max=1000, help="Runs of random actions per seed.")] = 5,
    steps: Annotated[int, typer.Option(min=0, max=100_000, help="Steps per run.")] = 200,
    stdlib: Annotated[
        Path | None,
        typer.Option(help="The official standard library (default: autumnstdlib/stdlib.sexp in or above --official)."),
    ] = None,
    order: Annotated[
        str, typer.Option(help="Our evaluation order: official (the C++ hash map's; see --flavor) or program.")
    ] = "official",
    flavor: Annotated[str, typer.Option(help="With --order official: the official build's C++ library.")] = "libstdc++",
    as_json: JsonOption = False,
) -> None:
    """Run programs through discogym's interpreter and the official one (Autumn.cpp) side by side, with the same
    seeds and seeded random actions, and report per program: frame-identical, or the first differing step and
    why, with both interpreters' time. discogym ships no recipe to build the official module: build it by
    Autumn.cpp's README (docs/autumn-compat.md)."""
    from discogym.suites.autumn.parity import (
        compare_folder,
        median_speed_ratio,
        official_module,
        program_files,
        summary_line,
    )

    with user_errors():
        try:
            seed_list = [int(part) for part in seeds.split(",") if part.strip()]
        except ValueError:
            raise UserError(f"--seeds {seeds!r}: give integers separated by commas, e.g. 1,0") from None
        if not seed_list:
            raise UserError("--seeds: give at least one seed")
        if order not in ("program", "official"):
            raise UserError("--order is program or official")
        if flavor not in FLAVORS:
            raise UserError(f"--flavor is one of {', '.join(FLAVORS)}")
        module = official_module(official, stdlib)
        files = program_files(programs)
        reports = compare_folder(
            files,
            module,
            seed_list,
            runs,
            steps,
            on_program=None if as_json else lambda report: typer.echo(summary_line(report)),
            stdlib="official",
            order=order,
            flavor=flavor,
        )
    matched = sum(report.status != "different" for report in reports)
    identical = sum(report.status == "identical" for report in reports)
    ratio = median_speed_ratio(reports)
    if as_json:
        print_json(
            {
                "seeds": seed_list,
                "runs": runs,
                "steps": steps,
                "order": order,
                "programs": [report.document() for report in reports],
                "identical": identical,
                "matched": matched,
                "median_speed_ratio": None if ratio is None else round(ratio, 2),
            }
        )
    else:
        speed = "" if ratio is None else f"; ours is {ratio:.2f}x as fast (median official/ours time)"
        typer.echo(
            f"{identical} of {len(reports)} programs frame-identical, {matched - identical} identical until the "
            f"official interpreter's error{speed}"
        )
    if matched < len(reports):
        raise typer.Exit(1)
