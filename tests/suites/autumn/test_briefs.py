"""What the agent reads before the test: the paper's interface only. No environment's rules (the catalogue's
description) and no challenge kind in a brief, a task id, the task list or the MCP server's ``list_tasks``."""

import asyncio
import json
import re

import pytest

from discogym.core import Task, get_suite
from discogym.suites.autumn.catalog import CATALOG, env_info
from discogym.suites.autumn.env import WorldTestEnv
from discogym.suites.autumn.tasks import KINDS, generate, task_numbers, task_spec

KIND_WORDS = re.compile(r"\b(mfp|cd|mask\w*|predict\w*|plan\w*|chang\w*|detect\w*|goal\w*|target\w*|option\w*)\b")
# Words of the interface itself (the actions, the grid), which a description may use too.
# Common words the brief itself uses ("rows of colour names", "only", "then"...) are no rule either.
INTERFACE_WORDS = {"click", "left", "right", "down", "grid", "cells", "colour", "shown", "with"} | {
    "that", "only", "from", "then", "rows",
}  # fmt: skip


def rule_keywords(env: str) -> set[str]:
    """The content words of the environment's catalogue description (what a brief must not say)."""
    words = set(re.findall(r"[a-z]+", env_info(env).description.lower()))
    return {w for w in words if len(w) >= 4} - INTERFACE_WORDS


def rule_sentences(env: str) -> list[str]:
    """The description's clauses, lower-cased."""
    return [part.strip() for part in re.split(r"[.;]", env_info(env).description.lower()) if part.strip()]


def assert_says_nothing_of_the_rules_or_the_test(text: str, env: str, *, is_id: bool = False) -> None:
    """No kind word, no clause and no content word of the description. A task id (``ENV-N``, the scheme of
    docs/decisions.md) may hold the environment's name, even where the description uses it (``ball``)."""
    lowered = text.lower()
    assert not KIND_WORDS.search(lowered), KIND_WORDS.search(lowered)
    said = rule_keywords(env) & set(re.findall(r"[a-z]+", lowered)) - ({env} if is_id else set())
    assert not said, said
    assert not [sentence for sentence in rule_sentences(env) if sentence in lowered]


def tasks() -> list[Task]:
    return get_suite("autumn").tasks("all")


def test_the_checks_catch_a_brief_that_states_the_rules_or_names_the_test():
    description = env_info("gravity").description
    with pytest.raises(AssertionError):
        assert_says_nothing_of_the_rules_or_the_test(f"gravity: {description}", "gravity")
    with pytest.raises(AssertionError):
        assert_says_nothing_of_the_rules_or_the_test("blocks fall here", "gravity")
    for named in ("gravity-mfp", "gravity-planning", "gravity-cd", "a masked frame", "the goal"):
        with pytest.raises(AssertionError):
            assert_says_nothing_of_the_rules_or_the_test(named, "gravity")


@pytest.mark.parametrize("env", [info.name for info in CATALOG])
def test_every_environment_s_brief_is_the_interface_only(env):
    suite = get_suite("autumn")
    for task in (t for t in tasks() if task_spec(t).env == env):
        made = suite.make_env(task, suite.condition("text"), seed=0)
        assert isinstance(made, WorldTestEnv)
        brief = made.brief()
        prose, frame = brief.split("\nframe 0:\n")
        assert frame == "\n".join(" ".join(row) for row in made.world.frame)  # the rest is the grid's colours
        for text in (prose, task.brief):
            assert_says_nothing_of_the_rules_or_the_test(text, env)
        for text in (task.id, json.dumps(task.params)):
            assert_says_nothing_of_the_rules_or_the_test(text, env, is_id=True)
        assert "act(action)" in prose and "go_to_test" in prose and "test begins" in prose


def test_the_task_list_shows_no_kind_and_the_numbers_are_not_a_code_for_it():
    listed = tasks()
    assert [t.id for t in listed] == [f"{info.name}-{n}" for info in CATALOG for n in (1, 2, 3)]
    for task in listed:
        assert_says_nothing_of_the_rules_or_the_test(task.id, task_spec(task).env, is_id=True)
        assert_says_nothing_of_the_rules_or_the_test(task.brief, task_spec(task).env)
    kinds_of_first = {task_spec(t).kind for t in listed if t.id.endswith("-1")}
    assert len(kinds_of_first) > 1  # the first task of an environment is not always the same kind
    assert {task_spec(t).kind for t in listed} == set(KINDS)


def test_the_numbers_are_a_seeded_permutation_the_generator_follows():
    numbers = task_numbers("counter", 0)
    assert sorted(numbers.values()) == [1, 2, 3] and numbers == task_numbers("counter", 0)
    assert len({tuple(task_numbers(info.name, 0).values()) for info in CATALOG}) > 1
    packaged = {t.id: task_spec(t) for t in tasks()}
    for kind, number in numbers.items():
        assert packaged[f"counter-{number}"].kind == kind


def test_the_kind_reaches_the_scorer_and_the_reports_through_the_ground_truth():
    for task in tasks():
        assert "kind" not in task.params and "category" not in task.params
        assert task.ground_truth["task"]["challenge"]["kind"] in KINDS
        assert task.ground_truth["category"] == env_info(task_spec(task).env).category


def test_a_generated_subset_uses_the_same_ids():
    made = generate(["counter"]).tasks
    assert [t.id for t in made] == ["counter-1", "counter-2", "counter-3"]
    assert [t.kind for t in made] == sorted(KINDS, key=lambda kind: task_numbers("counter", 0)[kind])


def test_the_mcp_task_list_and_started_brief_show_neither_rules_nor_kind(tmp_path):
    pytest.importorskip("mcp")
    from mcp import Client

    from discogym.interfaces.mcp.server import build_server

    server = build_server(get_suite("autumn"), tmp_path)

    async def look() -> tuple[list[dict[str, str]], str]:
        async with Client(server) as client:
            listing = await client.call_tool("list_tasks", {})
            assert listing.structured_content is not None
            started = await client.call_tool("start_task", {"task_id": "gravity-1"})
            assert started.structured_content is not None
            return listing.structured_content["tasks"], started.structured_content["brief"]

    listed, brief = asyncio.run(look())
    assert len(listed) == len(get_suite("autumn").tasks("all"))
    for entry in listed:
        env = entry["id"].rsplit("-", 1)[0]
        assert_says_nothing_of_the_rules_or_the_test(entry["id"], env, is_id=True)
        assert_says_nothing_of_the_rules_or_the_test(entry["brief"], env)
    assert_says_nothing_of_the_rules_or_the_test(brief.split("\nframe 0:\n")[0], "gravity")
