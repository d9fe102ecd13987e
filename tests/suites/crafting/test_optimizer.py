"""The action-level optimizer: the planner's recipes in fewer actions, every sequence played in the environment."""

from discogym.core.running.storage import RunDir
from discogym.suites.crafting import data
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.optimizer import optimize, optimize_actions, play
from discogym.suites.crafting.planner import PlannedAction, make_plan
from discogym.suites.crafting.recipes import RecipeBook
from discogym.suites.crafting.state import Stack
from discogym.suites.crafting.tasks import slots_of
from tests.conftest import run_discogym


def _slots(example: data.Example) -> dict[int, Stack]:
    return example.table()


def _crafts_in_env(book: RecipeBook, target: str, slots: dict[int, Stack], actions: tuple[PlannedAction, ...]) -> bool:
    env = CraftingEnv(book, target, slots, Presentation(), seed=0)
    for step in actions:
        assert not env.done
        result = env.call(step.action, step.args())
        assert result.ok and result.data["applied"], (target, step.text())
    return env.done and env.outcome()["crafted"]


def test_optimized_sequences_craft_the_target_and_are_never_longer(book):
    shorter = 0
    for example in data.load_split("test.small"):
        if example.impossible:
            continue
        slots = _slots(example)
        result = optimize(book, example.target, slots)
        assert result is not None, example.id
        assert len(result.plan.recipes) == example.optimal_path_length, example.id
        assert len(result.actions) <= len(result.decomposition), example.id
        assert _crafts_in_env(book, example.target, slots, result.actions), example.id
        shorter += len(result.actions) < len(result.decomposition)
    assert shorter >= 10


def test_the_optimizer_is_deterministic(book):
    for example in data.load_split("test.small")[:40]:
        if example.impossible:
            continue
        slots = _slots(example)
        first, second = optimize(book, example.target, slots), optimize(book, example.target, slots)
        assert first is not None and second is not None
        assert first.actions == second.actions


def test_a_crafted_output_goes_straight_into_the_next_recipes_grid(book):
    slots = {10: ("stone_bricks", 3)}
    plan = make_plan(book, "chiseled_stone_bricks", slots)
    assert plan is not None and plan.path == ["stone_brick_slab", "chiseled_stone_bricks"]
    actions = optimize_actions(book, "chiseled_stone_bricks", slots, plan.actions)
    assert len(actions) < len(plan.actions)
    assert any(step.source == 0 and step.target in range(1, 10) for step in actions)
    assert play(book, "chiseled_stone_bricks", slots, actions) == len(actions)


def test_smelts_go_straight_into_the_grid(book):
    slots = {10: ("iron_ore", 9)}
    plan = make_plan(book, "iron_block", slots)
    assert plan is not None and len(plan.recipes) == 10 and len(plan.actions) == 19
    actions = optimize_actions(book, "iron_block", slots, plan.actions)
    assert len(actions) == 10
    assert all(step.target in range(1, 10) for step in actions if step.action == "smelt")
    assert _crafts_in_env(book, "iron_block", slots, actions)


def test_the_optimizer_agent_solves_test_small_in_the_optimized_actions(tmp_path, book):
    done = run_discogym(
        "run", "crafting", "--split", "test.small", "--agent", "optimizer", "--quiet", "--out", str(tmp_path / "run")
    )
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path / "run").iter_episodes())
    assert episodes and all(e.score.success for e in episodes)
    for episode in episodes:
        if episode.task.ground_truth["impossible"]:
            continue
        result = optimize(book, str(episode.task.params["target"]), slots_of(episode.task))
        assert result is not None
        assert episode.score.components["actions"] == len(result.actions)
        assert episode.score.components["planner_actions"] == len(result.decomposition)
