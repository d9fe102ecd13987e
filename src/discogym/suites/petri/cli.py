"""``discogym petri ...``: the simulations' parameter spaces, single runs, and the literature validation."""

from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table
from rich.text import Text

from discogym.core import UserError
from discogym.core.terminal.console import JsonOption, fail, print_json, stderr, stdout, user_errors
from discogym.suites.petri.sims.base import Check, Simulation

EXIT_VALIDATION_FAILED = 1


def simulations() -> dict[str, Simulation]:
    """Every simulation by name (imported when a command runs: the simulations load scipy, which is slow)."""
    from discogym.suites.petri.sims.registry import all_simulations

    return all_simulations()


def get_simulation(name: str) -> Simulation:
    """The simulation called ``name``, or a UserError listing them."""
    from discogym.suites.petri.sims import registry

    return registry.get_simulation(name)


app = typer.Typer(
    help="petri-bench maintenance: simulations, their parameter spaces and literature checks.",
    no_args_is_help=True,
)


def simulation_document(sim: Simulation) -> dict[str, Any]:
    """What ``sims --json`` says about one simulation."""
    return {
        "name": sim.name,
        "description": sim.description,
        "metrics": list(sim.metrics),
        "target": sim.target,
        "params": [
            {**param.model_dump(), "control": sim.control[param.name], "test_values": list(param.test_values)}
            for param in sim.params
        ],
    }


@app.command("sims")
def sims_command(
    name: Annotated[str | None, typer.Argument(metavar="[SIM]", help="One simulation (default: all).")] = None,
    as_json: JsonOption = False,
) -> None:
    """The simulations: metrics, target, and every parameter with its legal range, control value and role."""
    with user_errors():
        chosen = [get_simulation(name)] if name else list(simulations().values())
    if as_json:
        print_json({"simulations": [simulation_document(sim) for sim in chosen]})
        return
    for sim in chosen:
        table = Table("parameter", "range", "control", "role", "test values", "unit", "meaning")
        table.title = f"{sim.name}: target {sim.target}; metrics {', '.join(sim.metrics)}"
        for param in sim.params:
            table.add_row(
                param.name,
                f"[{param.low:g}, {param.high:g}]" + (" int" if param.kind == "int" else ""),
                f"{sim.control[param.name]:g}",
                param.role,
                ", ".join(f"{v:g}" for v in param.test_values),
                param.unit,
                param.meaning,
            )
        stdout.print(table)


def parse_settings(pairs: list[str]) -> dict[str, float]:
    """``["noise=0.5", ...]`` to a dict, or a UserError naming the malformed pair."""
    settings: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not sep or not name or not np.isfinite(number):
            raise UserError(f"--set takes PARAMETER=NUMBER, got {pair!r}")
        settings[name] = number
    return settings


@app.command()
def simulate(
    name: Annotated[str, typer.Argument(metavar="SIM", help="market, swarm, origin, morph or social.")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="A parameter override PARAMETER=VALUE (repeatable).")
    ] = None,
    seeds: Annotated[int, typer.Option(min=1, max=1000, help="How many replicates (seeds).")] = 12,
    first_seed: Annotated[
        int, typer.Option(min=0, max=2**31 - 1, help="The first seed; replicates use consecutive seeds.")
    ] = 0,
    as_json: JsonOption = False,
) -> None:
    """Run the control configuration (with overrides) for several seeds and print the metric vectors."""
    with user_errors():
        sim = get_simulation(name)
        overrides = parse_settings(set_ or [])
        config = sim.resolve(overrides)
        seed_list = list(range(first_seed, first_seed + seeds))
        values = sim.run(overrides, seed_list)
    mean, std = values.mean(axis=0), values.std(axis=0, ddof=1) if len(seed_list) > 1 else np.zeros(values.shape[1])
    if as_json:
        print_json(
            {
                "simulation": sim.name,
                "config": config,
                "target": sim.target,
                "metrics": list(sim.metrics),
                "seeds": seed_list,
                "values": values.tolist(),
                "mean": dict(zip(sim.metrics, mean.tolist(), strict=True)),
                "std": dict(zip(sim.metrics, std.tolist(), strict=True)),
            }
        )
        return
    changed = ", ".join(f"{k}={v:g}" for k, v in overrides.items()) or "control"
    table = Table("seed", *sim.metrics, title=f"{sim.name} ({changed})")
    for seed, row in zip(seed_list, values, strict=True):
        table.add_row(str(seed), *(f"{v:.6g}" for v in row))
    table.add_row("mean", *(f"{v:.6g}" for v in mean), style="bold")
    table.add_row("sd", *(f"{v:.6g}" for v in std), style="bold")
    stdout.print(table)


