"""Mystery-world generation: verified ground truth, difficulty, and the frozen sets against regeneration."""

import json
import subprocess

import numpy as np
import pytest

from discogym.core.errors import UserError
from discogym.suites.petri import frozen
from discogym.suites.petri.generate import (
    REPLICATES,
    band,
    generate_task,
    magnitude_class,
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
        assert row.p_holm == pytest.approx(spec.isolating_p_holm[name])
    hidden = compare(control, sim.run(spec.changed, seeds), sim.metrics)[target]
    assert hidden.relative_change == pytest.approx(spec.relative_change)
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


def test_verify_regenerates_every_frozen_task_byte_for_byte_under_two_hash_seeds():
    # Two processes at once (the machine has two cores), each with its own hash seed; together they cover every
    # set, and pilot-v0 is checked under both seeds.
    groups = {"1": ["l3-v0", "pilot-v0"], "2": ["core-v0", "l2-v0", "pilot-v0"]}
    assert sorted({name for names in groups.values() for name in names}) == sorted(frozen.set_names())
    running = {
        seed: subprocess.Popen(
            discogym_command("petri", "verify", "--json", *(arg for name in names for arg in ("--set", name))),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_environment(PYTHONHASHSEED=seed),
            cwd=REPO,
        )
        for seed, names in groups.items()
    }
    for seed, process in running.items():
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        report = json.loads(out)["sets"]
        assert sorted(report) == sorted(groups[seed]) and all(s["identical"] for s in report.values())


def test_verify_reports_a_tampered_task(tmp_path, monkeypatch):
    monkeypatch.setattr(frozen, "TASKS_DIR", tmp_path)
    monkeypatch.setitem(frozen.FROZEN_SETS, "pilot-v0", [("L1", "market", 1), ("L1", "social", 1)])
    frozen.freeze("pilot-v0")
    assert frozen.verify("pilot-v0") == []
    document = json.loads(frozen.set_path("pilot-v0").read_text())
    document["tasks"][1]["changed"] = {"epsilon": 0.3}
    frozen.set_path("pilot-v0").write_text(json.dumps(document, sort_keys=True, indent=1) + "\n")
    assert frozen.verify("pilot-v0") == ["social-1"]
