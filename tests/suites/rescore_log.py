"""What the suites' rescore-from-log tests share: runs through the command line, tampering with a stored
episode's cached outcome (``outcome.env``), and ``discogym report --rescore`` through the command line."""

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from discogym.core import Episode, Event, ToolCall, ToolResult, get_suite
from discogym.core.running.episode_loop import score_episode
from discogym.core.running.storage import RunDir
from discogym.interfaces.cli import app

RUNNER = CliRunner()


def run(suite: str, out: Path, *options: str) -> list[Episode]:
    """``discogym run SUITE OPTIONS --out OUT --quiet`` through the command line; the run's episodes."""
    done = RUNNER.invoke(app, ["run", suite, *options, "--out", str(out), "--quiet"])
    assert done.exit_code == 0, done.output
    return list(RunDir(out).iter_episodes())


def copy_run(source: Path, target: Path) -> Path:
    """A copy of a run directory, to tamper with."""
    shutil.copytree(source, target)
    return target


def episode_path(run_dir: Path, task: str) -> Path:
    """The stored file of the run's only episode of ``task``."""
    (path,) = [p for p in RunDir(run_dir).episode_paths() if json.loads(p.read_text())["key"]["task"] == task]
    return path


def tamper(path: Path, **fields: Any) -> None:
    """Overwrite fields of the stored episode's cached outcome, leaving its log alone."""
    document = json.loads(path.read_text(encoding="utf-8"))
    document["outcome"]["env"].update(fields)
    path.write_text(json.dumps(document, indent=2, sort_keys=True), encoding="utf-8")


@dataclass
class Rescored:
    """What ``discogym report RUN --rescore --json`` printed."""

    document: dict[str, Any]
    stderr: str

    def row(self, agent: str) -> dict[str, Any]:
        """The generic table's row of ``agent`` (one condition, no model)."""
        (table,) = [t for t in self.document["tables"] if t["title"] == "All episodes"]
        agent_column = table["columns"].index("agent")
        (row,) = [r for r in table["rows"] if r[agent_column] == agent]
        return dict(zip(table["columns"], row, strict=True))

    def warned(self) -> list[str]:
        """The stderr lines that warn about a cache mismatch."""
        return [line for line in self.stderr.splitlines() if "cached outcome (outcome.env) disagrees" in line]


def rescore(run_dir: Path) -> Rescored:
    """``discogym report RUN_DIR --rescore --json --no-plots`` through the command line."""
    done = RUNNER.invoke(app, ["report", str(run_dir), "--rescore", "--json", "--no-plots"])
    assert done.exit_code == 0, done.output
    return Rescored(json.loads(done.stdout), done.stderr)


def assert_stored_scores_recompute(run_dir: Path) -> None:
    """Every stored episode's score and audit are what its suite recomputes from the file, with no mismatch."""
    episodes = list(RunDir(run_dir).iter_episodes())
    assert episodes
    for episode in episodes:
        rescored = score_episode(get_suite(episode.key.suite), episode)
        assert rescored.score == episode.score, episode.key
        assert rescored.audit == episode.audit, episode.key
        assert rescored.score.components["cache_mismatch"] == [], episode.key
    assert rescore(run_dir).warned() == []


def log(calls: list[tuple[str, Any]], env: Any) -> list[Event]:
    """Make the calls in ``env`` (until it ends the episode) and return them as logged events."""
    events: list[Event] = []
    for tool, args in calls:
        if env.done:
            break
        result: ToolResult = env.call(tool, args)
        events.append(Event(step=len(events) + 1, call=ToolCall(tool=tool, args=args), result=result))
    return events