def run_checks(names: list[str], plot_dir: Path | None) -> tuple[list[Check], list[str]]:
    """Every chosen simulation's checks, and the plots written."""
    checks: list[Check] = []
    plots: list[str] = []
    for name in names:
        sim = get_simulation(name)
        stderr.print(f"validating {sim.name} ...", highlight=False)
        checks.extend(sim.validate(plot_dir))
        if plot_dir is not None:
            plots.append(str(plot_dir / f"{sim.name}.png"))
    return checks, plots


@app.command()
def validate(
    sims: Annotated[list[str] | None, typer.Option("--sim", help="Only these simulations (repeatable).")] = None,
    plots: Annotated[Path | None, typer.Option(help="Write one PNG per simulation into this folder.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Reproduce the literature results the simulations are validated against; exit 1 if a check fails."""
    with user_errors():
        names = sims or list(simulations())
        for name in names:
            get_simulation(name)
        if plots is not None:
            plots.mkdir(parents=True, exist_ok=True)
        checks, written = run_checks(names, plots)
    passed = sum(check.passed for check in checks)
    if as_json:
        print_json(
            {"checks": [c.model_dump() for c in checks], "passed": passed, "total": len(checks), "plots": written}
        )
    else:
        table = Table("simulation", "check", "measured", "threshold", "result", "reference")
        for check in checks:
            result = Text("pass", style="green") if check.passed else Text("FAIL", style="red")
            table.add_row(
                check.simulation, check.name, f"{check.measured:.4g}", check.threshold, result, check.reference
            )  # fmt: skip
        table.title = f"petri validation: {passed}/{len(checks)} checks pass"
        stdout.print(table)
        for path in written:
            stdout.print(f"plot: {path}", highlight=False)
    if passed < len(checks):
        fail(f"{len(checks) - passed} of {len(checks)} validation checks failed", EXIT_VALIDATION_FAILED)


@app.command()
def generate(
    name: Annotated[str, typer.Argument(metavar="SIM", help="market, swarm, origin, morph or social.")],
    tier: Annotated[str, typer.Option(help="L1, L2, L3, L4 or blind.")] = "L1",
    seed: Annotated[int, typer.Option(min=0, help="The task seed.")] = 0,
    generation: Annotated[str, typer.Option(help="v1 (calibrated, the default) or v0 (the first sets).")] = "v1",
    as_json: JsonOption = False,
) -> None:
    """Generate one verified mystery world (its ground truth included: for maintainers, not agents)."""
    from discogym.suites.petri.generate import generate_task
    from discogym.suites.petri.tasks import Generation, Tier

    with user_errors():
        tiers: dict[str, Tier] = {"L1": "L1", "L2": "L2", "L3": "L3", "L4": "L4", "blind": "blind"}
        generations: dict[str, Generation] = {"v0": "v0", "v1": "v1"}
        if tier not in tiers:
            raise UserError(f"--tier takes L1, L2, L3, L4 or blind, got {tier!r}")
        if generation not in generations:
            raise UserError(f"--generation takes v1 or v0, got {generation!r}")
        spec = generate_task(get_simulation(name), tiers[tier], seed, generation=generations[generation])
    if as_json:
        print_json(spec.model_dump(mode="json"))
        return
    stdout.print_json(spec.model_dump_json())


@app.command()
def calibrate(
    name: Annotated[str | None, typer.Argument(metavar="[SIM]", help="One simulation (default: all).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Measure again where each driver becomes detectable at its v1 operating point (48 seeds, half-power edges),
    beside the edges the v1 generator uses (calibration.py). Slow: minutes per simulation."""
    from discogym.suites.petri.calibrate import find_edges
    from discogym.suites.petri.calibration import CALIBRATION

    with user_errors():
        chosen = [get_simulation(name)] if name else list(simulations().values())
    rows: list[dict[str, Any]] = []
    for sim in chosen:
        calibration = CALIBRATION[sim.name]
        stderr.print(f"calibrating {sim.name} at {calibration.base or 'its control'} ...", highlight=False)
        for edge in find_edges(sim, calibration.base, list(calibration.edges)):
            rows.append(
                {
                    "simulation": sim.name,
                    "parameter": edge.parameter,
                    "side": edge.side,
                    "measured": edge.value,
                    "power": edge.power,
                    "used": calibration.edges[edge.parameter].get(edge.side),
                }
            )
    if as_json:
        print_json({"edges": rows})
        return
    table = Table("simulation", "parameter", "side", "measured edge", "power there", "edge used (v1)")
    for row in rows:
        measured = "-" if row["measured"] is None else f"{row['measured']:.4g}"
        used = "-" if row["used"] is None else f"{row['used']:g}"
        table.add_row(row["simulation"], row["parameter"], row["side"], measured, f"{row['power']:.3f}", used)
    stdout.print(table)


SetsOption = Annotated[list[str] | None, typer.Option("--set", help="Only this frozen set (repeatable).")]


@app.command()
def freeze(sets: SetsOption = None) -> None:
    """Regenerate the frozen task sets from their seeds and write their JSON files."""
    from discogym.suites.petri import frozen

    with user_errors():
        for name in sets or frozen.set_names():
            stderr.print(f"freezing {name} ...", highlight=False)
            stdout.print(f"wrote {frozen.freeze(name)}", highlight=False)


@app.command()
def verify(sets: SetsOption = None, as_json: JsonOption = False) -> None:
    """Regenerate every frozen task from its seed and compare it with the committed file (ground truth, decisions and
    seeds exactly, statistics to their stored 6 significant digits); exit 1 if any differs."""
    from discogym.suites.petri import frozen

    with user_errors():
        results = {}
        for name in sets or frozen.set_names():
            stderr.print(f"verifying {name} ...", highlight=False)
            results[name] = frozen.verify(name)
    if as_json:
        print_json({"sets": {name: {"equal": not bad, "differing": bad} for name, bad in results.items()}})
    else:
        for name, bad in results.items():
            verdict = "equal" if not bad else "DIFFERS: " + ", ".join(bad)
            stdout.print(f"{name}: {verdict}", highlight=False)
    failed = [name for name, bad in results.items() if bad]
    if failed:
        fail(f"frozen sets differ from their regeneration: {', '.join(failed)}", EXIT_VALIDATION_FAILED)


@app.command()
def recheck(sets: SetsOption = None, as_json: JsonOption = False) -> None:
    """Measure every frozen task's ground truth again on 48 fresh seeds: drivers significant in the stated
    direction, decoys not, L4 boundaries found again within their tolerance. Slow (minutes a set); exit 1 if any
    task fails."""
    from discogym.suites.petri import frozen
    from discogym.suites.petri.generate import fresh_seed_problems

    with user_errors():
        chosen = sets or [name for name in frozen.set_names() if frozen.generation(name) == "v1"]
        problems: dict[str, dict[str, list[str]]] = {}
        for name in chosen:
            stderr.print(f"rechecking {name} ...", highlight=False)
            tasks = frozen.load_set(name).tasks
            problems[name] = {t.id: fresh_seed_problems(get_simulation(t.simulation), t) for t in tasks}
    if as_json:
        print_json({"sets": problems})
    else:
        for name, by_task in problems.items():
            failing = {task: found for task, found in by_task.items() if found}
            holds = f"{len(by_task) - len(failing)} of {len(by_task)} hold"
            stdout.print(f"{name}: {holds}" + "".join(f"\n  {t}: {'; '.join(f)}" for t, f in failing.items()))
    if any(found for by_task in problems.values() for found in by_task.values()):
        fail("some tasks' ground truth does not hold on fresh seeds", EXIT_VALIDATION_FAILED)
