"""The papers' scaffolds as presets of the ``llm`` agent (``--agent-opt scaffold=...``): the exact messages each
request carries on the crafting and autumn suites, through the fake endpoint."""

from pathlib import Path
from typing import Any

import pytest

from discogym.core import AgentContext, AgentOptions, Episode, UserError, get_suite
from discogym.core.model.termination import EndingKind
from discogym.core.model.tools import UNREADABLE_TOOL
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.runner import RunConfig, Runner, plan_episodes
from discogym.llm.agent import llm_settings, make_llm_agent
from discogym.llm.scaffolds import REPLY_FORMAT, SCRATCHPAD_HEADING, Scratchpad
from discogym.suites.autumn.env import TEXT_SYNTAX
from tests.core.toy_suite import suite as toy
from tests.llm.conftest import episodes, llm_options, run_llm
from tests.llm.fake_endpoint import FakeEndpoint, Say

CRAFTING_TASK = ("test", "TEST0000")
AUTUMN_TASK = ("all", "gravity-1")
Message = tuple[str, str]


def play(suite_name: str, out: Path, agent: AgentOptions, task: tuple[str, str]) -> Episode:
    """One episode of ``task`` (split, id) of the suite, in its first condition."""
    suite = get_suite(suite_name)
    split, task_id = task
    condition = suite.conditions()[0].name
    config = RunConfig.for_suite(suite, [agent], split=split, tasks=[task_id], conditions=[condition])
    Runner(suite, config, out).run()
    [episode] = episodes(out)
    return episode


def sent(fake: FakeEndpoint, number: int) -> list[Message]:
    """The (role, text) of each message of the endpoint's request ``number``."""
    return [(m["role"], _text(m["content"])) for m in fake.requests[number].body["messages"]]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


def crafting_start() -> tuple[str, list[Message], str]:
    """The crafting task's prompt without the worked examples, the examples as messages, and its brief."""
    suite = get_suite("crafting")
    split, task_id = CRAFTING_TASK
    task = next(t for t in suite.tasks(split) if t.id == task_id)
    env = suite.make_env(task, suite.conditions()[0], 0)
    try:
        dialogue = env.example_dialogue()
        assert dialogue is not None
        examples = [message for seen, said in dialogue.turns for message in (("user", seen), ("assistant", said))]
        return dialogue.text_prompt, examples, env.brief()
    finally:
        env.close()


def test_plancraft_shows_the_examples_as_turns_then_a_40_message_window_scrolls_them_out(tmp_path, fake):
    replies = [f"think: step {i}" for i in range(30)]
    fake.script.extend(Say(reply) for reply in replies)
    episode = play("crafting", tmp_path, llm_options(fake, scaffold="plancraft"), CRAFTING_TASK)
    assert episode.outcome.termination == "step_limit" and len(fake.requests) == 30
    prompt, examples, brief = crafting_start()
    assert len(examples) == 20 and "Two worked examples" not in prompt  # Plancraft's demo, not shown twice

    def everything(n: int) -> list[Message]:  # the whole conversation at request n
        turns = [message for reply in replies[:n] for message in (("assistant", reply), ("user", "Ok"))]
        return [("system", prompt), *examples, ("user", brief), *turns]

    assert sent(fake, 0) == everything(0)  # system prompt, the 20 example messages, the first observation
    assert sent(fake, 9) == everything(9)  # 1 + 39 messages: all still fit
    # From the 11th request on: the system prompt and the newest 40 messages less the reply that opens them.
    assert sent(fake, 10) == [everything(10)[0], *everything(10)[3:]]
    assert sent(fake, 18) == [everything(18)[0], *everything(18)[19:]]  # the last example is the oldest left
    assert everything(18)[19:21] == examples[-2:]
    assert sent(fake, 19) == [everything(19)[0], *everything(19)[21:]]  # the examples are gone: the task first
    assert sent(fake, 19)[1] == ("user", brief)
    assert sent(fake, 29) == [everything(29)[0], *everything(29)[-39:]]
    for number in (10, 18, 19, 20, 29):
        request = sent(fake, number)
        assert len(request) == 40 and request[0][0] == "system" and request[1][0] == "user"
    assert sent(fake, 20)[1] == ("user", "Ok")  # the brief too has scrolled out
    body = fake.requests[0].body
    assert body["max_tokens"] == 256 and body["temperature"] == 0.6 and "tools" not in body


