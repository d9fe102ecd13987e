"""discogym in inspect-ai, offline: each suite as an Inspect task played by the ``discogym`` model provider gives
the episodes ``discogym run`` gives (byte for byte, so the same scores); the suites' tools pass as Inspect tools;
a run exported as an Inspect log opens with Inspect's own reader, and ``discogym report`` reads Inspect logs by
replaying their calls. Skipped, saying so, when inspect-ai is not installed (make install installs it)."""

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from discogym.core import Episode, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from tests.conftest import REPO, cli_environment, run_discogym
from tests.llm.fake_endpoint import Calls, FakeEndpoint, Say

inspect_ai = pytest.importorskip("inspect_ai", reason="inspect-ai is not installed: pip install 'discogym[inspect]'")
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.tool import ToolParams  # noqa: E402

from discogym.interfaces.inspect.episodes import SCORER  # noqa: E402
from discogym.interfaces.inspect.logs import episodes_of_log, export_run  # noqa: E402
from discogym.llm.engine import inspect_schema  # noqa: E402

INSPECT = str(Path(sys.executable).parent / "inspect")  # the command-line program of this environment
# Two tasks of each suite's first split (redstone: two quick ones; autumn: one of each test kind).
TASKS = {
    "petri": ("pilot-v0", ["market-1", "swarm-1"]),
    "crafting": ("val.small.easy", ["VAL0187", "VAL0012"]),
    "redstone": ("official", ["A_simultaneous_lights_L1", "C_sequential_activation_L1"]),
    "autumn": ("all", ["ball-1", "ball-2", "ball-3"]),
}


def episode_files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(RunDir(out).episode_paths())}


def essence(episodes: Iterable[Episode]) -> dict[str, tuple[Any, ...]]:
    """What a log of calls determines of each episode: its key, calls and results, outcome and score (an Inspect log
    does not hold the agent's settings)."""
    return {e.key.file_stem(): (e.events, e.outcome, e.score) for e in episodes}


def run_reference(suite_name: str, out: Path) -> None:
    split, tasks = TASKS[suite_name]
    suite = get_suite(suite_name)
    Runner(suite, RunConfig.for_suite(suite, ["reference"], split=split, tasks=tasks), out).run()


