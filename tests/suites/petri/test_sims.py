"""What every petri simulation promises (parameter spaces, determinism across processes) and the
``discogym petri`` commands."""

import json
import subprocess
import sys

import numpy as np
import pytest

from discogym.core import UserError
from discogym.suites.petri.sims.registry import all_simulations, get_simulation
from tests.conftest import REPO, cli_environment

NAMES = sorted(all_simulations())
SEEDS = [0, 7, 2**40]


@pytest.mark.parametrize("name", NAMES)
def test_each_simulation_documents_a_parameter_space_rich_enough_for_the_task_generator(name):
    sim = all_simulations()[name]
    assert len(sim.metrics) >= 4 and sim.target in sim.metrics and len(set(sim.metrics)) == len(sim.metrics)
    names = [param.name for param in sim.params]
    assert len(set(names)) == len(names) and set(sim.control) == set(names)
    assert sim.resolve() == {param.name: param.check(sim.control[param.name]) for param in sim.params}
    roles = [param.role for param in sim.params]
    assert roles.count("driver") >= 3 and roles.count("decoy") >= 3
    for param in sim.params:
        assert param.meaning and param.low <= param.high
        if param.role != "fixed":
            assert param.test_values and param.low < param.high, param.name
        for value in param.test_values:
            assert param.low <= value <= param.high and value != sim.control[param.name], (param.name, value)


def test_unknown_simulations_parameters_and_values_are_user_errors():
    with pytest.raises(UserError, match="unknown simulation 'weather'; simulations: "):
        get_simulation("weather")
    sim = all_simulations()["social"]
    with pytest.raises(UserError, match="social has no parameter 'gravity'; parameters: "):
        sim.resolve({"gravity": 1.0})
    first = sim.params[0]
    with pytest.raises(UserError, match=f"parameter '{first.name}' must lie in"):
        sim.resolve({first.name: first.high + 1})
    with pytest.raises(UserError, match="seeds must be a non-empty list of non-negative integers"):
        sim.run({}, [])


_PRINT_ALL = f"""
import json
from discogym.suites.petri.sims.registry import all_simulations
print(json.dumps({{name: sim.run({{}}, {SEEDS}).tolist() for name, sim in sorted(all_simulations().items())}}))
"""


def test_metric_vectors_are_bit_identical_across_processes_and_hash_seeds():
    outputs = []
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", _PRINT_ALL],
            env=cli_environment(PYTHONHASHSEED=hash_seed),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    for name, sim in all_simulations().items():  # and equal to this process's numbers, to the last bit
        assert np.array_equal(np.array(outputs[0][name]), sim.run({}, SEEDS)), name


def test_simulate_prints_the_metric_vectors_of_each_seed(run_cli):
    sim = all_simulations()["social"]
    driver = next(param for param in sim.params if param.role == "driver")
    value = driver.test_values[0]
    done = run_cli("petri", "simulate", "social", "--set", f"{driver.name}={value}", "--seeds", "3", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["seeds"] == [0, 1, 2] and document["config"][driver.name] == value
    expected = sim.run({driver.name: value}, [0, 1, 2])
    assert np.array_equal(np.array(document["values"]), expected)
    assert document["mean"][sim.target] == pytest.approx(expected[:, sim.metrics.index(sim.target)].mean())
    table = run_cli("petri", "simulate", "social", "--seeds", "2")
    assert table.returncode == 0 and "mean" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["petri", "simulate", "weather"], "unknown simulation 'weather'"),
        (["petri", "simulate", "social", "--set", "gravity=1"], "social has no parameter 'gravity'"),
        (["petri", "simulate", "social", "--set", "epsilon"], "--set takes PARAMETER=NUMBER"),
        (["petri", "simulate", "social", "--set", "epsilon=abc"], "--set takes PARAMETER=NUMBER"),
        (["petri", "validate", "--sim", "weather"], "unknown simulation 'weather'"),
    ],
)
def test_petri_command_mistakes_are_one_line(run_cli, args, message):
    done = run_cli(*args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_sims_lists_every_parameter_space(run_cli):
    done = run_cli("petri", "sims", "--json")
    assert done.returncode == 0, done.stderr
    listed = {sim["name"]: sim for sim in json.loads(done.stdout)["simulations"]}
    assert sorted(listed) == NAMES
    for name, sim in all_simulations().items():
        assert [p["name"] for p in listed[name]["params"]] == [p.name for p in sim.params]
        assert listed[name]["target"] == sim.target


def test_validate_reports_checks_with_figures_and_writes_plots(run_cli, tmp_path):
    done = run_cli("petri", "validate", "--sim", "origin", "--plots", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["total"] >= 1 and report["passed"] == report["total"]
    assert all(check["simulation"] == "origin" and check["reference"] for check in report["checks"])
    assert report["plots"] == [str(tmp_path / "origin.png")]
    assert (tmp_path / "origin.png").read_bytes().startswith(b"\x89PNG")
