"""The generic agents: random (seeded, only valid calls), replay (recorded transcripts) and human (a terminal)."""

import json
import re

import pytest

import discogym.core.model.agent as agent_module
from discogym.core import AgentContext, AgentOptions, ToolCall, Turn, UserError, register_agent
from discogym.core.model.agent import find_generic_agent
from discogym.core.running.agent_lookup import accepted_options, agent_names, make_agent, resolve_agent_name
from discogym.core.running.generic_agents import RandomAgent, load_transcript
from discogym.core.running.planning import RunConfig
from discogym.core.terminal.human import HumanAgent
from tests.core.toy_suite import suite


def play_random(seed: int, steps: int = 12) -> list[ToolCall]:
    env = suite.make_env(suite.tasks("dev")[0], suite.condition("plain"), seed=1)
    agent = RandomAgent()
    agent.start(AgentContext(brief=env.brief(), tools=env.tool_specs(), seed=seed, valid_calls=env.valid_calls))
    history: list[Turn] = []
    while not env.done and len(history) < steps:
        decision = agent.act(history)
        assert decision.call is not None
        result = env.call(decision.call.tool, decision.call.args)
        assert result.ok, result.error
        history.append(Turn(call=decision.call, result=result))
    return [turn.call for turn in history]


def test_random_agent_is_seeded():
    assert play_random(3) == play_random(3)
    assert any(play_random(3) != play_random(seed) for seed in range(4, 10))


def test_random_agent_stops_when_nothing_is_valid():
    agent = RandomAgent()
    agent.start(AgentContext(brief="", tools=[], seed=0, valid_calls=list))
    decision = agent.act([])
    assert decision.call is None and decision.message == "no valid call is available"


def test_replay_reads_call_lists_and_episode_files(tmp_path):
    calls = [{"tool": "probe", "args": {"n": 4}}, {"tool": "submit", "args": {"n": 4}}]
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    (tmp_path / "wrapped.json").write_text(json.dumps({"calls": calls}))
    (tmp_path / "episode.json").write_text(json.dumps({"events": [{"step": 1, "call": c} for c in calls]}))
    expected = [ToolCall.model_validate(c) for c in calls]
    for name in ["calls.json", "wrapped.json", "episode.json"]:
        assert load_transcript(tmp_path / name) == expected
    agent = make_agent(suite, AgentOptions(name="replay", options={"transcript": str(tmp_path / "calls.json")}))
    assert agent.act([]).call == expected[0]
    assert agent.act([Turn(call=expected[0], result={"text": ""})] * 2).call is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('[{"args": {}}]', "at 0.tool: Field required"),
        ('"x"', "is not a list"),
        ('{"events": 5}', "is not a list"),
        ("\udcff\udcfe[", "is not UTF-8 text"),
        ("[" * 100_000, "is nested too deeply"),
    ],
)
def test_bad_transcripts_are_user_errors(tmp_path, content, message):
    path = tmp_path / "t.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(UserError, match=message):
        load_transcript(path)


def test_replay_without_a_transcript_says_how_to_give_one():
    with pytest.raises(UserError, match="needs --agent-opt transcript="):
        make_agent(suite, AgentOptions(name="replay"))


def test_agent_names_resolve_per_suite():
    assert resolve_agent_name(suite, "reference") == "bisect"
    assert agent_names(suite)[:2] == ["reference", "bisect"]
    assert {"random", "replay"} <= set(agent_names(suite))
    with pytest.raises(UserError, match="unknown agent 'oracle' for suite 'toy'; choose from: reference, bisect"):
        resolve_agent_name(suite, "oracle")


def scripted_human(lines: list[str]) -> tuple[HumanAgent, list[str]]:
    """A human agent reading ``lines`` (then end of input) and recording what it shows."""
    shown: list[str] = []
    pending = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(pending)
        except StopIteration:
            raise EOFError from None

    return HumanAgent(read=read, write=shown.append), shown


def test_a_human_types_the_suites_own_syntax_and_mistakes_are_asked_again():
    env = suite.make_env(suite.tasks("dev")[0], suite.condition("plain"), seed=1)
    agent, shown = scripted_human(["hello", "probe 4"])
    agent.start(
        AgentContext(
            brief=env.brief(),
            tools=env.tool_specs(),
            seed=0,
            parse_text_action=env.parse_text_action,
            text_prompt=env.text_prompt(),
        )
    )
    assert shown[0] == env.brief() and str(env.text_prompt()) in shown[1]
    assert agent.act([]).call == ToolCall(tool="probe", args={"n": 4})
    assert any(line.startswith("not understood: answer with one line") for line in shown)
    decision = agent.act([])
    assert decision.call is None and decision.message == "the player left" and decision.termination == "abandoned"


