"""Checks of a suite: the conformance check behind `discogym check-suite`."""
