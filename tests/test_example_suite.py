"""The example suite of docs/writing-a-suite.md runs, conforms, scores from its log, and is shown as it is."""

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_environment, discogym_server, run_discogym

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


def test_the_example_suite_gets_an_inspect_task_without_touching_the_interfaces(tmp_path):
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed: pip install 'discogym[inspect]'")
    from inspect_ai.log import read_eval_log

    done = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", "discogym/hidden-number", "--model",
         "discogym/reference", "-T", "tasks=number-0,number-1", "--log-dir", str(tmp_path), "--display", "none"],
        capture_output=True, text=True, env=cli_environment(**EXAMPLE), cwd=REPO, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.task == "discogym/hidden-number"
    assert sorted(str(s.id) for s in log.samples or []) == [
        "hidden-number/number-0/default",
        "hidden-number/number-1/default",
    ]
    assert all((s.scores or {})["discogym/suite_score"].value == 1.0 for s in log.samples or [])


def test_the_example_suite_gets_its_web_screen_without_touching_the_interfaces(tmp_path):
    pytest.importorskip("fastapi", reason="the web app is not installed: pip install 'discogym[web]'")
    with discogym_server("serve", "--runs", str(tmp_path), **EXAMPLE) as (port, _):
        root = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{root}/screens/hidden-number.js") as answer:
            assert answer.headers["content-type"].startswith("text/javascript")
            assert answer.read() == (REPO / "examples" / "hidden_number_screen.js").read_bytes()
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"{root}/screens/nosuch.js")
        with urllib.request.urlopen(f"{root}/play?suite=hidden-number") as answer:
            assert "find a hidden number" in answer.read().decode()
