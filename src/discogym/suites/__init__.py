"""The benchmarks. Each lives in its own sub-package and registers its Suite through the
``discogym.suites`` entry point group in pyproject.toml; no suite imports another."""