@pytest.mark.parametrize("suite_name", sorted(TASKS))
def test_each_suite_played_in_inspect_gives_the_episodes_discogym_run_gives(suite_name, tmp_path):
    split, tasks = TASKS[suite_name]
    (log,) = inspect_ai.eval(
        f"discogym/{suite_name}",
        model="discogym/reference",
        task_args={"split": split, "tasks": ",".join(tasks), "out": str(tmp_path / "inspect")},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success" and log.samples is not None and len(log.samples) == len(tasks)
    run_reference(suite_name, tmp_path / "run")
    assert episode_files(tmp_path / "inspect") == episode_files(tmp_path / "run")
    progress = {sample.store["EpisodeState:episode"]: sample.store["EpisodeState:steps"] for sample in log.samples}
    assert progress == {e.key.file_stem(): len(e.events) for e in RunDir(tmp_path / "inspect").iter_episodes()}
    scores = {sample.metadata["task"]: sample.scores[SCORER].value for sample in log.samples}
    played = {e.key.task: e.score.value or 0.0 for e in RunDir(tmp_path / "run").iter_episodes()}
    assert scores == played
    assert essence(episodes_of_log(Path(log.location))) == essence(RunDir(tmp_path / "run").iter_episodes())


def test_inspect_eval_runs_offline_from_the_command_line_with_the_reference_score(tmp_path):
    done = subprocess.run(
        [INSPECT, "eval", "discogym/crafting", "--model", "discogym/reference", "-T", "split=val.small.easy",
         "-T", "tasks=VAL0187,VAL0012", "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        capture_output=True, text=True, env=cli_environment(), cwd=REPO, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))  # what inspect view reads
    assert log.eval.task == "discogym/crafting" and log.eval.model == "discogym/reference"
    assert log.results is not None and log.results.scores[0].metrics["mean"].value == 1.0
    assert sorted(str(sample.id) for sample in log.samples or []) == [
        "crafting/VAL0012/mst-se-i",
        "crafting/VAL0187/mst-se-i",
    ]


def without_model_sdks(folder: Path) -> dict[str, str]:
    """The environment of a process in which the model SDKs (openai, anthropic) cannot be imported, as after
    ``pip install 'discogym[inspect]'`` alone."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "import sys\nsys.modules['openai'] = None\nsys.modules['anthropic'] = None\n"
    )
    env = cli_environment()
    env["PYTHONPATH"] = os.pathsep.join([str(folder), env["PYTHONPATH"]])
    return env


def sample_scores(log: Any) -> dict[str, Any]:
    """Each sample's suite score in the log, by sample id."""
    return {str(s.id): (s.scores or {})[SCORER].value for s in log.samples or []}


def test_inspect_score_in_a_new_process_gives_the_logged_scores_without_the_model_sdks(tmp_path):
    env = without_model_sdks(tmp_path / "no-sdks")
    blocked = subprocess.run([sys.executable, "-c", "import openai"], capture_output=True, text=True, env=env)
    assert blocked.returncode != 0 and "ModuleNotFoundError" in blocked.stderr  # the SDKs are out of reach
    played = subprocess.run(
        [INSPECT, "eval", "discogym/petri", "--model", "discogym/reference", "-T", "split=pilot-v0",
         "-T", "tasks=market-1,swarm-1", "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    (path,) = (tmp_path / "logs").glob("*.eval")
    logged = sample_scores(read_eval_log(str(path)))
    assert len(logged) == 2 and all(isinstance(value, float) and value > 0 for value in logged.values())
    rescored_path = tmp_path / "rescored.eval"
    rescored = subprocess.run(
        [INSPECT, "score", str(path), "--action", "overwrite", "--output-file", str(rescored_path),
         "--display", "none"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert rescored.returncode == 0, rescored.stderr
    log = read_eval_log(str(rescored_path))
    assert log.status == "success"
    assert sample_scores(log) == logged


def test_a_run_exported_as_an_inspect_log_opens_and_reports_the_same_scores(tmp_path):
    run_reference("autumn", tmp_path / "run")
    done = run_discogym("export-inspect", str(tmp_path / "run"), str(tmp_path / "logs"))
    assert done.returncode == 0, done.stderr
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.task == "discogym/autumn" and log.samples is not None and len(log.samples) == 3
    messages = log.samples[0].messages
    assert [m.role for m in messages[:4]] == ["system", "user", "assistant", "tool"]
    assert essence(episodes_of_log(path)) == essence(RunDir(tmp_path / "run").iter_episodes())
    report = run_discogym("report", str(path), "--json")
    assert report.returncode == 0, report.stderr
    assert '"episodes": 3' in report.stdout.replace(" ", "").replace('"episodes":3', '"episodes": 3')


def test_a_log_whose_results_disagree_with_the_environment_is_refused(tmp_path):
    run_reference("crafting", tmp_path / "run")
    (path,) = export_run(tmp_path / "run", tmp_path / "logs")
    log = read_eval_log(str(path))
    assert log.samples is not None
    tool_message = next(m for m in log.samples[0].messages if m.role == "tool")
    tool_message.content = "something the environment never said"
    inspect_ai.log.write_eval_log(log, str(path))
    report = run_discogym("report", str(path))
    assert report.returncode != 0 and "gave another result than the log's" in report.stderr
    assert "Traceback" not in report.stderr
    not_a_log = tmp_path / "x.eval"
    not_a_log.write_text("hello")
    refused = run_discogym("report", str(not_a_log))
    assert refused.returncode != 0 and "is not an Inspect log" in refused.stderr


@pytest.mark.parametrize("suite_name", sorted(TASKS))
def test_every_tool_of_every_condition_is_a_valid_inspect_tool(suite_name):
    suite = get_suite(suite_name)
    task = suite.tasks(TASKS[suite_name][0])[0]
    for condition in suite.conditions():
        for spec in suite.make_env(task, condition, 0).tool_specs():
            schema = inspect_schema(spec.parameters)
            assert "$ref" not in str(schema) and "$defs" not in schema
            params = ToolParams.model_validate(schema)
            assert all(param.description for param in params.properties.values()), (condition.name, spec.name)


def test_a_model_of_another_provider_plays_through_its_own_client(tmp_path, monkeypatch):
    """Inspect's OpenAI-compatible provider against the fake endpoint: the model's tool call reaches the
    environment, its tokens are counted, and the episode is keyed as agent ``inspect`` with the model's name."""
    monkeypatch.setenv("FAKE_API_KEY", "not-a-key")
    with FakeEndpoint() as endpoint:
        endpoint.script.extend(
            [Calls([("submit", '{"parameter": "price_impact", "direction": "up"}')]), Say("submitted")]
        )
        (log,) = inspect_ai.eval(
            "discogym/petri",
            model="openai-api/fake/tiny",
            model_base_url=endpoint.url,
            task_args={"split": "pilot-v0", "tasks": "market-1", "out": str(tmp_path / "run")},
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log.status == "success" and log.samples is not None
    (episode,) = RunDir(tmp_path / "run").iter_episodes()
    assert (episode.key.agent, episode.key.model) == ("inspect", "openai-api/fake/tiny")
    assert [event.call.tool for event in episode.events] == ["submit"] and episode.score.success
    assert episode.usage().input_tokens > 0
    assert log.samples[0].scores[SCORER].value == episode.score.value == 50.0  # solved, no experiments


def test_an_inspect_limit_ends_the_episode_which_is_still_recorded_and_scored(tmp_path):
    (log,) = inspect_ai.eval(
        "discogym/autumn",
        model="discogym/reference",
        task_args={"split": "all", "tasks": "ball-3", "out": str(tmp_path / "run")},  # planning: many steps
        message_limit=6,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    (sample,) = log.samples or []
    (episode,) = RunDir(tmp_path / "run").iter_episodes()
    assert episode.outcome.termination == "turn_limit" and 1 <= len(episode.events) <= 3
    assert sample.scores[SCORER].value == (episode.score.value or 0.0)
    assert sample.store["EpisodeState:termination"] == "turn_limit"
    (replayed,) = episodes_of_log(Path(log.location))
    assert essence([replayed]) == essence([episode])
