"""The conformance check: every registered suite passes it, and each check catches the fault it is for."""

import itertools
import json
from typing import Any

import pytest

from discogym.core import Condition, Episode, NoArgs, Score, Task, ToolResult, ToolSpec, all_suites, tool
from discogym.core.checks.conformance import (
    CHECKS,
    UNKNOWN_SPLIT,
    Finding,
    check_suite,
    occurs,
    play_random_episode,
    secret_values,
)
from discogym.core.model.tools import MCP_HARNESS_TOOLS
from tests.core.toy_suite import DigitArgs, DigitEnv, DigitSuite

# The toy suite is a test fixture with a deliberately broken condition: it gets its own tests below.
SUITES = [suite for suite in all_suites() if suite.name != "toy"]


@pytest.mark.parametrize("suite", SUITES, ids=[suite.name for suite in SUITES])
def test_every_registered_suite_conforms(suite):
    findings = check_suite(suite)
    assert findings == [], "\n".join(map(str, findings))


def test_the_mcp_servers_own_tools_are_the_names_core_reserves():
    server = pytest.importorskip("discogym.interfaces.mcp.server")
    assert set(server.HARNESS_TOOLS) == set(MCP_HARNESS_TOOLS)


# Toy suites, each broken in one way. They keep the name "toy", which their tasks carry.


class PlainToy(DigitSuite):
    """The toy without its broken conditions: conforms."""

    def conditions(self) -> list[Condition]:
        return [Condition(name="plain"), Condition(name="pictures", params={"pictures": True})]


def checks_failed(suite: DigitSuite) -> set[str]:
    return {finding.check for finding in check_suite(suite)}


def test_a_conforming_suite_has_no_findings():
    assert check_suite(PlainToy()) == []


def test_a_random_episode_that_ends_in_an_environment_error_is_a_finding():
    findings = check_suite(DigitSuite())  # its third condition's valid_calls raises
    assert {f.check for f in findings} == {"random-episodes"}
    assert "condition 'buggy'" in findings[0].message and "LookupError" in findings[0].message


class ShuffledToy(PlainToy):
    calls = itertools.count()

    def tasks(self, split: str) -> list[Task]:
        tasks = super().tasks(split)
        return tasks if next(self.calls) % 2 == 0 else tasks[::-1]


def test_tasks_in_another_order_the_second_time():
    assert checks_failed(ShuffledToy()) == {"task-order"}


class DuplicateToy(PlainToy):
    def tasks(self, split: str) -> list[Task]:
        tasks = super().tasks(split)
        return [task.model_copy(update={"id": tasks[0].id}) for task in tasks]


def test_duplicate_task_ids():
    assert checks_failed(DuplicateToy()) == {"unique-ids"}


class ForeignToy(PlainToy):
    def tasks(self, split: str) -> list[Task]:
        return [task.model_copy(update={"suite": "other"}) for task in super().tasks(split)]


def test_tasks_that_name_another_suite():
    assert checks_failed(ForeignToy()) == {"task-suite"}


class LenientToy(PlainToy):
    def splits(self) -> list[str]:
        return ["dev", "tiny", "dev"]

    def tasks(self, split: str) -> list[Task]:
        return super().tasks(split) if split in ("dev", "tiny") else []


def test_split_listing_rules():
    messages = [f.message for f in check_suite(LenientToy())]
    assert messages == [
        "split 'dev' is listed more than once",
        f"tasks({UNKNOWN_SPLIT!r}) returned instead of raising UserError",
    ]


class DriftingEnv(DigitEnv):
    opened = itertools.count()

    def brief(self) -> str:
        return f"{super().brief()} (environment number {next(self.opened)})"


class DriftingToy(PlainToy):
    def make_env(self, task: Task, condition: Condition, seed: int) -> DigitEnv:
        return DriftingEnv(task, condition, seed)


def test_environments_that_differ_for_the_same_seed():
    assert checks_failed(DriftingToy()) == {"same-env", "deterministic-episodes"}


