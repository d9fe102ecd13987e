"""A language model on petri gets the paper's scaffold: its system prompt, the brief template, the four tools."""

import json

from discogym.core import AgentOptions, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.suites.petri.env import SYSTEM_PROMPT
from tests.llm.fake_endpoint import FakeEndpoint, Say, conversation_texts


def test_a_model_plays_a_petri_task_through_the_text_protocol_with_the_papers_scaffold(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    suite = get_suite("petri")
    task = suite.tasks("pilot-v0")[0]
    first, second = task.params["candidates"][0], task.params["candidates"][1]
    with FakeEndpoint() as fake:
        fake.script.extend(
            [
                Say(json.dumps({"tool": "experiment", "args": {"config_b": {first: task.params["control"][first]}}})),
                Say(json.dumps({"tool": "submit", "args": {"parameter": second, "direction": "up"}})),
            ]
        )
        agent = AgentOptions(
            name="llm", model=f"openai-compatible/fake@{fake.url}", options={"mode": "text", "context_window": "128000"}
        )
        Runner(suite, RunConfig.for_suite(suite, [agent], split="pilot-v0", tasks=[task.id]), tmp_path).run()
        system, brief = conversation_texts(fake.requests[0].body)[:2]
    assert system.startswith(SYSTEM_PROMPT) and '"tool": "<tool name>"' in system
    assert brief.startswith(f"model: {task.params['simulation']}\ntarget metric: {task.params['target']}")
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [e.call.tool for e in episode.events] == ["experiment", "submit"]
    assert episode.outcome.termination == "submitted" and episode.score.value is not None
    assert "Holm-adjusted" in episode.events[0].result.text and episode.audit["support"] == "unbacked"


def test_a_model_plays_a_blind_metric_world_and_its_score_recomputes_from_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    suite = get_suite("petri")
    task = suite.tasks("blind-v1")[0]
    truth = task.ground_truth
    (driver,) = truth["changed"]
    experiment = {"config_b": {driver: truth["reference_values"][driver]}}
    answer = {"parameter": driver, "metric": truth["target"], "direction": truth["direction"]}
    with FakeEndpoint() as fake:
        fake.script.extend(
            [
                Say(json.dumps({"tool": "experiment", "args": experiment})),
                Say(json.dumps({"tool": "submit", "args": answer})),
            ]
        )
        agent = AgentOptions(
            name="llm", model=f"openai-compatible/fake@{fake.url}", options={"mode": "text", "context_window": "128000"}
        )
        Runner(suite, RunConfig.for_suite(suite, [agent], split="blind-v1", tasks=[task.id]), tmp_path).run()
        texts = [text for request in fake.requests for text in conversation_texts(request.body)]
    assert "target metric: not named" in texts[1] and task.params["target"] is None
    assert not any(json.dumps(truth["moved"]) in text for text in texts)
    (episode,) = RunDir(tmp_path).iter_episodes()
    every_metric = episode.events[0].result.data["comparisons"]
    assert [row["metric"] for row in every_metric] == suite.solver_hints(task)["metrics"]
    assert episode.score.value == 97.5 and episode.score.success  # 30 + 10 + 10 + 30 + 20 x 7/8
    assert suite.score(episode).value == episode.score.value and suite.audit(episode) == episode.audit


def test_a_model_locates_a_phase_boundary_and_its_score_recomputes_from_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    suite = get_suite("petri")
    task = suite.tasks("l4-v1")[0]
    boundary = task.ground_truth["boundary"]
    name, value, tolerance = boundary["parameter"], boundary["value"], boundary["tolerance"]
    ends = {"config_a": {name: boundary["low"]}, "config_b": {name: boundary["high"]}}
    with FakeEndpoint() as fake:
        fake.script.extend(
            [
                Say(json.dumps({"tool": "experiment", "args": ends})),
                Say(json.dumps({"tool": "submit", "args": {"boundary": value + 2 * tolerance}})),
            ]
        )
        agent = AgentOptions(
            name="llm", model=f"openai-compatible/fake@{fake.url}", options={"mode": "text", "context_window": "128000"}
        )
        Runner(suite, RunConfig.for_suite(suite, [agent], split="l4-v1", tasks=[task.id]), tmp_path).run()
        texts = [text for request in fake.requests for text in conversation_texts(request.body)]
    assert f"scan parameter: {name}" in texts[1] and "undisclosed" in texts[1]
    ((shifter, hidden),) = task.ground_truth["changed"].items()
    assert shifter not in texts[1] and not any(repr(value) in text or f"{hidden:g}" in text for text in texts)
    (episode,) = RunDir(tmp_path).iter_episodes()
    # two tolerances off: half the accuracy; the ends bracket the answer; one call of eight
    assert episode.score.components["accuracy"] == 25.0 and episode.score.components["rigor"] == 30.0
    assert episode.score.value == 25.0 + 30.0 + 17.5 and not episode.score.success
    assert suite.score(episode).value == episode.score.value and suite.audit(episode) == episode.audit
    assert episode.audit["support"] == "bracketed" and episode.audit["failures"]["off_boundary"]
