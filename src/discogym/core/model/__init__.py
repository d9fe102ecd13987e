"""The data model and the objects a suite implements: tasks, tools, environments, agents, episodes and
how they end, suites and their registry, errors, seeds and plain JSON."""
