"""Sub-agents: a tool that hands work to an agent of the episode's own kind (SciCrafter's engineer asking its
scientist), played on an environment the tool opens; the session is logged inside the call that ran it, with
its own tokens, and counts against the episode's budget."""

from collections.abc import Sequence
from typing import Any, ClassVar

from discogym.core import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentFactory,
    AgentOptions,
    Condition,
    Env,
    Episode,
    NoArgs,
    Score,
    Suite,
    Task,
    Termination,
    ToolArgs,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
    tool,
)
from discogym.core.model.env import NO_SUB_AGENTS
from discogym.core.running.episode_loop import PlannedEpisode, play_episode
from discogym.core.running.planning import plan_episode


class QuestionArgs(ToolArgs):
    question: str


class TextArgs(ToolArgs):
    text: str


class HelperEnv(Env):
    """The sub-agent's environment: take notes, then reply (which ends it). Every one made is kept in ``made``."""

    made: ClassVar[list["HelperEnv"]] = []

    def __init__(self, question: str) -> None:
        self.question = question
        self.notes: list[str] = []
        self.reply_text: str | None = None
        self.closed = 0
        HelperEnv.made.append(self)

    def close(self) -> None:
        self.closed += 1

    def brief(self) -> str:
        return f"Answer the question: {self.question}"

    def system_prompt(self) -> str | None:
        return "You are the helper."

    @tool(TextArgs)
    def note(self, args: TextArgs) -> ToolResult:
        """Write a note."""
        self.notes.append(args.text)
        return ToolResult(text=f"noted ({len(self.notes)})")

    @tool(NoArgs)
    def explode(self, args: NoArgs) -> ToolResult:
        """A tool with a bug."""
        raise RuntimeError("a bug in the helper's environment")

    @tool(TextArgs)
    def reply(self, args: TextArgs) -> ToolResult:
        """Answer; ends the session."""
        self.reply_text = args.text
        self.finish(Termination.ANSWERED)
        return ToolResult(text="sent", done=True)


class AskerEnv(Env):
    """The episode's environment: ask the helper, then submit."""

    def __init__(self) -> None:
        self.answers: list[str | None] = []

    def brief(self) -> str:
        return "Ask the helper, then submit."

    @tool(QuestionArgs)
    def ask(self, args: QuestionArgs) -> ToolResult:
        """Ask the helper a question."""
        helper = HelperEnv(args.question)
        session = self.run_sub_agent(helper, "helper")
        self.answers.append(helper.reply_text)
        return ToolResult(text=f"the helper ({session.termination}) says: {helper.reply_text}")

    @tool(NoArgs)
    def submit(self, args: NoArgs) -> ToolResult:
        """End the episode."""
        self.finish(Termination.SUBMITTED)
        return ToolResult(text="over", done=True)

    def outcome(self) -> dict[str, Any]:
        return {"answers": self.answers}


class RolePlayer(Agent):
    """As the episode's agent: ask, then submit. As the helper: note, then reply (or ``helper`` misbehaves)."""

    def __init__(self, helper: str = "replies") -> None:
        self.helper = helper
        self.role: str | None = None

    def start(self, context: AgentContext) -> None:
        self.role = context.role

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        spend = Usage(input_tokens=100, output_tokens=10)
        if self.role is None:
            calls = [ToolCall(tool="ask", args={"question": "what is six times seven?"}), ToolCall(tool="submit")]
            return AgentDecision(call=calls[len(history)] if len(history) < 2 else None, usage=spend)
        if self.helper == "crashes":
            raise ValueError("a bug in the helper")
        if self.helper == "breaks":
            return AgentDecision(call=ToolCall(tool="explode"), usage=spend)
        if self.helper == "quits" or len(history) == 2:
            return AgentDecision(message="no idea", usage=spend)
        call = (
            ToolCall(tool="note", args={"text": "6*7"}) if not history else ToolCall(tool="reply", args={"text": "42"})
        )
        return AgentDecision(call=call, usage=spend)


