"""The crafting suite end to end: the planner on the test split, the CLI commands, and a language model in
Plancraft's own syntax."""

import json

from discogym.core import AgentOptions, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from tests.conftest import run_discogym
from tests.llm.fake_endpoint import FakeEndpoint, Say, conversation_texts


def test_the_planner_solves_every_test_example_and_rerun_files_are_identical(tmp_path):
    for out in ("a", "b"):
        done = run_discogym(
            "run", "crafting", "--split", "test", "--agent", "planner", "--quiet", "--out", str(tmp_path / out)
        )
        assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path / "a").iter_episodes())
    assert len(episodes) == 580 and all(e.score.success for e in episodes)
    possible = [e for e in episodes if not e.task.ground_truth["impossible"]]
    assert len(possible) == 480 and all(e.outcome.termination == "crafted" for e in possible)
    assert all(e.score.components["planner_recipes"] == e.task.ground_truth["optimal_path_length"] for e in possible)
    impossible = [e for e in episodes if e.task.ground_truth["impossible"]]
    assert all(e.outcome.termination == "declared_impossible" and len(e.events) == 1 for e in impossible)
    for path in sorted((tmp_path / "a" / "episodes").glob("*.json")):
        assert path.read_bytes() == (tmp_path / "b" / "episodes" / path.name).read_bytes()


def test_the_data_command_reports_the_counts():
    done = run_discogym("crafting", "data", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["available"] and document["counts"]["shaped"] == 491
    assert document["counts"]["splits"] == {
        "test": 580,
        "val": 570,
        "train": 1145,
        "test.small": 117,
        "val.small": 110,
        "test.small.easy": 100,
        "val.small.easy": 100,
    }


def test_a_wrong_wheel_is_refused_with_its_checksum(tmp_path):
    fake = tmp_path / "plancraft-0.4.9-py3-none-any.whl"
    fake.write_bytes(b"not a wheel")
    done = run_discogym("crafting", "data", "--wheel", str(fake), DISCOGYM_CACHE_DIR=str(tmp_path / "cache"))
    assert done.returncode != 0 and "SHA-256" in done.stderr and "Traceback" not in done.stderr


def test_without_the_data_the_message_says_how_to_provide_it(tmp_path):
    done = run_discogym("crafting", "data", DISCOGYM_CACHE_DIR=str(tmp_path / "empty"))
    assert done.returncode == 0 and "discogym crafting data --wheel PATH" in " ".join(done.stdout.split())


def test_a_person_plays_a_task_in_the_terminal(tmp_path):
    moves = "hello\nmove: from [I23] to [A1] with quantity 1\nmove: from [0] to [I1] with quantity 1\nquit\n"
    done = run_discogym("play", "crafting", "TEST0001", "--out", str(tmp_path), input=moves)
    assert done.returncode == 0, done.stderr
    assert "Craft an item of type: cake" in done.stdout and "Only select actions from the following" in done.stdout
    assert " - sugar [I1] quantity 1" in done.stdout and "no success" in done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [e.call.tool for e in episode.events] == ["(unreadable)", "move", "move"]
    assert episode.outcome.termination == "agent_stopped" and episode.score.success is False


def test_a_model_plays_in_plancrafts_syntax_with_its_prompt(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    suite = get_suite("crafting")
    task = next(t for t in suite.tasks("test") if t.params["target"] == "oak_planks" or t.id == "TEST0001")
    with FakeEndpoint() as fake:
        fake.script.extend(
            [
                Say("I think I should start.\nmove: from [I23] to [A1] with quantity 1"),
                Say("Let me look around"),
                Say("search: cake"),
                Say("impossible: I give up"),
            ]
        )
        agent = AgentOptions(
            name="llm",
            model=f"openai-compatible/fake@{fake.url}",
            options={"mode": "suite", "context_window": "128000"},
        )
        Runner(suite, RunConfig.for_suite(suite, [agent], split="test", tasks=[task.id]), tmp_path).run()
        texts = conversation_texts(fake.requests[-1].body)
    assert texts[0].startswith("You are crafting in Minecraft") and "`impossible: <reason>`" in texts[0]
    assert texts[1].startswith("Craft an item of type: cake\ninventory:\n")
    assert "Only select actions from the following: move, smelt, think, search, impossible" in texts
    assert any(t.startswith("Recipes to craft cake:\nrecipe 1:\n") for t in texts)
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [e.call.tool for e in episode.events] == ["move", "(unreadable)", "search", "impossible"]
    assert episode.outcome.termination == "declared_impossible" and episode.score.success is False
    assert episode.score.components["invalid_count"] == 1


def test_an_mcp_client_gets_the_first_picture_with_the_brief_and_plays_in_pictures(tmp_path):
    import asyncio

    import mcp_types as types
    from mcp import Client

    from discogym.interfaces.mcp.server import build_server

    suite = get_suite("crafting")
    server = build_server(suite, tmp_path, split="test.small")

    async def play() -> None:
        async with Client(server, client_info=types.Implementation(name="eyes", version="1")) as client:
            task_id = suite.tasks("test.small")[0].id
            started = await client.call_tool("start_task", {"task_id": task_id, "condition": "image-low"})
            assert not started.is_error
            text_part, picture = started.content
            assert isinstance(text_part, types.TextContent) and isinstance(picture, types.ImageContent)
            assert picture.mime_type == "image/png"
            moved = await client.call_tool("think", {"thought": "look first"})
            assert [type(part).__name__ for part in moved.content] == ["TextContent"]
            ended = await client.call_tool("impossible", {"reason": "test"})
            assert not ended.is_error

    asyncio.run(play())
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert episode.key.condition == "image-low" and episode.outcome.termination == "declared_impossible"
