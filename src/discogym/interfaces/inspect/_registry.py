"""What Inspect registers from discogym (entry point ``inspect_ai``): ``discogym/petri``, ``discogym/crafting``,
``discogym/redstone``, ``discogym/autumn`` and the model provider ``discogym``."""

from discogym.interfaces.inspect.provider import DiscogymAgentAPI
from discogym.interfaces.inspect.tasks import autumn, crafting, petri, redstone

__all__ = ["DiscogymAgentAPI", "autumn", "crafting", "petri", "redstone"]