class AskerSuite(Suite):
    name = "asker"
    description = "ask a helper (harness tests only)"

    def splits(self) -> list[str]:
        return ["one"]

    def tasks(self, split: str) -> list[Task]:
        return [Task(id="q", suite="asker", split="one", brief="ask")]

    def conditions(self) -> list[Condition]:
        return [Condition(name="plain")]

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        return AskerEnv()

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {
            "role-player": lambda options: RolePlayer(options.options.get("helper", "replies")),
        }

    def score(self, episode: Episode) -> Score:
        answers = [e.session.events[-1].call.args.get("text") for e in episode.events if e.session and e.session.events]
        return Score(value=float(answers == ["42"]), success=answers == ["42"])


suite = AskerSuite()


def planned(helper: str = "replies", token_limit: int | None = None) -> PlannedEpisode:
    options = AgentOptions(name="role-player", options={"helper": helper}, token_limit=token_limit)
    return plan_episode("asker", suite.tasks("one")[0], suite.conditions()[0], options, 0, 0)


def test_a_sub_agent_session_is_logged_inside_the_call_that_ran_it_with_its_tokens():
    episode, _ = play_episode(suite, planned())
    ask, submit = episode.events
    assert ask.session is not None and submit.session is None
    assert (ask.session.role, ask.session.termination) == ("helper", "answered")
    assert ask.session.brief == "Answer the question: what is six times seven?"
    assert [(e.call.tool, e.call.args) for e in ask.session.events] == [
        ("note", {"text": "6*7"}),
        ("reply", {"text": "42"}),
    ]
    assert ask.result.text == "the helper (answered) says: 42"
    assert episode.score.success  # scored from the session in the log
    assert episode.usage() == Usage(input_tokens=400, output_tokens=40)  # two engineer and two helper decisions
    document = episode.to_json().decode()
    assert document.count('"session"') == 1  # only where a session ran: other episodes' files are unchanged
    assert Episode.model_validate_json(document) == episode


def test_a_sub_agent_that_stops_by_itself_ends_its_session_not_the_episode():
    episode, _ = play_episode(suite, planned("quits"))
    ask = episode.events[0]
    assert ask.session is not None and (ask.session.termination, ask.session.agent_message) == (
        "agent_stopped",
        "no idea",
    )
    assert ask.result.text == "the helper (agent_stopped) says: None"
    assert episode.outcome.termination == "submitted" and not episode.score.success


def test_a_sub_agent_with_a_bug_is_the_episodes_agent_error():
    episode, _ = play_episode(suite, planned("crashes"))
    assert (episode.outcome.status, episode.outcome.termination) == ("error", "agent_error")
    assert "a bug in the helper" in (episode.outcome.error or "")


def test_the_sub_agents_tokens_count_against_the_episodes_budget():
    episode, _ = play_episode(suite, planned(token_limit=200))
    ask = episode.events[0]
    assert ask.session is not None and ask.session.termination == "token_limit"
    assert len(ask.session.events) == 1  # 110 (the engineer's ask) + 110 (the helper's note) reach 200
    assert episode.outcome.termination == "token_limit" and len(episode.events) == 1


def test_without_a_harness_to_make_sub_agents_the_tool_says_so():
    env = AskerEnv()
    result = env.call("ask", {"question": "anyone?"})
    assert not result.ok and result.error == NO_SUB_AGENTS


def test_an_environment_bug_in_a_sub_agent_session_is_the_environments_error_and_its_environment_is_closed():
    HelperEnv.made.clear()
    episode, runtime = play_episode(suite, planned("breaks"))
    assert (episode.outcome.status, episode.outcome.termination) == ("error", "env_error")
    assert "a bug in the helper's environment" in (episode.outcome.error or "")
    assert "helper's session" in (episode.outcome.error or "")
    assert [env.closed for env in HelperEnv.made] == [1]
    assert runtime.traceback is not None and "explode" in runtime.traceback


def test_a_sub_agent_sessions_environment_is_closed_once_however_the_session_ends():
    for helper in ["replies", "quits", "crashes"]:
        HelperEnv.made.clear()
        play_episode(suite, planned(helper))
        assert [env.closed for env in HelperEnv.made] == [1], helper


def test_a_sub_agent_sessions_steps_are_timed_beside_the_episode():
    episode, runtime = play_episode(suite, planned())
    assert runtime.sessions and len(runtime.sessions[0]) == 2  # the helper's note and reply
    assert len(runtime.steps) == len(episode.events)
