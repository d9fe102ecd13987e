"""Fuzzing the task-file readers of crafting (``--split FILE``) and autumn (``--split FILE``): any bytes give
tasks or one UserError; never another exception."""

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discogym.core import UserError
from discogym.suites.autumn.tasks import read_tasks
from discogym.suites.crafting.generate import read_task_file

FUZZ = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
READERS = [read_task_file, read_tasks]
documents = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)


def reads_or_refuses(reader, path) -> None:
    with contextlib.suppress(UserError):
        reader(path)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("text", ["[" * 5000 + "]" * 5000, '{"tasks": ' + "[" * 5000 + "]" * 5000 + "}"])
def test_deep_nesting_is_a_user_error(tmp_path, reader, text):
    path = tmp_path / "deep.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError):  # crafting raised RecursionError
        reader(path)


@pytest.mark.parametrize("reader", READERS)
@FUZZ
@given(data=st.one_of(st.binary(max_size=200), documents.map(lambda d: json.dumps(d).encode())))
def test_any_bytes_are_tasks_or_a_user_error(tmp_path, reader, data):
    path = tmp_path / "tasks.json"
    path.write_bytes(data)
    reads_or_refuses(reader, path)