def test_plancraft_reads_only_the_first_line_of_a_reply(tmp_path, fake):
    fake.script.extend(
        [
            Say("\nmove: from [I2] to [A1] with quantity 1\nand then I will craft the wall, move: from [0] to [I1]"),
            Say("I will think first.\nthink: the wall needs diorite"),
            Say("impossible: no diorite here\nmore junk"),
        ]
    )
    episode = play("crafting", tmp_path, llm_options(fake, scaffold="plancraft"), CRAFTING_TASK)
    calls = [event.call for event in episode.events]
    assert calls[0].tool == "move"
    assert calls[0].args == {"slot_from": "[I2]", "slot_to": "[A1]", "quantity": 1}
    assert calls[1].tool == UNREADABLE_TOOL  # the first line is no action: Plancraft's own answer, a step
    assert episode.events[1].result.text.startswith("Only select actions from the following")
    assert calls[2].tool == "impossible" and calls[2].args == {"reason": "no diorite here"}
    assert episode.outcome.termination == "declared_impossible"


def test_autumnbench_reads_the_action_tag_and_retries_a_reply_without_one(tmp_path, fake):
    fake.script.extend(
        [
            Say("<think>Let me see what moves.</think>\n<action>up</action>"),
            Say("I would go left."),
            Say("<think>Now with the tag.</think><action>left</action>"),
        ]
    )  # then the fake's own replies, without tags: unreadable twice, a no-answer
    episode = play("autumn", tmp_path, llm_options(fake, scaffold="autumnbench"), AUTUMN_TASK)
    assert [event.call.args for event in episode.events] == [{"action": "up"}, {"action": "left"}]
    assert episode.outcome.termination == "no_answer"
    assert "the reply has no <action>...</action> tag" in str(episode.outcome.agent_message)
    first = sent(fake, 0)
    assert first[0] == ("system", f"{TEXT_SYNTAX}\n\n{REPLY_FORMAT}") and first[1][0] == "user"
    retry = (
        "the reply has no <action>...</action> tag. Think inside <think>...</think>, then give exactly one "
        "action inside <action>...</action>."
    )
    assert sent(fake, 2)[-2:] == [("assistant", "I would go left."), ("user", f"Your reply could not be used: {retry}")]
    assert fake.requests[0].body["max_tokens"] == 8192
    # The whole history by default: every turn, and no scratchpad message. (Inspect reads a <think> block as the
    # reply's reasoning and sends it back in its own form.)
    seen = [event.result.text for event in episode.events]
    last = sent(fake, 3)
    assert last[:2] == first[:2] and len(last) == 8
    assert last[2][0] == "assistant" and "Let me see what moves." in last[2][1]
    assert last[2][1].endswith("<action>up</action>") and last[6][1].endswith("<action>left</action>")
    assert last[3:6] == [
        ("user", seen[0]),
        ("assistant", "I would go left."),
        ("user", f"Your reply could not be used: {retry}"),
    ]
    assert last[7] == ("user", seen[1])


