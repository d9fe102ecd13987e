"""The crafting report tables on real episodes: the planner is perfect, the random agent's numbers match a hand
count from its event logs, error episodes are counted apart, undefined ratios show as '-', and the tables come
out of ``discogym report --json``."""

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from discogym.core import AgentOptions, Episode, Outcome, ReportTable, Score, Task, Usage
from discogym.core.reporting.report_tables import table_markdown
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.runner import plan_episode
from discogym.interfaces.cli import app
from discogym.suites.crafting.generate import complexity_split
from discogym.suites.crafting.report import crafting_tables
from discogym.suites.crafting.suite import suite

TITLES = [
    "crafting: overview",
    "crafting: success rate by difficulty and recipe type",
    "crafting: plan length and extra actions",
    "crafting: impossible-task detection",
    "crafting: tool use per episode",
]


def play(agent: str | AgentOptions, condition: str, tasks: list[Task] | None = None, seed: int = 0) -> list[Episode]:
    """Play ``agent`` on ``tasks`` (default: all of test.small)."""
    options = AgentOptions(name=agent) if isinstance(agent, str) else agent
    return [
        play_episode(suite, plan_episode("crafting", task, suite.condition(condition), options, 0, seed))[0]
        for task in (suite.tasks("test.small") if tasks is None else tasks)
    ]


@pytest.fixture(scope="module")
def planner_episodes() -> list[Episode]:
    return play("planner", "mst-se-i")


@pytest.fixture(scope="module")
def random_episodes() -> list[Episode]:
    tasks = suite.tasks("test.small")
    return play("random", "mst-se-i", tasks[:14] + tasks[-6:], seed=3)  # 14 easy tasks, 6 impossible ones


def tables_by_title(episodes: list[Episode]) -> dict[str, ReportTable]:
    tables = crafting_tables(episodes)
    assert [table.title for table in tables] == TITLES
    return {table.title.removeprefix("crafting: ").split(" ")[0]: table for table in tables}


def row(table: ReportTable, agent: str, condition: str = "mst-se-i") -> dict[str, Any]:
    matches = [r for r in table.rows if r[0] == agent and r[2] == condition]
    assert len(matches) == 1, table.rows
    return dict(zip(table.columns, matches[0], strict=True))


def test_the_planner_succeeds_everywhere_with_zero_extra_actions_and_perfect_impossible_f1(planner_episodes):
    tables = tables_by_title(planner_episodes)
    impossible = sum(bool(e.task.ground_truth["impossible"]) for e in planner_episodes)
    assert 0 < impossible < len(planner_episodes)
    overview = row(tables["overview"], "planner")
    assert overview["episodes"] == 117 and overview["errors"] == 0 and overview["success rate"] == 1.0
    assert overview["input tokens / ep"] == 0.0 and overview["cost usd"] == 0.0
    success = row(tables["success"], "planner")
    assert success["all"] == "1.000 (n=117)" and success["impossible"] == f"1.000 (n={impossible})"
    counts = [int(str(success[name]).split("n=")[1].rstrip(")")) for name in ("easy", "medium", "hard", "impossible")]
    assert sum(counts) == 117 and all(counts)
    assert all(str(success[name]).startswith("1.000 (n=") for name in ("smelting", "shapeless", "shaped", "mixed"))
    plan = row(tables["plan"], "planner")
    assert plan["solved possible"] == 117 - impossible
    assert plan["extra actions"] == 0.0 and plan["actions"] == plan["planner actions"] > plan["planner recipes"]
    detection = row(tables["impossible-task"], "planner")
    assert detection["impossible tasks"] == detection["declared"] == detection["true positives"] == impossible
    assert detection["precision"] == detection["recall"] == detection["F1"] == 1.0
    tools = row(tables["tool"], "planner")
    assert tools["impossible"] == pytest.approx(impossible / 117)
    assert tools["think"] == tools["search"] == tools["invalid"] == tools["no-effect"] == 0.0


def hand_success(episode: Episode) -> bool:
    wanted = "declared_impossible" if episode.task.ground_truth["impossible"] else "crafted"
    return episode.outcome.termination == wanted


def hand_actions(episode: Episode) -> int:
    return sum(event.call.tool in ("move", "smelt") and event.result.ok for event in episode.events)


