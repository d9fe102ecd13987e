"""Reporting: the run report, the table helpers suites build their tables with, plots, cross-checks of
stored episodes, replay views and human baselines."""
