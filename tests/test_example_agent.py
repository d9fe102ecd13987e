"""The example agent of docs/writing-an-agent.md plays every suite, declares its options, and is shown as it is;
``DISCOGYM_AGENTS`` registers agents without installing them."""

import json
import re

import pytest

from tests.conftest import REPO, run_discogym

NOVELTY = {"DISCOGYM_AGENTS": "examples.novelty_agent:register"}
ONE_TASK = {"redstone": "A_simultaneous_lights_L1", "petri": None, "crafting": "TEST0001", "autumn": "ball-2"}


def test_the_guide_shows_the_example_file_as_it_is():
    guide = (REPO / "docs" / "writing-an-agent.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", guide, flags=re.DOTALL)
    assert (REPO / "examples" / "novelty_agent.py").read_text(encoding="utf-8") in blocks


@pytest.mark.parametrize("suite", sorted(ONE_TASK))
def test_the_example_agent_plays_every_suite(suite, tmp_path):
    tasks = ["--tasks", ONE_TASK[suite]] if ONE_TASK[suite] else []
    args = ["run", suite, "--agent", "novelty", "--agent-opt", "max_calls=5", *tasks, "--out", str(tmp_path)]
    done = run_discogym(*args, "--json", **NOVELTY)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["errors"] == 0
    for path in sorted((tmp_path / "episodes").glob("*.json")):
        episode = json.loads(path.read_text())
        assert episode["key"]["agent_options"] == {"max_calls": "5"}
        assert 1 <= len(episode["events"]) <= 5
        calls = [json.dumps(event["call"], sort_keys=True) for event in episode["events"]]
        assert len(set(calls)) >= min(2, len(calls))  # a new call while one is left (petri offers two)


def test_the_example_agent_refuses_options_it_does_not_take(tmp_path):
    done = run_discogym(
        "run", "toy", "--agent", "novelty", "--agent-opt", "budget=3", "--out", str(tmp_path), **NOVELTY
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "error: agent 'novelty': --agent-opt budget: unknown option (options: max_calls)"
    bad = run_discogym(
        "run", "toy", "--agent", "novelty", "--agent-opt", "max_calls=0", "--out", str(tmp_path), **NOVELTY
    )
    assert bad.returncode == 2 and "max_calls must be a whole number of at least 1, got '0'" in bad.stderr


def test_a_broken_agents_reference_is_one_warning_and_the_others_register():
    listed = run_discogym("list", "--json", DISCOGYM_AGENTS="nowhere.at_all:register,examples.novelty_agent:register")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.splitlines() == [
        "warning: agent 'nowhere.at_all:register' from DISCOGYM_AGENTS could not be loaded: "
        "ModuleNotFoundError: No module named 'nowhere'"
    ]
    assert "novelty" in [agent["name"] for agent in json.loads(listed.stdout)["generic_agents"]]
