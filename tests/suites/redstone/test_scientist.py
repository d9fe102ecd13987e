"""SciCrafter's scientist sub-agent: an llm engineer (against the fake endpoint) asks, the scientist of the same
model experiments in its own lab on the task's one trial budget, reports, updates the knowledge book and answers;
the whole session is logged inside the engineer's episode and the score recomputes from the file alone."""

import json
from collections.abc import Iterator, Mapping

import pytest

from discogym.core import AgentOptions, Episode, Task
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.suites.redstone.book import BookEntry, KnowledgeBook, ScientistNotes
from discogym.suites.redstone.build_lab import TrialBudget
from discogym.suites.redstone.env import Presentation, RedstoneEnv
from discogym.suites.redstone.scientist import ScientistLab
from discogym.suites.redstone.suite import suite
from discogym.suites.redstone.tasks import task_spec
from tests.llm.conftest import model_for
from tests.llm.fake_endpoint import Calls, FakeEndpoint, Say

TASK = "A_simultaneous_lights_L1"
BUTTON = {"x": 0, "y": 4, "z": 0, "block": "minecraft:stone_button", "properties": {"face": "floor"}}
REPORT = {
    "research_question": "How long does a stone button stay on?",
    "hypothesis": "10 redstone ticks",
    "design": "one button on the floor; measure the ticks between its on and off",
    "steps": "press it",
    "record": "on at tick 1, off at tick 21, three times alike",
    "results": "20 game ticks",
    "analysis": "a press lasts 10 redstone ticks",
    "next_steps": "none",
}
CLAIM = {
    "title": "Button pulse",
    "claim": "A stone button stays on for 10 redstone ticks (20 game ticks) after a press.",
    "proof": "Three presses: each on at tick t and off at t+20.",
    "constraints": "Pressing while on does nothing.",
    "example": "Time a pulse from a button press.",
}


PRICE = {"input": 1.0, "output": 4.0, "cache_read": 0.25}


def call(tool: str, args: Mapping[str, object] | None = None) -> Calls:
    return Calls([(tool, json.dumps(args or {}))])


def task() -> Task:
    return next(t for t in suite.tasks("official") if t.id == TASK)


@pytest.fixture
def played(tmp_path, tmp_path_factory, monkeypatch) -> Iterator[tuple[Episode, FakeEndpoint]]:
    """The engineer asks once; the scientist places a button and presses 51 times (the 51st is refused), reports,
    updates the book and answers; the engineer places its own button, presses (refused: the budget is spent) and
    submits."""
    scientist = [call("set_block", BUTTON), *[call("activate_button")] * 51]
    scientist += [
        call("write_report", REPORT),
        call("update_claims", {"entries": [CLAIM]}),
        call("answer", {"answer": "10 rt"}),
    ]
    engineer: list[Calls | Say] = [call("ask_scientist", {"question": "How long does a button stay on?"}), *scientist]
    engineer += [call("set_block", BUTTON), call("activate_button"), call("submit"), Say("done")]
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    prices = tmp_path_factory.mktemp("prices") / "prices.json"
    prices.write_text(json.dumps({"openai-compatible/fake": PRICE}))
    monkeypatch.setenv("DISCOGYM_PRICES", str(prices))
    with FakeEndpoint() as fake:
        fake.script.extend(engineer)
        agent = AgentOptions(
            name="llm", model=model_for(fake), options={"retries": "1", "timeout_s": "5", "context_window": "128000"}
        )
        config = RunConfig.for_suite(suite, [agent], split="official", tasks=[TASK], conditions=["scientist"])
        summary = Runner(suite, config, tmp_path).run()
        assert summary.faults == {}
        (episode,) = RunDir(tmp_path).iter_episodes()
        yield episode, fake


def test_the_scientists_session_is_logged_inside_the_engineers_call_with_its_tokens(played):
    episode, _ = played
    ask = episode.events[0]
    assert ask.call.tool == "ask_scientist" and ask.session is not None
    session = ask.session
    assert (session.role, session.termination) == ("scientist", "answered")
    assert [e.call.tool for e in session.events][:2] == ["set_block", "activate_button"]
    assert len(session.events) == 1 + 51 + 3
    assert all(e.usage is not None and e.usage.input_tokens > 0 for e in session.events)
    engineer_tokens = sum(e.usage.input_tokens for e in episode.events if e.usage)
    assert episode.usage().input_tokens == engineer_tokens + session.usage().input_tokens
    for event in [*episode.events, *session.events]:  # the scientist's calls priced as the engineer's
        if event.usage is not None:
            used = event.usage
            fresh = used.input_tokens - used.cached_tokens
            expected = (fresh * 1.0 + used.cached_tokens * 0.25 + used.output_tokens * 4.0) / 1e6
            assert used.cost_usd == pytest.approx(expected) and used.cost_usd > 0
    engineer_cost = sum(e.usage.cost_usd for e in episode.events if e.usage)
    assert episode.usage().cost_usd == pytest.approx(engineer_cost + session.usage().cost_usd)
    assert "10 rt" in ask.result.text and "Button pulse" in ask.result.text  # the answer and the book