class UnseededEnv(DigitEnv):
    calls = itertools.count()

    @tool(NoArgs)
    def roll(self, args: NoArgs) -> ToolResult:
        """Roll a die that ignores the seed."""
        return ToolResult(text=f"rolled {next(self.calls) % 6 + 1}")

    @tool(DigitArgs)
    def submit(self, args: DigitArgs) -> ToolResult:
        """Submit your answer; ends the episode."""
        result = super().submit(args)
        return result.model_copy(update={"text": f"{result.text} (submission number {next(self.calls)})"})


class UnseededToy(PlainToy):
    def make_env(self, task: Task, condition: Condition, seed: int) -> DigitEnv:
        return UnseededEnv(task, condition, seed)


def test_episodes_that_differ_for_the_same_seeds():
    assert checks_failed(UnseededToy()) == {"deterministic-episodes"}


SUBMISSIONS: dict[str, int] = {}


class RememberingEnv(DigitEnv):
    def outcome(self) -> dict[str, Any]:
        if self.submitted is not None:
            SUBMISSIONS[f"{id(self)}"] = self.submitted
        return {}


class SideChannelToy(PlainToy):
    """Scores from what the environment left in memory, not from the episode: a second scoring finds nothing."""

    score_range = (-1.0, 9.0)  # the digits, or -1 for none

    def make_env(self, task: Task, condition: Condition, seed: int) -> DigitEnv:
        return RememberingEnv(task, condition, seed)

    def score(self, episode: Episode) -> Score:
        submitted = SUBMISSIONS.popitem()[1] if SUBMISSIONS else None
        return Score(value=-1.0 if submitted is None else float(submitted))


def test_scores_that_do_not_recompute_from_the_stored_episode():
    findings = check_suite(SideChannelToy())
    assert {f.check for f in findings} == {"rescore"}
    assert "scores {" in findings[0].message


class PercentToy(PlainToy):
    """Scores in percent while it declares the default range of 0 to 1."""

    def score(self, episode: Episode) -> Score:
        return Score(value=100.0 * (super().score(episode).value or 0.0) + 50.0)


def test_scores_outside_the_declared_range():
    findings = check_suite(PercentToy())
    assert {f.check for f in findings} == {"score-range"}
    assert "outside the declared 0 to 1" in findings[0].message
    assert check_suite(type("PercentToyDeclared", (PercentToy,), {"score_range": (0.0, 150.0)})()) == []


SECRET_NOTE = "the digit sits under the rug"
PUBLIC_NOTE = "the digit game, played with probes"


class LeakyEnv(DigitEnv):
    def __init__(self, task: Task, condition: Condition, seed: int) -> None:
        super().__init__(task, condition, seed)
        self.weight = float(task.ground_truth["weight"])

    def brief(self) -> str:
        return f"{super().brief()} Hint: {SECRET_NOTE}. About: {PUBLIC_NOTE}. Digits run from 0 to 9."

    @tool(DigitArgs)
    def probe(self, args: DigitArgs) -> ToolResult:
        """Compare a digit with the hidden one."""
        result = super().probe(args)
        return result.model_copy(update={"data": {**result.data, "weight": self.weight}})


class LeakyToy(PlainToy):
    def tasks(self, split: str) -> list[Task]:
        return [
            task.model_copy(
                update={
                    "params": {"about": PUBLIC_NOTE},
                    "ground_truth": {**task.ground_truth, "note": SECRET_NOTE, "about": PUBLIC_NOTE, "weight": 0.73125},
                }
            )
            for task in super().tasks(split)
        ]

    def make_env(self, task: Task, condition: Condition, seed: int) -> DigitEnv:
        return LeakyEnv(task, condition, seed)


def test_ground_truth_in_a_brief_or_a_result_is_a_leak_and_public_or_short_values_are_not():
    findings = check_suite(LeakyToy())
    assert {f.check for f in findings} == {"ground-truth-leak"}
    messages = "\n".join(f.message for f in findings)
    assert f"the brief under 'plain' shows the ground-truth value {SECRET_NOTE!r}" in messages
    assert "(probe) shows the ground-truth value '0.73125'" in messages
    assert PUBLIC_NOTE not in messages  # in the task's params too: the agent may know it
    assert not any(f"value '{digit}'" in messages for digit in range(10))  # the digit itself is too short to tell