def test_autumnbench_applies_the_scratchpad_tags_and_shows_the_scratchpad_before_the_kept_turns(tmp_path, fake):
    fake.script.extend(
        [
            Say("<scratchpad_add>the red cell falls</scratchpad_add><action>noop</action>"),
            Say(
                "<scratchpad_add>clicks make blue</scratchpad_add>\n"
                "<scratchpad_add>x</scratchpad_add><action>up</action>"
            ),
            Say("<scratchpad_del>the red cell falls</scratchpad_del><action>down</action>"),
            Say("<scratchpad_del>not there</scratchpad_del><action>test</action>"),
        ]
    )
    agent = llm_options(fake, scaffold="autumnbench", context="window", window_turns="1")
    episode = play("autumn", tmp_path, agent, AUTUMN_TASK)
    first = sent(fake, 0)
    assert len(first) == 2 and first[0][0] == "system"  # nothing in the scratchpad yet: no message
    seen = [event.result.text for event in episode.events]
    replies = [str(event.agent_message) for event in episode.events]
    # Request 2: system prompt, brief, the scratchpad, then only the newest turn.
    pad = ("user", f"{SCRATCHPAD_HEADING}\nthe red cell falls\nclicks make blue\nx")
    assert sent(fake, 2) == [*first, pad, ("assistant", replies[1]), ("user", seen[1])]
    assert sent(fake, 3) == [
        *first,
        ("user", f"{SCRATCHPAD_HEADING}\nclicks make blue\nx"),
        ("assistant", replies[2]),
        ("user", seen[2]),
    ]
    logged = [[(m.kind, m.action, m.text) for m in event.memory] for event in episode.events]
    assert logged == [
        [("notes", "scratchpad_add", "the red cell falls")],
        [("notes", "scratchpad_add", "clicks make blue"), ("notes", "scratchpad_add", "x")],
        [("notes", "scratchpad_del", "the red cell falls")],
        [("notes", "scratchpad_del", "not there\n-> not in the scratchpad; nothing deleted")],
    ]


def test_scratchpad_edits():
    pad = Scratchpad()
    pad.apply("<scratchpad_add>a b</scratchpad_add> <scratchpad_add>\nc\n</scratchpad_add>")
    assert pad.text == "a b\nc"
    pad.apply("<scratchpad_del>a b</scratchpad_del>")
    assert pad.text == "c"


def test_explicit_options_override_the_presets_defaults(tmp_path, fake):
    settings = llm_settings(AgentOptions(name="llm", options={"scaffold": "plancraft", "max_tokens": "100"}))
    assert (settings.mode, settings.context, settings.window_messages) == ("suite", "messages", 40)
    assert (settings.max_tokens, settings.temperature, settings.notes) == (100, 0.6, False)
    autumn = llm_settings(AgentOptions(name="llm", options={"scaffold": "autumnbench", "context": "window"}))
    assert (autumn.mode, autumn.context, autumn.max_tokens, autumn.notes) == ("suite", "window", 8192, False)
    assert llm_settings(AgentOptions(name="llm")).scaffold == "none"

    fake.script.extend(Say(f"think: {i}") for i in range(30))
    agent = llm_options(fake, scaffold="plancraft", window_messages="4", temperature="0.1")
    episode = play("crafting", tmp_path, agent, CRAFTING_TASK)
    assert fake.requests[0].body["temperature"] == 0.1 and fake.requests[0].body["max_tokens"] == 256
    assert [role for role, _ in sent(fake, 10)] == ["system", "user", "assistant", "user"]  # 4 less the reply
    recorded = episode.provenance.agent_settings
    assert (recorded["scaffold"], recorded["window_messages"], recorded["temperature"]) == ("plancraft", 4, 0.1)


def test_a_preset_on_another_suite_is_refused(tmp_path, fake):
    agent = make_llm_agent(llm_options(fake, scaffold="plancraft"))
    with pytest.raises(
        UserError,
        match="scaffold=plancraft is Plancraft's scaffold for suite 'crafting'; it cannot play suite 'autumn'",
    ):
        agent.start(AgentContext(brief="", tools=[], seed=0, suite="autumn", text_prompt="x"))
    with pytest.raises(UserError, match="for suite 'autumn'; it cannot play suite 'toy'"):  # before any episode
        run_llm(tmp_path, llm_options(fake, scaffold="autumnbench"), tasks=["tiny-00"])
    assert not (tmp_path / "episodes").exists()
    config = RunConfig.for_suite(toy, [llm_options(fake, scaffold="autumnbench")], split="tiny")
    episode, _ = play_episode(toy, plan_episodes(toy, config)[0])  # an episode started all the same
    ended = episode.outcome
    assert ended.termination == "config_error" and "for suite 'autumn'; it cannot play suite 'toy'" in str(ended.error)
    assert ended.termination.kind is EndingKind.ERROR
    assert not fake.requests