def test_the_scientists_presses_come_off_the_tasks_one_budget(played):
    episode, _ = played
    lab_presses = [e.result for e in episode.events[0].session.events if e.call.tool == "activate_button"]
    assert all(result.ok for result in lab_presses[:50])
    assert lab_presses[50].error == "all 50 verification trials are used"  # the scientist's 51st
    engineer_press = next(e.result for e in episode.events if e.call.tool == "activate_button")
    assert engineer_press.error == "all 50 verification trials are used"  # and the engineer's first
    env = episode.outcome.env
    assert (env["trials"], env["scientist_trials"], env["questions"]) == (0, 50, 1)
    assert env["book_before"]["entries"] == [] and env["book_after"]["entries"][0]["title"] == "Button pulse"
    assert env["reports"][0]["hypothesis"] == "10 redstone ticks"


def test_the_score_recomputes_from_the_file_alone(played, tmp_path):
    episode, _ = played
    again = Episode.model_validate_json(episode.to_json())
    assert suite.score(again) == episode.score
    assert (episode.score.components["trials"], episode.score.components["scientist_trials"]) == (0, 50)
    assert episode.score.components["cache_mismatch"] == []


def test_no_ground_truth_reaches_the_engineer_or_the_scientist(played):
    _, fake = played
    sent = json.dumps([request.body for request in fake.requests])
    assert '"passed"' not in sent and "failures" not in sent and "verdict" not in sent


def test_the_book_renders_in_each_format():
    claim = KnowledgeBook(format="claim", entries=[BookEntry(**CLAIM)])
    assert claim.render().startswith("### 1. Button pulse\nClaim: A stone button stays on")
    finding = KnowledgeBook(format="finding")
    finding.add([BookEntry(title="Decay", finding="Dust loses 1 per block.", example="15 blocks reach")])
    finding.add([BookEntry(title="Decay", finding="Dust loses 1 per block; 0 after 15.", example="x")])
    assert len(finding.entries) == 1 and "0 after 15" in finding.render()  # the same title replaces the entry
    assert KnowledgeBook(format="summary").render() == "(the knowledge book is empty)"


@pytest.mark.parametrize(
    ("book_format", "tool"), [("claim", "update_claims"), ("finding", "update_findings"), ("summary", "update_summary")]
)
def test_the_lab_offers_the_book_tool_of_the_conditions_format(book_format, tool):
    notes = ScientistNotes.model_validate({"book": {"format": book_format}})
    lab = ScientistLab(task_spec(task()), TrialBudget(), notes, "why?")
    names = [t.name for t in lab.tools()]
    assert tool in names and "submit" not in names and "ask_scientist" not in names
    assert [name for name in names if name.startswith("update_")] == [tool]
    assert lab.call("answer", {"answer": "x"}).error == "file the experiment report with write_report before you answer"


def test_ask_scientist_is_offered_only_under_a_scientist_condition():
    names = {
        c.name: [t.name for t in RedstoneEnv(task_spec(task()), Presentation.model_validate(c.params)).tools()]
        for c in suite.conditions()
    }
    assert [name for name, tools in names.items() if "ask_scientist" in tools] == [
        "scientist",
        "hint+scientist",
        "hint+scientist-summary",
        "hint+scientist-finding",
    ]


def test_each_role_gets_its_own_system_prompt_and_brief(played):
    _, fake = played
    first_engineer, first_scientist = (json.dumps(request.body) for request in fake.requests[:2])
    assert "You are the engineer" in first_engineer and "ask_scientist(question)" in first_engineer
    assert "You are the scientist" in first_scientist and "never guess" in first_scientist
    assert "The engineer asks: How long does a button stay on?" in first_scientist
    assert "update_claims" in first_scientist and "ask_scientist" not in first_scientist.split('"tools"')[1]


def test_people_type_the_scientists_tools_as_tool_key_value_lines():
    engineer = RedstoneEnv(task_spec(task()), Presentation(scientist=True))
    assert "ask_scientist question=TEXT" in engineer.text_prompt()
    call = engineer.parse_text_action('ask_scientist question="how long is a button on?"')
    assert (call.tool, call.args) == ("ask_scientist", {"question": "how long is a button on?"})
    assert engineer.parse_text_action("press").tool == "activate_button"  # the suite's own syntax as before
    lab = ScientistLab(task_spec(task()), TrialBudget(), ScientistNotes(), "why?")
    assert "answer answer=TEXT" in lab.text_prompt() and "ask_scientist" not in lab.text_prompt()
    assert lab.parse_text_action('answer answer="20 ticks"').args == {"answer": "20 ticks"}
    assert "ask_scientist" not in RedstoneEnv(task_spec(task()), Presentation()).text_prompt()
