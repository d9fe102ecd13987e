"""The crafting environment through the harness: steps, endings, conditions, determinism, no aliasing."""

from discogym.core.model.tools import UNREADABLE_TOOL
from discogym.suites.crafting import data
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.suite import TOOL_SETS, suite
from discogym.suites.crafting.tasks import slots_of


def make_env(book, slots, target="oak_planks", tools=TOOL_SETS["mst-se-i"], seed=0) -> CraftingEnv:
    return CraftingEnv(book, target, slots, Presentation(tools=tools), seed)


def test_crafting_the_target_ends_the_episode(book):
    env = make_env(book, {10: ("oak_log", 1)})
    assert env.call("move", {"slot_from": "[I1]", "slot_to": "[A1]", "quantity": 1}).data == {"applied": True}
    assert not env.done
    result = env.call("move", {"slot_from": "[0]", "slot_to": "[I2]", "quantity": 1})
    assert result.done and env.termination == "crafted" and " - oak_planks [I2] quantity 4" in result.text
    assert env.outcome() == {"crafted": True, "declared_impossible": False, "steps": 2, "counts": {"move": 2}}


def test_every_message_counts_and_the_episode_stops_after_30_steps(book):
    env = make_env(book, {10: ("oak_log", 1)})
    for _ in range(29):
        assert not env.call("think", {"thought": "hmm"}).done
    last = env.call(UNREADABLE_TOOL, {"reply": "Only select actions from the following: move"})
    assert last.done and env.termination == "step_limit" and not last.ok
    assert env.outcome()["counts"] == {"invalid": 1, "think": 29}


def test_a_move_without_effect_is_a_step_that_changes_nothing(book):
    env = make_env(book, {10: ("oak_log", 1)})
    result = env.call("move", {"slot_from": "[I2]", "slot_to": "[A1]", "quantity": 1})
    assert result.ok and result.data == {"applied": False, "reason": "[I2] is empty"}
    observation = "Craft an item of type: oak_planks\ninventory:\n - oak_log [I1] quantity 1"
    assert result.text == f"nothing moved: [I2] is empty\n{observation}"
    malformed = env.call("move", {"slot_from": "[I1]", "slot_to": "[0]", "quantity": 1})
    assert not malformed.ok and malformed.text == "move: argument 'slot_to' cannot be [0], the output slot"
    in_text = env.parse_text_action("move: from [I1] to [0] with quantity 1")  # Plancraft's syntax: its message
    assert env.call(in_text.tool, in_text.args).text.startswith("Format Error: You cannot move items into [0]")
    assert env.outcome()["counts"] == {"invalid": 2, "move": 1, "no_effect": 1}


def test_impossible_ends_the_episode_and_conditions_limit_the_tools(book):
    env = make_env(book, {10: ("dirt", 1)}, target="diamond_block")
    assert [t.name for t in env.tools()] == ["move", "smelt", "think", "search", "impossible"]
    assert env.call("impossible", {"reason": "no diamonds"}).done and env.termination == "declared_impossible"
    small = make_env(book, {10: ("dirt", 1)}, tools=TOOL_SETS["ms"])
    assert [t.name for t in small.tools()] == ["move", "smelt"]
    assert not small.call("impossible", {"reason": "x"}).ok
    assert (
        "Only select actions from the following: move, smelt"
        in small.call(*_as_call(small.parse_text_action("impossible: no"))).text
    )


def _as_call(call) -> tuple[str, object]:
    return call.tool, call.args


def test_the_random_agents_calls_are_all_accepted(book):
    env = make_env(book, {10: ("oak_log", 2), 11: ("iron_ore", 3), 1: ("stick", 1)})
    calls = env.valid_calls()
    assert {c.tool for c in calls} == {"move", "smelt", "impossible"}
    for call in calls:
        probe = make_env(book, {10: ("oak_log", 2), 11: ("iron_ore", 3), 1: ("stick", 1)})
        result = probe.call(call.tool, call.args)
        assert result.ok and result.data.get("applied", True), (call, result.text)


def test_an_episode_never_changes_its_example_or_past_observations(book):
    example = data.load_split("test")[1]
    before = example.model_dump_json()
    task = suite.tasks("test")[1]
    env = suite.make_env(task, suite.conditions()[0], seed=0)
    first = env.brief()
    env.call("move", {"slot_from": "[I3]", "slot_to": "[A1]", "quantity": 1})
    env.call("move", {"slot_from": "[I5]", "slot_to": "[A2]", "quantity": 3})
    assert example.model_dump_json() == before == data.load_split("test")[1].model_dump_json()
    assert slots_of(task) == example.table()
    assert env.brief() != first and suite.make_env(task, suite.conditions()[0], seed=0).brief() == first


def test_search_results_depend_only_on_the_episode_seed(book):
    runs = []
    for seed in (3, 3, 4):
        env = make_env(book, {10: ("oak_log", 1)}, seed=seed)
        runs.append([env.call("search", {"item": name}).text for name in ("oak_stairs", "chest", "oak_stairs")])
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_picture_conditions_show_the_table_as_a_png_and_only_the_objective_as_text(book):
    import base64
    import io

    from PIL import Image

    task = suite.tasks("test")[1]
    env = suite.make_env(task, suite.condition("image-medium"), seed=0)
    assert env.brief() == "Craft an item of type: cake"
    (first,) = env.brief_images()
    picture = Image.open(io.BytesIO(base64.b64decode(first.data_base64)))
    assert picture.format == "PNG" and picture.size == (352, 332)
    result = env.call("move", {"slot_from": "[I23]", "slot_to": "[A1]", "quantity": 1})
    assert result.text == "Craft an item of type: cake" and len(result.images) == 1
    assert result.images[0] != first  # the sugar cane moved and sugar appeared in [0]
    assert suite.make_env(task, suite.condition("mst-se-i"), seed=0).brief_images() == []
