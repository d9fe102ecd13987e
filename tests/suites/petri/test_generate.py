"""Mystery-world generation: verified ground truth, difficulty, and the frozen sets against regeneration."""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from discogym.core.errors import UserError
from discogym.suites.petri import frozen
from discogym.suites.petri.generate import (
    REPLICATES,
    band,
    generate_task,
    magnitude_class,
    round_statistic,
)
from discogym.suites.petri.sims.registry import get_simulation
from discogym.suites.petri.stats import compare, sign_flip_p
from tests.conftest import REPO, cli_environment, discogym_command


def test_magnitude_classes_and_difficulty_bands_follow_the_spec_boundaries():
    assert [magnitude_class(c) for c in (0.05, 0.10, -0.349, 0.35, -0.7499, 0.75, 3.0)] == [
        None, "small", "small", "medium", "medium", "large", "large",
    ]  # fmt: skip
    assert [band(p) for p in (0.85, 0.8499, 0.55, 0.5499)] == ["easy", "moderate", "moderate", "hard"]


@pytest.mark.parametrize("tier", ["L1", "L2", "L3"])
def test_generated_ground_truth_is_what_the_harness_would_measure(tier):
    sim = get_simulation("market")
    spec = generate_task(sim, tier, 7)
    assert spec == generate_task(sim, tier, 7)  # deterministic
    assert len(spec.replicate_seeds) == REPLICATES and spec.control == sim.resolve()
    assert len(spec.candidates) == (4 if tier == "L3" else 3) and set(spec.changed) <= set(spec.candidates)
    seeds, target = spec.replicate_seeds, sim.metrics.index(sim.target)
    control = sim.run({}, seeds)
    for name in spec.candidates:  # drivers significant, decoys not, on the experiments' own seeds
        row = compare(control, sim.run({name: spec.reference_values[name]}, seeds), sim.metrics)[target]
        assert row.significant == (name in spec.changed), name
        assert row.p_holm == pytest.approx(spec.isolating_p_holm[name], rel=1e-5)
    hidden = compare(control, sim.run(spec.changed, seeds), sim.metrics)[target]
    assert hidden.relative_change == pytest.approx(spec.relative_change, rel=1e-5)
    if tier != "L3":
        assert spec.direction == ("up" if hidden.relative_change > 0 else "down")
    if tier == "L2":
        assert spec.magnitude == magnitude_class(hidden.relative_change) is not None
    if tier == "L3":
        first, second = spec.changed
        cells = [sim.run(c, seeds)[:, target] for c in ({first: spec.changed[first]}, {second: spec.changed[second]})]
        contrast = sim.run(spec.changed, seeds)[:, target] - cells[0] - cells[1] + control[:, target]
        assert spec.interaction == ("positive" if contrast.mean() > 0 else "negative")
        assert spec.interaction_p is not None and spec.interaction_p < 0.05
        assert sign_flip_p(contrast, 5000, np.random.default_rng(0)) < 0.05
    assert 0.0 <= spec.difficulty.oracle_power <= 1.0 and spec.difficulty.band == band(spec.difficulty.oracle_power)


def test_unknown_sets_are_user_errors():
    with pytest.raises(UserError, match="unknown task set 'x-v9'; sets: pilot-v0, core-v0, l2-v0, l3-v0"):
        frozen.load_set("x-v9")


def test_the_frozen_sets_hold_the_documented_tasks():
    sizes = {name: len(frozen.load_set(name).tasks) for name in frozen.set_names()}
    assert sizes == {"pilot-v0": 6, "core-v0": 10, "l2-v0": 10, "l3-v0": 10}
    tiers = {name: {task.tier for task in frozen.load_set(name).tasks} for name in frozen.set_names()}
    assert tiers == {"pilot-v0": {"L1"}, "core-v0": {"L1"}, "l2-v0": {"L2"}, "l3-v0": {"L3"}}


OLDEST_NUMERICS = REPO / ".venv" / "oldest-numerics"