def hand_difficulty(episode: Episode) -> str:
    truth = episode.task.ground_truth
    return complexity_split(int(str(truth["complexity_bin"])))


def rate_cell(members: list[Episode]) -> str:
    if not members:
        return "- (n=0)"
    return f"{sum(map(hand_success, members)) / len(members):.3f} (n={len(members)})"


def test_the_random_agents_numbers_match_a_hand_count_of_its_logs(random_episodes, planner_episodes):
    tables = tables_by_title(random_episodes)
    episodes = random_episodes
    successes = [hand_success(e) for e in episodes]
    assert 0 < sum(successes) < len(episodes), "the sample should mix successes and failures"
    assert row(tables["overview"], "random")["success rate"] == pytest.approx(sum(successes) / 20)

    success = row(tables["success"], "random")
    assert success["all"] == rate_cell(episodes)
    for name in ("easy", "medium", "hard", "impossible"):
        assert success[name] == rate_cell([e for e in episodes if hand_difficulty(e) == name]), name
    for name in ("smelting", "shapeless", "shaped", "mixed"):
        assert success[name] == rate_cell([e for e in episodes if e.task.ground_truth["recipe_type"] == name]), name

    planner_length = {e.key.task: hand_actions(e) for e in planner_episodes}
    solved = [e for e in episodes if hand_success(e) and not e.task.ground_truth["impossible"]]
    plan = row(tables["plan"], "random")
    assert plan["solved possible"] == len(solved) > 0
    assert plan["actions"] == pytest.approx(sum(map(hand_actions, solved)) / len(solved))
    assert plan["planner actions"] == pytest.approx(sum(planner_length[e.key.task] for e in solved) / len(solved))
    extra = sum(hand_actions(e) - planner_length[e.key.task] for e in solved) / len(solved)
    assert plan["extra actions"] == pytest.approx(extra)

    truth = [bool(e.task.ground_truth["impossible"]) for e in episodes]
    declared = [e.outcome.termination == "declared_impossible" for e in episodes]
    hits = sum(t and d for t, d in zip(truth, declared, strict=True))
    assert sum(declared) > 0 and sum(truth) > 0
    precision, recall = hits / sum(declared), hits / sum(truth)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    detection = row(tables["impossible-task"], "random")
    assert (detection["impossible tasks"], detection["declared"], detection["true positives"]) == (
        sum(truth), sum(declared), hits
    )  # fmt: skip
    assert detection["precision"] == pytest.approx(precision) and detection["recall"] == pytest.approx(recall)
    assert detection["F1"] == pytest.approx(f1)

    tools = row(tables["tool"], "random")
    assert tools["steps"] == pytest.approx(sum(len(e.events) for e in episodes) / 20)
    for name in ("think", "search", "impossible"):
        calls = sum(ev.call.tool == name and ev.result.ok for e in episodes for ev in e.events)
        assert tools[name] == pytest.approx(calls / 20), name
    assert tools["invalid"] == pytest.approx(sum(not ev.result.ok for e in episodes for ev in e.events) / 20)
    no_effect = sum(ev.result.ok and ev.result.data.get("applied") is False for e in episodes for ev in e.events)
    assert tools["no-effect"] == pytest.approx(no_effect / 20)


def test_a_clumsy_transcript_shows_in_the_counts_and_the_extra_actions(planner_episodes, tmp_path):
    first = planner_episodes[0]  # TEST0487: smelt the coal ore in [I6], one action for the planner
    assert first.key.task == "TEST0487" and hand_actions(first) == 1
    calls = [
        {"tool": "think", "args": {"thought": "coal comes from coal ore"}},
        {"tool": "search", "args": {"item": "coal"}},
        {"tool": "move", "args": {"slot_from": "[I3]", "slot_to": "[A1]", "quantity": 1}},  # [I3] is empty
        {"tool": "move", "args": {"slot_from": "[I6]", "slot_to": "[0]", "quantity": 1}},  # rejected
        first.events[0].call.model_dump(mode="json"),
    ]
    transcript = tmp_path / "clumsy.json"
    transcript.write_text(json.dumps(calls), encoding="utf-8")
    options = AgentOptions(name="replay", options={"transcript": str(transcript)})
    episodes = play(options, "mst-se-i", [first.task])
    assert episodes[0].outcome.termination == "crafted"
    tables = tables_by_title(episodes)
    agent = "replay[transcript=" + str(transcript) + "]"
    assert row(tables["plan"], agent) == {
        "agent": agent, "model": "-", "condition": "mst-se-i", "solved possible": 1, "actions": 2.0,
        "planner actions": 1.0, "extra actions": 1.0, "planner recipes": 1.0,
    }  # fmt: skip
    tools = row(tables["tool"], agent)
    assert [tools[name] for name in ("steps", "think", "search", "impossible", "invalid", "no-effect")] == [
        5.0, 1.0, 1.0, 0.0, 1.0, 1.0
    ]  # fmt: skip


