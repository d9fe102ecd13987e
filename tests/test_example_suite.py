"""The example suite of docs/writing-a-suite.md runs, conforms, scores from its log, and is shown as it is."""

import json
import re

from tests.conftest import REPO, run_discogym

EXAMPLE = {"DISCOGYM_SUITES": "examples.hidden_number:suite"}


def test_the_guide_shows_the_example_file_as_it_is():
    guide = (REPO / "docs" / "writing-a-suite.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", guide, flags=re.DOTALL)
    assert (REPO / "examples" / "hidden_number.py").read_text(encoding="utf-8") in blocks


def test_the_example_suite_runs_and_its_reference_solves_every_task(tmp_path):
    done = run_discogym("run", "hidden-number", "--agent", "reference", "--out", str(tmp_path), "--json", **EXAMPLE)
    assert done.returncode == 0, done.stderr
    episodes = [json.loads(p.read_text()) for p in sorted((tmp_path / "episodes").glob("*.json"))]
    assert len(episodes) == 10 and all(e["score"]["success"] for e in episodes)
    assert all(e["score"]["components"]["questions"] <= 7 for e in episodes)  # bisection over 100 numbers


def test_the_example_suite_passes_the_conformance_check():
    done = run_discogym("check-suite", "hidden-number", "--json", **EXAMPLE)
    assert done.returncode == 0, done.stdout + done.stderr