def test_a_human_without_a_suite_syntax_types_tool_and_json_arguments():
    env = suite.make_env(suite.tasks("dev")[0], suite.condition("plain"), seed=1)
    agent, shown = scripted_human(['probe {"n": 3', "", 'probe {"n": 3}', "quit"])
    agent.start(AgentContext(brief=env.brief(), tools=env.tool_specs(), seed=0))
    header = "Actions (TOOL key=value ...; a value is JSON or a bare word):"
    assert header in shown
    assert agent.act([]).call == ToolCall(tool="probe", args={"n": 3})
    assert any(line.startswith("not understood: arguments are") for line in shown)
    assert shown.count(header) == 2  # an empty line shows the tools again
    assert agent.act([]).message == "the player quit"


def test_the_task_is_repeated_in_one_line_above_every_prompt():
    env = suite.make_env(suite.tasks("dev")[0], suite.condition("plain"), seed=1)
    agent, shown = scripted_human(["", "probe n=4"])
    long_brief = "Find the hidden digit " + "by probing " * 20 + "\nSecond line."
    agent.start(AgentContext(brief=long_brief, tools=env.tool_specs(), seed=0))
    start = len(shown)
    agent.act([])
    prompts = [line for line in shown[start:] if line.startswith("task: ")]
    assert len(prompts) == 2  # before the first prompt, and again after the empty line's help
    assert prompts[0] == "task: " + long_brief[:71] + "…" and len(prompts[0]) == 78


def agents_of(*options: AgentOptions) -> list[tuple[str, dict[str, str]]]:
    return [(agent.name, agent.options) for agent in RunConfig.for_suite(suite, options).agents]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (AgentOptions(name="random", options={"foo": "bar"}), "agent 'random' takes no options (got --agent-opt foo)"),
        (
            AgentOptions(name="human", options={"b": "1", "a": "2"}),
            "agent 'human' takes no options (got --agent-opt a, b)",
        ),
        (AgentOptions(name="bisect", options={"salt": "1"}), "agent 'bisect' takes no options"),
        (
            AgentOptions(name="replay", options={"transcript": "t.json", "speed": "2"}),
            "agent 'replay': --agent-opt speed: unknown option (options: transcript)",
        ),
        (
            AgentOptions(name="flaky", options={"colour": "blue"}),
            "agent 'flaky': --agent-opt colour: unknown option (options: fail_dir, fault, message)",
        ),
    ],
)
def test_an_option_the_agent_does_not_take_is_refused_before_the_run(options, message):
    with pytest.raises(UserError, match=re.escape(message)):
        RunConfig.for_suite(suite, [options])


def test_an_option_one_agent_of_the_run_takes_is_dropped_for_the_others():
    salted = {"fail_dir": "m"}
    ran = agents_of(AgentOptions(name="flaky", options=salted), AgentOptions(name="random", options=salted))
    assert ran == [("flaky", salted), ("random", {})]  # random's episodes keep their key and seeds
    with pytest.raises(UserError, match="agent 'random' takes no options"):
        agents_of(AgentOptions(name="random", options={"x": "1"}), AgentOptions(name="flaky", options={"x": "1"}))


def test_an_agent_registered_without_options_takes_none(monkeypatch):
    monkeypatch.setattr(agent_module, "_GENERIC_AGENTS", dict(agent_module._GENERIC_AGENTS))  # restored afterwards
    register_agent("plugged", lambda options: RandomAgent(), "a plugin's agent from before options were declared")
    register_agent("declared", lambda options: RandomAgent(), "a plugin's agent with one option", options=["depth"])
    with pytest.raises(UserError, match="agent 'plugged' takes no options"):
        agents_of(AgentOptions(name="plugged", options={"depth": "2"}))
    assert agents_of(AgentOptions(name="declared", options={"depth": "2"})) == [("declared", {"depth": "2"})]
    assert accepted_options(suite, "declared") == ("depth",)


def test_the_llm_agent_declares_the_options_its_settings_take():
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    from discogym.llm import OPTIONS
    from discogym.llm.agent import LLMSettings

    llm = find_generic_agent("llm")
    assert llm is not None and llm.options == OPTIONS == tuple(LLMSettings.model_fields)
