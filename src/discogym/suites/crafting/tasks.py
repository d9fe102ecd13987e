"""crafting's task model: a task of Plancraft's dataset (:class:`~discogym.suites.crafting.data.Example`, loaded
by :mod:`discogym.suites.crafting.data`) as a harness Task and back: :func:`task_of`, :func:`task_spec`, and the
starting table the agent sees, :func:`slots_of`."""

from discogym.core import Task, UserError
from discogym.suites.crafting import data
from discogym.suites.crafting.recipes import RecipeBook, recipe_book
from discogym.suites.crafting.state import Stack, slot_name, slots_from_entries


def recipe_type(book: RecipeBook, example: data.Example) -> str:
    """Plancraft's recipe type of an example: the kinds of recipe its optimal path's items have, or mixed."""
    if example.optimal_path is None:
        return "impossible"
    kinds = {recipe.kind for item in example.optimal_path for recipe in book.by_result.get(item, ())}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def task_of(example: data.Example, set_name: str) -> Task:
    """An example as a Task: target and slots are visible; the dataset's labels are ground truth."""
    slots = [
        {"slot": slot_name(i), "item": stack.type, "quantity": stack.quantity}
        for i, stack in sorted(example.slotted_inventory.items())
    ]
    truth = example.model_dump(mode="json")
    truth["recipe_type"] = recipe_type(recipe_book(), example)
    return Task(
        id=example.id,
        suite="crafting",
        split=set_name,
        brief=f"craft {example.target}",
        params={"target": example.target, "slots": slots},
        ground_truth=truth,
    )


def slots_of(task: Task) -> dict[int, Stack]:
    """The task's starting table."""
    entries = task.params["slots"]
    assert isinstance(entries, list)
    try:
        return slots_from_entries(entries)
    except ValueError as error:
        raise UserError(f"task {task.id}: {error}") from None


def task_spec(task: Task) -> data.Example:
    """The dataset's example behind a harness Task (kept in its ground truth)."""
    return data.Example.model_validate(task.ground_truth)
