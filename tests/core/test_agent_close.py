"""Agent.close(): called once when an episode is over, however it ended (the hook agents that hold a process
or a server, such as the agent CLIs, release them with); Agent.settle(): told when the environment ended the
episode, it adds what the agent spent after its last decision."""

from collections.abc import Sequence

import pytest

from discogym.core import Agent, AgentContext, AgentDecision, AgentOptions, InfrastructureError, ToolCall, Turn, Usage
from discogym.core.running.episode_loop import PlannedEpisode, play_episode
from discogym.core.running.planning import plan_episode
from tests.core.toy_suite import suite


class Recording(Agent):
    """Probes, then does what ``ending`` says: stops, raises a bug, or raises an infrastructure fault."""

    def __init__(self, ending: str) -> None:
        self.ending = ending
        self.events: list[str] = []

    def start(self, context: AgentContext) -> None:
        self.events.append("start")
        if self.ending == "fails to start":
            raise RuntimeError("no process to start")

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if not history:
            return AgentDecision(call=ToolCall(tool="probe", args={"n": 4}))
        if self.ending == "bug":
            raise RuntimeError("a bug in the agent")
        if self.ending == "fault":
            raise InfrastructureError("the endpoint went away")
        return AgentDecision(message="done")

    def settle(self, history: Sequence[Turn]) -> Usage | None:
        self.events.append(f"finish after {len(history)}")
        return Usage(input_tokens=7, output_tokens=3)

    def output(self) -> str | None:
        return f"printed before {len(self.events)} events"

    def close(self) -> None:
        self.events.append("close")


class Submitter(Recording):
    """Submits the hidden digit at once: the environment ends the episode."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        return AgentDecision(call=ToolCall(tool="submit", args={"n": suite.tasks("tiny")[0].ground_truth["digit"]}))


def planned() -> PlannedEpisode:
    task = suite.tasks("tiny")[0]
    return plan_episode("toy", task, suite.conditions()[0], AgentOptions(name="recording"), 0, 0)


@pytest.mark.parametrize("ending", ["stops", "bug", "fails to start"])
def test_the_agent_is_closed_once_however_the_episode_ends(ending):
    agent = Recording(ending)
    episode, runtime = play_episode(suite, planned(), agent)
    assert agent.events == ["start", "close"]
    assert runtime.agent_output == "printed before 1 events"  # kept before the agent is closed
    assert episode.outcome.status == ("completed" if ending == "stops" else "error")


def test_the_agent_is_closed_when_an_infrastructure_fault_drops_the_episode():
    agent = Recording("fault")
    with pytest.raises(InfrastructureError):
        play_episode(suite, planned(), agent)
    assert agent.events == ["start", "close"]


def test_when_the_environment_ends_the_episode_the_agent_adds_what_it_spent_since():
    agent = Submitter("stops")
    episode, _ = play_episode(suite, planned(), agent)
    assert agent.events == ["start", "finish after 1", "close"]
    assert episode.outcome.final_usage == Usage(input_tokens=7, output_tokens=3)
    assert (episode.usage().input_tokens, episode.usage().output_tokens) == (7, 3)
    assert episode.score.success
