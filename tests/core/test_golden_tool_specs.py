"""The exact tool specs each shipped suite sends to agents, checked byte for byte against tests/golden/tool_specs/.

A change to a tool's name, description or argument schema shows up here as a diff to review. After a change
made on purpose, regenerate the files and commit them with it:

    .venv/bin/pytest tests/core/test_golden_tool_specs.py --update-golden
"""

from pathlib import Path
from typing import Any

import orjson
import pytest

from discogym.core import all_suites, get_suite
from discogym.core.model.episode import CANONICAL_JSON

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "tool_specs"
SHIPPED = [suite.name for suite in all_suites() if type(suite).__module__.startswith("discogym.suites.")]


def sent_specs(suite_name: str) -> dict[str, Any]:
    """For each condition, the tool specs of the first task of the suite's default split."""
    suite = get_suite(suite_name)
    split = suite.splits()[0]
    task = suite.tasks(split)[0]
    return {
        "suite": suite.name,
        "split": split,
        "task": task.id,
        "conditions": {
            condition.name: [spec.model_dump(mode="json") for spec in suite.make_env(task, condition, 0).tool_specs()]
            for condition in suite.conditions()
        },
    }


@pytest.mark.parametrize("suite_name", SHIPPED)
def test_the_tool_specs_each_suite_sends_match_the_golden_file(suite_name, update_golden):
    path = GOLDEN / f"{suite_name}.json"
    content = orjson.dumps(sent_specs(suite_name), option=CANONICAL_JSON)
    if update_golden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    assert path.exists(), f"no golden file {path}; create it with: pytest {__file__} --update-golden"
    assert content == path.read_bytes(), (
        f"the tool specs of {suite_name} changed; review the diff, then: pytest {__file__} --update-golden"
    )


def test_there_is_no_golden_file_of_a_suite_that_is_gone():
    assert sorted(path.stem for path in GOLDEN.glob("*.json")) == SHIPPED
