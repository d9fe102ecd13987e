"""discogym in inspect-ai: the suites as Inspect tasks, an offline model provider, and log conversion both ways."""