def _pins(path: Path) -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return dict(line.split("==") for line in lines if line)


def test_the_oldest_numerics_are_the_lower_bounds_of_the_pyproject():
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    lower = dict(d.split(">=") for d in dependencies if d.startswith(("numpy>=", "scipy>=")))
    assert _pins(REPO / "constraints-oldest.txt") == lower


def test_every_dependency_is_pinned_in_the_constraints():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [
        d for name, extra in project["optional-dependencies"].items() for d in extra if not d.startswith("discogym")
    ]
    names = {re.split(r"[<>=\[ ]", d)[0].lower().replace("_", "-") for d in requirements}
    pinned = {name.lower().replace("_", "-") for name in _pins(REPO / "constraints.txt")}
    assert names - pinned == set()


def test_verify_regenerates_every_frozen_task_under_two_hash_seeds_and_two_numpy_versions():
    """Every set regenerated twice at once (the machine has two cores): with this venv's numpy and scipy under
    one hash seed, and with the oldest the pyproject allows under another; both must equal the committed files."""
    if not (OLDEST_NUMERICS / "installed").exists():
        pytest.skip(f"the oldest numpy and scipy are not installed in {OLDEST_NUMERICS}: `make test` installs them")
    overlays = {"1": "", "2": str(OLDEST_NUMERICS)}
    versions = {
        seed: subprocess.run(
            [sys.executable, "-c", "import numpy, scipy; print(numpy.__version__, scipy.__version__)"],
            capture_output=True,
            text=True,
            check=True,
            env=cli_environment(PYTHONPATH=overlay),
        ).stdout.split()
        for seed, overlay in overlays.items()
    }
    oldest = _pins(REPO / "constraints-oldest.txt")
    assert versions["2"] == [oldest["numpy"], oldest["scipy"]] and versions["1"] != versions["2"]
    names = frozen.set_names()
    running = {
        seed: subprocess.Popen(
            discogym_command("petri", "verify", "--json", *(arg for name in names for arg in ("--set", name))),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_environment(PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join(filter(None, [overlay, str(REPO)]))),
            cwd=REPO,
        )
        for seed, overlay in overlays.items()
    }
    for seed, process in running.items():
        out, err = process.communicate(timeout=1200)
        assert process.returncode == 0, f"numpy/scipy {versions[seed]}: {err}"
        report = json.loads(out)["sets"]
        assert sorted(report) == sorted(names) and all(s["equal"] for s in report.values())


def test_statistics_compare_to_their_stored_precision_and_the_rest_exactly():
    task = frozen.load_set("pilot-v0").tasks[0]
    nudged = task.model_copy(update={"relative_change": task.relative_change * (1 + 1e-9)})
    assert frozen.same_task(task, nudged)
    assert not frozen.same_task(task, task.model_copy(update={"relative_change": task.relative_change * 1.001}))
    assert not frozen.same_task(task, task.model_copy(update={"replicate_seeds": task.replicate_seeds[::-1]}))
    assert not frozen.same_task(task, task.model_copy(update={"direction": "down" if task.direction == "up" else "up"}))
    assert frozen.load_set("pilot-v0").tasks[0].relative_change == round_statistic(task.relative_change)


def test_verify_reports_a_tampered_task(tmp_path, monkeypatch):
    monkeypatch.setattr(frozen, "TASKS_DIR", tmp_path)
    monkeypatch.setitem(frozen.FROZEN_SETS, "pilot-v0", [("L1", "market", 1), ("L1", "social", 1)])
    frozen.freeze("pilot-v0")
    assert frozen.verify("pilot-v0") == []
    document = json.loads(frozen.set_path("pilot-v0").read_text())
    document["tasks"][1]["changed"] = {"epsilon": 0.3}
    frozen.set_path("pilot-v0").write_text(json.dumps(document, sort_keys=True, indent=1) + "\n")
    assert frozen.verify("pilot-v0") == ["social-1"]
