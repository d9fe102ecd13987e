"""The image+perception condition: the picture with the perception module's reading as text, and agents on it."""

import json

import pytest

from discogym.core import AgentOptions, UserError, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.suites.crafting import text
from discogym.suites.crafting.agents import make_planner
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.recipes import RecipeBook
from tests.llm.fake_endpoint import FakeEndpoint, Say, conversation_texts

PERCEPTION = Presentation(observation="image+perception")
# infested_stone_bricks draws the same icon as stone_bricks, so the reading names the plainer item
LOOK_ALIKE = {12: ("infested_stone_bricks", 3), 30: ("oak_log", 2)}


def test_the_observation_is_the_reading_of_the_picture_in_plancrafts_text(book: RecipeBook) -> None:
    env = CraftingEnv(book, "oak_planks", LOOK_ALIKE, PERCEPTION, seed=0)
    assert env.observe() == text.observation("oak_planks", {12: ("stone_bricks", 3), 30: ("oak_log", 2)})
    assert env.observe() != text.observation("oak_planks", LOOK_ALIKE)
    assert len(env.images()) == 1 and env.images()[0].media_type == "image/png"
    assert "perception module" in env.text_prompt() and "perception module" in env.system_prompt()
    result = env.call("move", {"slot_from": "[I21]", "slot_to": "[A1]", "quantity": 1})
    assert " - oak_planks [0] quantity 4" in result.text and len(result.images) == 1


def test_every_resolution_has_its_condition() -> None:
    names = {condition.name: condition.params for condition in get_suite("crafting").conditions()}
    assert names["image+perception"]["resolution"] == "high"
    assert names["image+perception-medium"]["resolution"] == "medium"
    assert names["image+perception-low"]["observation"] == "image+perception"


def test_observations_read_back_into_slots() -> None:
    slots = {0: ("oak_planks", 4), 1: ("oak_log", 1), 45: ("stick", 64)}
    assert text.read_observation(text.observation("oak_planks", slots)) == slots
    assert text.read_observation(text.objective("oak_planks")) is None
    with pytest.raises(ValueError, match="not an inventory line"):
        text.read_observation("Craft an item of type: stick\ninventory:\n - stick [Z9] quantity 1")


def _run(tmp_path, agent: AgentOptions, condition: str, task_ids: list[str]):
    suite = get_suite("crafting")
    config = RunConfig.for_suite(suite, [agent], split="test", tasks=task_ids, conditions=[condition])
    Runner(suite, config, tmp_path).run()
    return {episode.task.id: episode for episode in RunDir(tmp_path).iter_episodes()}


def test_a_planner_reading_the_observation_fails_where_perception_misreads(tmp_path) -> None:
    # TEST0514 crafts mossy_stone_bricks from infested_stone_bricks, which the picture shows as stone_bricks
    reading = AgentOptions(name="planner", options={"table": "observation"})
    episodes = _run(tmp_path / "perception", reading, "image+perception", ["TEST0514", "TEST0000"])
    assert not episodes["TEST0514"].score.success and episodes["TEST0000"].score.success
    episodes = _run(tmp_path / "text", reading, "mst-se-i", ["TEST0514"])
    assert episodes["TEST0514"].score.success


def test_a_planner_reading_an_observation_without_inventory_is_a_clear_error(tmp_path) -> None:
    reading = AgentOptions(name="planner", options={"table": "observation"})
    (episode,) = _run(tmp_path, reading, "image-low", ["TEST0000"]).values()
    assert episode.outcome.error is not None and "lists the inventory" in episode.outcome.error
    with pytest.raises(UserError, match="hints or observation"):
        make_planner(AgentOptions(name="planner", options={"table": "picture"}))


def test_a_model_gets_the_picture_and_the_reading(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    suite = get_suite("crafting")
    task = suite.tasks("test")[0]
    with FakeEndpoint() as fake:
        fake.script.extend([Say("impossible: I give up")])
        agent = AgentOptions(
            name="llm",
            model=f"openai-compatible/fake@{fake.url}",
            options={"mode": "suite", "context_window": "128000"},
        )
        _run(tmp_path, agent, "image+perception-medium", [task.id])
        body = fake.requests[-1].body
    texts = conversation_texts(body)
    env = suite.make_env(task, next(c for c in suite.conditions() if c.name == "image+perception-medium"), 0)
    assert env.brief().startswith("Craft an item of type:") and env.brief() in texts
    assert '"image_url"' in json.dumps(body)