def errored(episode: Episode, agent: str | None = None) -> Episode:
    """The episode as if a bug had stopped it after spending 100 + 10 tokens and 0.25 dollars."""
    usage = Usage(input_tokens=100, output_tokens=10, cost_usd=0.25)
    key = episode.key if agent is None else episode.key.model_copy(update={"agent": agent})
    outcome = Outcome(status="error", termination="env_error", error="boom", final_usage=usage)
    return episode.model_copy(update={"key": key, "events": [], "outcome": outcome, "score": Score()})


def test_error_episodes_are_counted_apart_and_never_crash(planner_episodes):
    good = planner_episodes[:10]
    episodes = [*good, errored(planner_episodes[10]), errored(planner_episodes[11]), errored(good[0], agent="ghost")]
    tables = tables_by_title(episodes)
    overview = row(tables["overview"], "planner")
    assert (overview["episodes"], overview["errors"], overview["success rate"]) == (12, 2, 1.0)
    assert overview["input tokens / ep"] == pytest.approx(200 / 12) and overview["cost usd"] == pytest.approx(0.5)
    assert row(tables["success"], "planner")["all"] == "1.000 (n=10)"
    assert row(tables["tool"], "planner")["episodes"] == 10
    ghost = {title: row(table, "ghost") for title, table in tables.items()}
    assert (ghost["overview"]["errors"], ghost["overview"]["success rate"]) == (1, None)
    assert ghost["success"]["all"] == ghost["success"]["easy"] == "- (n=0)"
    assert ghost["plan"]["solved possible"] == 0 and ghost["plan"]["extra actions"] is None
    assert ghost["impossible-task"]["F1"] is None and ghost["tool"]["think"] is None
    assert all(table_markdown(table) for table in tables.values())


def test_an_f1_without_impossible_declarations_is_undefined():
    # No impossible tool in this condition: the planner stops instead of declaring.
    episodes = play("planner", "ms", suite.tasks("test.small")[::5])
    detection = row(tables_by_title(episodes)["impossible-task"], "planner", condition="ms")
    assert detection["impossible tasks"] > 0 and detection["declared"] == 0
    assert detection["precision"] is None and detection["F1"] is None and detection["recall"] == 0.0
    markdown = table_markdown(tables_by_title(episodes)["impossible-task"])
    assert markdown.splitlines()[4].endswith("| - | 0.000 | - |")


def test_discogym_report_json_carries_the_crafting_tables(tmp_path):
    runner = CliRunner()
    ran = runner.invoke(app, ["run", "crafting", "--split", "test.small", "--agent", "planner", "--out", str(tmp_path),
                              "--quiet"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    reported = runner.invoke(app, ["report", str(tmp_path), "--json"])
    assert reported.exit_code == 0, reported.output
    document = json.loads(reported.stdout)
    tables = {table["title"]: table for table in document["tables"]}
    assert [title for title in tables if title.startswith("crafting: ")] == TITLES
    detection = tables["crafting: impossible-task detection"]
    assert detection["rows"] == [["planner", "-", "mst-se-i", 117, 20, 20, 20, 1.0, 1.0, 1.0]]
    plan = dict(zip(tables["crafting: plan length and extra actions"]["columns"],
                    tables["crafting: plan length and extra actions"]["rows"][0], strict=True))  # fmt: skip
    assert plan["solved possible"] == 97 and plan["extra actions"] == 0.0
