"""Export the planner's trajectories for fine-tuning: one chat-format conversation per example, in Plancraft's
text protocol, exactly as the ``llm`` agent sees a task in ``mode=suite`` (docs/crafting.md, "Export for
fine-tuning")."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from discogym.core import Condition, Task, Termination, UserError
from discogym.suites.crafting import data
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.planner import PlanError, make_plan
from discogym.suites.crafting.recipes import recipe_book
from discogym.suites.crafting.suite import suite
from discogym.suites.crafting.tasks import slots_of

IMPOSSIBLE_REASON = "no plan reaches the target"  # what the planner agent says, too
ENV_SEED = 0  # only the oracle search draws from it, and the planner never searches


def text_condition(name: str | None) -> Condition:
    """The condition named ``name`` (the suite's default when None); only text conditions have one text."""
    conditions = suite.conditions()
    if name is None:
        return conditions[0]
    found = next((condition for condition in conditions if condition.name == name), None)
    text_names = [c.name for c in conditions if Presentation.model_validate(c.params).observation == "text"]
    if found is None or found.name not in text_names:
        raise UserError(
            f"crafting: export-sft needs a text condition, not {name!r}; conditions: {', '.join(text_names)}"
        )
    return found


def conversation(task: Task, condition: Condition) -> dict[str, Any] | None:
    """The planner's episode on ``task`` as ``{"id", "messages"}``, replayed in the environment; None when the
    episode would not succeed (no plan for a possible task, a plan for an impossible one, or a plan that does not
    craft the target), or for an impossible task under a condition without ``impossible``."""
    env = suite.make_env(task, condition, ENV_SEED)
    assert isinstance(env, CraftingEnv)
    messages: list[dict[str, str]] = [
        {"role": "system", "content": env.text_prompt()},
        {"role": "user", "content": env.brief()},
    ]
    try:
        plan = make_plan(recipe_book(), str(task.params["target"]), slots_of(task))
    except PlanError:
        return None
    impossible = bool(task.ground_truth["impossible"])
    if plan is None:
        if not impossible or "impossible" not in env.presentation.tools:
            return None
        action = f"impossible: {IMPOSSIBLE_REASON}"
        messages.append({"role": "assistant", "content": action})
        env.call("impossible", env.parse_text_action(action).args)
        return {"id": task.id, "messages": messages} if env.termination == Termination.DECLARED_IMPOSSIBLE else None
    if impossible:
        return None
    for step in plan.actions:
        if env.done:
            return None
        action = step.text()
        messages.append({"role": "assistant", "content": action})
        call = env.parse_text_action(action)
        result = env.call(call.tool, call.args)
        if not result.ok or not result.data.get("applied"):
            return None
        if env.done:
            break
        messages.append({"role": "user", "content": result.text})
    return (
        {"id": task.id, "messages": messages}
        if env.outcome()["crafted"] and env.termination == Termination.CRAFTED
        else None
    )


def conversations(split: str, condition: Condition, limit: int | None = None) -> Iterator[dict[str, Any] | Task]:
    """Each task of ``split`` in id order (the first ``limit``): its conversation, or the task when it has none."""
    if split not in data.SPLITS:
        raise UserError(f"crafting has no split {split!r}; splits: {', '.join(data.SPLITS)}")
    tasks = sorted(suite.tasks(split), key=lambda task: task.id)
    return _conversations(tasks if limit is None else tasks[:limit], condition)


def _conversations(tasks: list[Task], condition: Condition) -> Iterator[dict[str, Any] | Task]:
    for task in tasks:
        found = conversation(task, condition)
        yield task if found is None else found


def export(split: str, out: Path, condition_name: str | None = None, limit: int | None = None) -> tuple[int, list[str]]:
    """Write the conversations of ``split`` to ``out`` as JSON lines; how many, and the ids left out."""
    condition = text_condition(condition_name)
    items = conversations(split, condition, limit)
    written = 0
    skipped: list[str] = []
    with out.open("w", encoding="utf-8", newline="\n") as stream:  # opened first: an unwritable --out fails at once
        for item in items:
            if isinstance(item, Task):
                skipped.append(item.id)
                continue
            stream.write(json.dumps(item, ensure_ascii=False) + "\n")
            written += 1
    return written, skipped
