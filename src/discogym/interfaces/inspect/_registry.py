"""What Inspect registers from discogym (entry point ``inspect_ai``): a task ``discogym/NAME`` for every suite,
plugin suites included (``discogym/petri``, ``discogym/crafting``, ...), and the model provider ``discogym``."""

from discogym.interfaces.inspect.provider import DiscogymAgentAPI
from discogym.interfaces.inspect.tasks import suite_tasks

TASKS = suite_tasks()

__all__ = ["TASKS", "DiscogymAgentAPI"]