class ClashingEnv(DigitEnv):
    @tool(NoArgs)
    def start_task(self, args: NoArgs) -> ToolResult:
        """Start over."""
        return ToolResult(text="nothing to start")


class ClashingToy(PlainToy):
    def make_env(self, task: Task, condition: Condition, seed: int) -> DigitEnv:
        return ClashingEnv(task, condition, seed)


def test_a_tool_named_like_an_mcp_server_tool():
    findings = check_suite(ClashingToy())
    assert [str(f) for f in findings] == ["harness-tools: tool 'start_task' has the name of an MCP server tool"]


class HandWrittenEnv(DigitEnv):
    def tool_specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name=t.name, description=f"``{t.name}``: {t.description}", parameters=t.args_model.model_json_schema()
            )
            for t in self.tools()
        ]


class HandWrittenToy(PlainToy):
    def make_env(self, task: Task, condition: Condition, seed: int) -> DigitEnv:
        return HandWrittenEnv(task, condition, seed)


def test_hand_written_specs_with_titles_docstrings_and_markup():
    messages = [f.message for f in check_suite(HandWrittenToy()) if f.check == "tool-schemas"]
    assert "tool 'probe': its description has developer markup: '``probe``: Compare a digit with the hidden one.'" in (
        messages
    )
    assert "tool 'probe': the argument model has a class title (developers' text): 'DigitArgs'" in messages
    assert "tool 'probe': /properties/n has the title pydantic makes up from its name: 'N'" in messages
    assert "tool 'roll': the argument model has a class description (developers' text): " in "\n".join(messages)
    assert {f.check for f in check_suite(HandWrittenToy())} == {"tool-schemas"}


def test_random_episodes_are_cut_after_the_step_cap():
    suite = PlainToy()
    task, plain = suite.tasks("dev")[0], suite.condition("plain")
    cut = play_random_episode(suite, task, plain, seed=0, max_steps=1)
    assert [event.call.tool for event in cut.events] == ["probe"]
    assert (cut.outcome.status, cut.outcome.termination) == ("completed", "conformance_step_cap")
    assert cut.outcome.agent_message == "the conformance check stops episodes after 1 calls"
    ended = play_random_episode(suite, task, plain, seed=4, max_steps=1)  # its first call submits
    assert [event.call.tool for event in ended.events] == ["submit"] and ended.outcome.termination == "submitted"


def test_numbers_are_matched_whole_and_strings_as_they_are():
    assert occurs("0.12345", "p = 0.12345, q = 2")
    assert not occurs("0.12345", "p = 10.123456")
    assert not occurs("123456", "seed 1234567")
    assert occurs("a long secret sentence", "so: a long secret sentence.")


def test_which_ground_truth_values_count_as_secrets():
    task = Task(
        id="t-1",
        suite="toy",
        split="dev",
        brief="",
        params={"shown": "a public long string"},
        ground_truth={
            "small": [0, 1, 42, 4000.0, 3.5, 0.25],
            "flags": [True, None],
            "words": ["up", "planning"],
            "distinct": {"float": 0.123456, "int": 1234567, "text": "a long secret sentence"},
            "public": "a public long string",
        },
    )
    assert secret_values(task) == ["0.123456", "1234567", "a long secret sentence"]


def test_check_names_are_documented():
    assert all(isinstance(f, Finding) and f.check in CHECKS for f in check_suite(LeakyToy()))


def test_check_suite_on_the_command_line(run_cli):
    passed = run_cli("check-suite", "toy", "--episodes", "2")  # plain and slow: both fine
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout == "" and "toy: 12 checks, conforms" in passed.stderr
    failed = run_cli("check-suite", "toy", "--json")  # the third episode plays the buggy condition
    assert failed.returncode == 1
    document = json.loads(failed.stdout)
    assert [f["check"] for f in document["findings"]] == ["random-episodes"]
    assert set(document["checks"]) == set(CHECKS)
    unknown = run_cli("check-suite", "no-such-suite")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "unknown suite" in unknown.stderr
