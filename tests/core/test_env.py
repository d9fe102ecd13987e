"""Environments: tool validation, clear errors for malformed calls, limits enforced inside."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

from discogym.core import Env, Limits, ToolArgs, ToolResult, tool
from tests.core.toy_suite import DigitEnv, suite


def make_env(condition: str = "plain", task_index: int = 0) -> DigitEnv:
    task = suite.tasks("dev")[task_index]
    env = suite.make_env(task, suite.condition(condition), seed=7)
    assert isinstance(env, DigitEnv)
    return env


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("teleport", {}, "unknown tool 'teleport'; available tools: probe, roll, submit"),
        (None, {}, "unknown tool None"),
        ("probe", "not json", "arguments are not valid JSON"),
        ("probe", [1, 2], "arguments must be a JSON object, got list"),
        ("probe", {"n": "seven"}, "argument 'n': Input should be a valid integer"),
        ("probe", {"n": 42}, "argument 'n': Input should be less than or equal to 9"),
        ("probe", {"n": 3, "extra": True}, "argument 'extra': unknown argument"),
        ("probe", {}, "argument 'n': Field required"),
        ("probe", "[" * 100_000, "arguments are nested too deeply"),
    ],
)
def test_malformed_call_gets_a_clear_error_and_the_episode_goes_on(name, args, expected):
    env = make_env()
    result = env.call(name, args)
    assert not result.ok
    assert result.error is not None and expected in result.error
    assert result.text.startswith("error: ")
    assert not env.done
    assert env.call("probe", {"n": 5}).ok
    assert env.steps == 2


def test_arguments_may_come_as_a_json_string():
    env = make_env()
    assert env.call("probe", '{"n": 3}').ok
    assert env.call("roll", "").ok
    assert env.call("roll", None).ok


def test_tool_error_becomes_an_error_result():
    env = make_env()
    env.call("submit", {"n": 1})
    assert env.done
    refused = env.call("submit", {"n": 2})
    assert not refused.ok and "episode is over" in (refused.error or "")
    assert env.steps == 1  # calls after the end are refused without counting


def test_step_limit_ends_the_episode_and_says_so():
    env = make_env()
    results = [env.call("probe", {"n": 0}) for _ in range(20)]
    assert env.done and env.termination == "step_limit"
    assert results[-1].done and "step limit of 20 calls reached" in results[-1].text
    assert not any(r.done for r in results[:-1])


def test_tools_follow_the_condition():
    assert [t.name for t in make_env("plain").tool_specs()] == ["probe", "roll", "submit"]
    assert [t.name for t in make_env("buggy").tool_specs()] == ["probe", "roll", "submit", "explode", "stash", "garble"]


def test_tool_specs_carry_json_schemas_from_the_argument_models():
    spec = next(t for t in make_env().tool_specs() if t.name == "probe")
    assert spec.description == "Compare a digit with the hidden one."
    assert spec.parameters["properties"]["n"] == {
        "description": "a digit from 0 to 9",
        "maximum": 9,
        "minimum": 0,
        "type": "integer",
    }
    assert spec.parameters["required"] == ["n"]
    assert spec.parameters["additionalProperties"] is False


def test_valid_calls_enumerate_finite_argument_domains():
    calls = make_env().valid_calls()
    assert [c.tool for c in calls].count("probe") == 10
    assert [c.tool for c in calls].count("submit") == 10
    assert next(c for c in calls if c.tool == "roll").args == {}
    assert all(make_env().call(c.tool, c.args).ok for c in calls)


class SlowArgs(ToolArgs):
    seconds: float = Field(ge=0)


class SlowEnv(Env):
    limits = Limits(max_steps=5, call_timeout_s=0.2)

    def brief(self) -> str:
        return "wait"

    @tool(SlowArgs)
    def wait(self, args: SlowArgs) -> ToolResult:
        """Sleep."""
        time.sleep(args.seconds)
        return ToolResult(text="done")


def test_a_call_over_its_wall_clock_cap_is_stopped_and_ends_the_episode():
    env = SlowEnv()
    assert env.call("wait", {"seconds": 0.0}).ok
    started = time.perf_counter()
    result = env.call("wait", {"seconds": 5.0})
    assert time.perf_counter() - started < 2.0  # interrupted, not waited out
    assert result.error == "a tool call exceeded its wall-clock cap of 0.2 s; it was stopped and the episode is over"
    assert result.done and env.termination == "call_time_limit"


@pytest.mark.parametrize("limits", [{"max_steps": 0}, {"call_timeout_s": 0}, {"call_timeout_s": -1.0}])
def test_limits_must_be_positive(limits):
    with pytest.raises(ValueError, match="greater than"):
        Limits(**limits)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.one_of(st.sampled_from(["probe", "submit", "roll", "explode"]), st.text(max_size=10), st.none()),
    args=st.one_of(json_values, st.dictionaries(st.just("n"), json_values, max_size=1)),
)
def test_no_tool_call_crashes_the_environment(name, args):
    env = make_env()
    result = env.call(name, args)
    assert isinstance(result, ToolResult)
    assert result.ok or result.error


class LoudDigitEnv(DigitEnv):
    def probe(self, args):
        return ToolResult(text=f"PROBED {args.n}")


def test_a_subclass_may_override_a_tool_method_without_redeclaring_it():
    env = LoudDigitEnv(suite.tasks("dev")[0], suite.condition("plain"), seed=0)
    assert env.call("probe", {"n": 2}).text == "PROBED 2"
    assert env.call("probe", {"n": 12}).error == "invalid arguments for tool 'probe': argument 'n': " + (
        "Input should be less than or equal to 9"
    )
