"""The wiki condition: generated recipe pages, BM25 search over them, the wiki-planner agent, and a model using it."""

from pathlib import Path

from discogym.core import AgentOptions, Condition, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.recipes import Recipe, RecipeBook
from discogym.suites.crafting.tasks import slots_of
from discogym.suites.crafting.wiki import TOP_K, Wiki, build_wiki, parse_page, split_pages, wiki
from tests.llm.fake_endpoint import FakeEndpoint, Say, conversation_texts


def _shape(recipe: Recipe) -> tuple[object, ...]:
    return (
        recipe.kind,
        recipe.result,
        recipe.count,
        getattr(recipe, "kernel", None),
        getattr(recipe, "variants", None),
        getattr(recipe, "ingredients", None),
    )


def wiki_env(book: RecipeBook, slots: dict[int, tuple[str, int]], target: str = "oak_planks") -> CraftingEnv:
    return CraftingEnv(book, target, slots, Presentation(retrieval="wiki"), 0)


def test_every_item_has_a_page_that_shows_every_recipe_that_makes_it(book):
    pages = wiki()
    assert set(pages.items) == set(book.items) - {"air"}
    for item, text in zip(pages.items, pages.pages, strict=True):
        read = parse_page(text)
        assert read.item == item and read.stack_size == book.stack_size(item)
        assert [_shape(r) for r in read.recipes] == [_shape(r) for r in book.by_result.get(item, ())], item
        assert text.startswith(f"# {item}\n") and "## Used in" in text
    planks = pages.page_of("crafting_table")
    assert "recipe 1: shaped, 2 rows by 2 columns" in planks and "  | a | a |" in planks
    assert "recipe 1: smelt one iron_ore to get 1 iron_ingot" in pages.page_of("iron_ingot")
    assert "shapeless" in pages.page_of("oak_planks") and "crafting_table" in pages.page_of("oak_planks")


def test_search_is_deterministic_and_an_exact_name_finds_its_own_page_first(book):
    pages = wiki()
    assert wiki() is pages  # built once per process
    fresh = build_wiki(book)
    for item in pages.items[::7]:
        found = pages.search(item)
        assert found[0] == item and 1 <= len(found) <= TOP_K  # only pages that match at all
        assert fresh.search(item) == found and pages.answer(item) == fresh.answer(item)
        assert [parse_page(text).item for text in split_pages(pages.answer(item))] == found
    assert pages.search("iron ingot")[0] == "iron_ingot"
    assert pages.answer("qqqq") == "No wiki page matches that search."


def test_ties_go_to_the_lower_page_id():
    class Flat:
        def get_scores(self, tokens: list[str]) -> list[float]:
            return [1.0, 2.0, 1.0, 1.0]

    flat = Wiki(("d", "a", "c", "b"), ("# d", "# a", "# c", "# b"), Flat(), 0.0)
    assert flat.search("anything") == ["a", "d", "c"]


def test_the_wiki_search_holds_no_ground_truth_and_is_the_same_for_every_task(book):
    suite = get_suite("crafting")
    tasks = suite.tasks("test.small")[:12]
    for task in tasks:
        env = wiki_env(book, slots_of(task), str(task.params["target"]))
        text = env.call("search", {"item": task.params["target"]}).text
        assert text == wiki().answer(str(task.params["target"]))
        assert task.id not in text and "impossible" not in text.lower() and "optimal" not in text.lower()
        assert "quantity" not in text  # nothing about the table


def test_malformed_search_arguments_get_a_clear_error(book):
    env = wiki_env(book, {10: ("oak_log", 1)})
    spec = next(spec for spec in env.tool_specs() if spec.name == "search")
    assert "wiki" in spec.description
    empty = env.call("search", {"item": "  "})
    assert not empty.ok and empty.error == (
        "search: argument 'item' is empty; give an item name (e.g. oak_planks) or words to search for"
    )
    missing = env.call("search", {})
    assert not missing.ok and "item" in (missing.error or "")
    wrong = env.call("search", {"item": 3})
    assert not wrong.ok and "item" in (wrong.error or "")
    extra = env.call("search", {"item": "stick", "k": 10})
    assert not extra.ok and "k" in (extra.error or "")
    assert env.outcome()["counts"] == {"invalid": 4}


def _successes(tmp_path: Path, agent: str) -> dict[str, bool]:
    suite = get_suite("crafting")
    config = RunConfig.for_suite(suite, [agent], split="test.small", conditions=["wiki"])
    Runner(suite, config, tmp_path / agent).run()
    return {e.task.id: bool(e.score.success) for e in RunDir(tmp_path / agent).iter_episodes()}


def test_the_wiki_planner_solves_test_small_at_least_as_often_as_the_planner(tmp_path):
    planner, wiki_planner = _successes(tmp_path, "planner"), _successes(tmp_path, "wiki-planner")
    assert len(wiki_planner) == len(planner) == 117
    assert sum(wiki_planner.values()) >= sum(planner.values())
    (episode, *_) = RunDir(tmp_path / "wiki-planner").iter_episodes()
    assert episode.events[0].call.tool == "search"


def test_the_wiki_planner_needs_the_search_tool(tmp_path):
    suite = get_suite("crafting")
    task = suite.tasks("test.small")[0]
    conditions = ["mst-i", "mst-se-i"]  # no search, and the oracle's
    config = RunConfig.for_suite(suite, ["wiki-planner"], split="test.small", tasks=[task.id], conditions=conditions)
    Runner(suite, config, tmp_path).run()
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert sorted(episode.condition.name for episode in episodes) == sorted(conditions)
    for episode in episodes:
        assert episode.outcome.termination == "config_error"  # a setting refused as the episode started
        assert episode.outcome.error == (
            "UserError: the wiki-planner agent needs the wiki's search tool: use --condition wiki"
        )


def test_a_model_reads_the_wiki_through_its_search(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    suite = get_suite("crafting")
    task = suite.tasks("test.small")[0]
    with FakeEndpoint() as fake:
        fake.script.extend([Say("search: iron_ingot"), Say("impossible: I give up")])
        agent = AgentOptions(
            name="llm",
            model=f"openai-compatible/fake@{fake.url}",
            options={"mode": "suite", "context_window": "128000"},
        )
        config = RunConfig.for_suite(suite, [agent], split="test.small", tasks=[task.id], conditions=["wiki"])
        Runner(suite, config, tmp_path).run()
        texts = conversation_texts(fake.requests[-1].body)
    page = wiki().answer("iron_ingot")
    assert page.startswith("# iron_ingot\n") and page in texts
    assert any("search returns the 3 recipe wiki pages" in t for t in texts)
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [e.call.tool for e in episode.events] == ["search", "impossible"]
    assert episode.events[0].result.text == page
    assert episode.condition.name == "wiki" and isinstance(episode.condition, Condition)
    assert episode.score.components["search_count"] == 1
