"""Shared fixtures of the crafting tests: the recipe book of the pinned Plancraft wheel (fetched on first use)."""

import pytest

from discogym.suites.crafting.recipes import RecipeBook, recipe_book


@pytest.fixture(scope="session")
def book() -> RecipeBook:
    return recipe_book()
