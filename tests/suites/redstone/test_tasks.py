"""The task files: the paper's 25, the generator, and clear errors for bad files."""

import pytest

from discogym.core import UserError
from discogym.suites.redstone.builder import build_device
from discogym.suites.redstone.evaluator import evaluate
from discogym.suites.redstone.tasks import TASK_DIR, make_task, official_tasks, packaged_tasks, parse_task, read_task
from tests.conftest import run_discogym


def test_the_packaged_files_are_what_the_generator_makes():
    made = official_tasks()
    assert len(made) == 25 and len({spec.task_id for spec in made}) == 25
    for spec in made:
        assert (TASK_DIR / f"{spec.task_id}.yaml").read_text(encoding="utf-8") == spec.to_yaml()
    assert sorted(path.stem for path in TASK_DIR.glob("*.yaml")) == sorted(spec.task_id for spec in made)


def test_the_levels_carry_the_papers_parameters():
    by_id = {spec.task_id: spec for spec in packaged_tasks()}
    assert [by_id[f"A_simultaneous_lights_L{n}"].lamps for n in range(1, 6)] == [4, 8, 16, 32, 64]
    assert [by_id[f"B_branch_reach_L{n}"].contract.max_reach_blocks for n in range(1, 6)] == [8, 12, 15, 18, 20]
    assert by_id["C_sequential_activation_L1"].contract.delays_ticks == [1, 2, 1]
    assert by_id["C_sequential_activation_L2"].contract.delays_ticks == [1, 2] * 3 + [1]
    assert by_id["C_sequential_activation_L5"].contract.delays_ticks == [1, 2] * 31 + [1]
    assert by_id["D_equal_delay_distribution_L3"].contract.target_distances == [4, 8, 12, 16]
    assert [by_id[f"E_pulse_shaping_L{n}"].contract.tau_ticks for n in range(1, 6)] == [4, 6, 8, 10, 12]
    assert by_id["A_simultaneous_lights_L3"].hint == "Signal-Strength-Decay"
    assert all(spec.hint for spec in packaged_tasks())
    text = (TASK_DIR / "A_simultaneous_lights_L1.yaml").read_text(encoding="utf-8")
    for key in (
        "task_id:",
        "world:",
        "allowed_blocks:",
        "inputs:",
        "outputs:",
        "contract:",
        "requirements:",
        "evaluation_metrics:",
        "test_cases:",
        "metadata:",
    ):
        assert key in text


@pytest.mark.parametrize(
    ("family", "params"),
    [
        ("A", {"lamps": 12}),
        ("A", {"lamps": 70}),
        ("B", {"lamps": 20, "reach": 23}),
        ("C", {"delays": [3, 1, 4, 2, 2]}),
        ("D", {"lamps": 12}),
        ("D", {"lamps": 8, "distances": [4, 8]}),
        ("E", {"lamps": 10, "tau": 5}),
        ("E", {"lamps": 40, "tau": 11}),
    ],
)
def test_the_builder_passes_generated_levels(family, params):
    spec = make_task(family, **params)
    assert spec.level == "custom"
    report = evaluate(spec, build_device(spec))
    assert report.passed, report.failures


@pytest.mark.parametrize(
    ("family", "params", "message"),
    [
        ("F", {}, "unknown family"),
        ("C", {"delays": [1, 5]}, "each delay must be 1..4"),
        ("C", {"lamps": 5, "delays": [1, 2]}, "needs num_outputs - 1 = 4 entries"),
        ("D", {"lamps": 6}, "multiple of the number of target distances"),
        ("A", {"lamps": 0}, "num_outputs"),
    ],
)
def test_impossible_parameters_are_refused_with_the_reason(family, params, message):
    with pytest.raises(UserError, match=message):
        make_task(family, **params)


def test_the_builder_says_where_its_designs_stop():
    with pytest.raises(UserError, match="holds at most"):
        build_device(make_task("A", lamps=100))
    with pytest.raises(UserError, match="pulse shaper makes tau"):
        build_device(make_task("E", tau=30))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("task_id: [unclosed", "not valid YAML"),
        ("- a list", "a YAML mapping"),
        ("task_id: x\nfamily: A\n", "level"),
        ("FAMILY_B_WITH_A_CONTRACT", "family B takes a branch_reach contract"),
    ],
)
def test_bad_task_files_get_a_clear_message(text, message):
    if text == "FAMILY_B_WITH_A_CONTRACT":
        text = make_task("A", "L1").to_yaml().replace("family: A", "family: B")
    with pytest.raises(UserError, match=message):
        parse_task(text, "bad.yaml")


def test_a_generated_file_reads_back_the_same(tmp_path):
    done = run_discogym(
        "redstone",
        "generate",
        "--family",
        "c",
        "--lamps",
        "5",
        "--delays",
        "2,3,1,4",
        "--out",
        str(tmp_path / "c.yaml"),
    )
    assert done.returncode == 0, done.stderr
    spec = read_task(tmp_path / "c.yaml")
    assert spec == make_task("C", lamps=5, delays=[2, 3, 1, 4])
    assert spec.task_id == "C_sequential_activation_N5_delays2-3-1-4"
    printed = run_discogym("redstone", "generate", "--family", "E", "--level", "L2")
    assert printed.stdout == make_task("E", "L2").to_yaml()
    bad = run_discogym("redstone", "generate", "--family", "C", "--delays", "1,x")
    assert bad.returncode != 0 and "comma-separated integers" in bad.stderr and "Traceback" not in bad.stderr
