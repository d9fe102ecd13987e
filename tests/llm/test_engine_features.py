"""What Inspect's model layer brings to the llm agent, through the real SDKs against the fake endpoint: prompt
caching, reasoning in each provider's form, thinking blocks across tool turns, more providers, and a reply that
spends its whole output budget on reasoning."""

import importlib.util
from typing import Any

import pytest

from discogym.core import AgentOptions, Termination, UserError
from discogym.llm.agent import make_llm_agent
from discogym.llm.models import BUILTIN_PRICES
from tests.llm.conftest import episodes, llm_options, run_llm
from tests.llm.fake_endpoint import Exhausted, FakeEndpoint, Request


def model(fake: FakeEndpoint, name: str, **options: str) -> AgentOptions:
    """The llm agent on ``name`` (an Inspect model name) pointed at the fake endpoint."""
    root = name.startswith(("anthropic/", "google/"))
    return llm_options(fake, "openai-compatible", None, None, **options).model_copy(
        update={"model": f"{name}@{fake.root if root else fake.url}"}
    )


def messages_requests(fake: FakeEndpoint) -> list[Request]:
    return [r for r in fake.requests if r.path.endswith("/messages")]


def cache_markers(body: dict[str, Any]) -> list[str]:
    """Where an Anthropic request carries cache_control: the request itself (automatic caching: a breakpoint on
    its last block, the newest turn), tools, system, and the messages by index."""
    places = ["request"] if "cache_control" in body else []
    places += [f"tool {t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list) and any("cache_control" in block for block in system):
        places.append("system")
    for index, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list) and any("cache_control" in block for block in content):
            places.append(f"message {index}")
    return places


def test_anthropic_prompts_are_cached_and_usage_splits_writes_from_reads(tmp_path, fake):
    run_llm(tmp_path, model(fake, "anthropic/claude-opus-4-5"), tasks=["tiny-00"])
    requests = messages_requests(fake)
    assert len(requests) >= 3
    for request in requests:  # system, tools, and a breakpoint on the newest turn, rolling forward
        markers = cache_markers(request.body)
        assert {"request", "system"} <= set(markers) and any(m.startswith("tool") for m in markers)
    for request in requests[1:]:  # and one on the turn before it, so the next request reads it back
        assert f"message {len(request.body['messages']) - 2}" in cache_markers(request.body)
    events = episodes(tmp_path)[0].events
    usages = [e.usage for e in events if e.usage is not None]
    assert usages[0].cache_write_tokens > 0 and usages[0].cached_tokens == 0
    assert all(u.cached_tokens > 0 and u.cache_write_tokens > 0 for u in usages[1:])
    price = BUILTIN_PRICES["anthropic/claude-opus-4-5"]
    assert (price.input, price.cache_write, price.cache_read, price.output) == (5.0, 6.25, 0.5, 25.0)
    for used in usages:  # each part at its own rate: writes 1.25x input, reads 0.1x
        fresh = used.input_tokens - used.cached_tokens - used.cache_write_tokens
        expected = fresh * 5.0 + used.cache_write_tokens * 6.25 + used.cached_tokens * 0.5 + used.output_tokens * 25.0
        assert used.cost_usd == pytest.approx(expected / 1e6)
    assert price.cost(usages[1]) == pytest.approx(usages[1].cost_usd)


def test_caching_can_be_turned_off(tmp_path, fake):
    run_llm(tmp_path, model(fake, "anthropic/claude-opus-4-5", cache="false"), tasks=["tiny-00"])
    assert all(cache_markers(r.body) == [] for r in messages_requests(fake))
    usages = [e.usage for e in episodes(tmp_path)[0].events if e.usage is not None]
    assert all(u.cached_tokens == 0 and u.cache_write_tokens == 0 for u in usages)
    assert episodes(tmp_path)[0].provenance.agent_settings["cache"] is False


def test_reasoning_effort_reaches_openai_in_its_form_and_reasoning_is_recorded_and_priced(tmp_path, fake):
    run_llm(tmp_path, model(fake, "openai/gpt-5", reasoning_effort="low"), tasks=["tiny-00"])
    asked = [r for r in fake.requests if r.path.endswith("/responses") and r.body.get("tools")]
    assert asked and all(r.body["reasoning"]["effort"] == "low" for r in asked)
    episode = episodes(tmp_path)[0]
    first = episode.events[0]
    assert first.usage is not None and first.usage.reasoning_tokens > 0
    assert first.usage.output_tokens > first.usage.reasoning_tokens  # reasoning is part of the output
    fresh = first.usage.input_tokens - first.usage.cached_tokens
    expected = fresh * 1.25 + first.usage.cached_tokens * 0.125 + first.usage.output_tokens * 10.0
    assert first.usage.cost_usd == pytest.approx(expected / 1e6)  # reasoning priced as output
    assert first.reasoning is not None and "Bisecting" in first.reasoning
    assert episode.usage().reasoning_tokens == sum(e.usage.reasoning_tokens for e in episode.events if e.usage)
    assert episode.provenance.agent_settings["reasoning_effort"] == "low"
    assert episode.provenance.agent_settings["context_window"] == 400_000


def test_an_anthropic_thinking_budget_is_sent_and_signed_thinking_comes_back_on_the_next_turn(tmp_path, fake):
    run_llm(tmp_path, model(fake, "anthropic/claude-opus-4-5", reasoning_tokens="2048"), tasks=["tiny-00"])
    first, second = messages_requests(fake)[:2]
    assert first.body["thinking"]["type"] == "enabled" and first.body["thinking"]["budget_tokens"] == 2048
    assert first.body["max_tokens"] > 2048  # room for the action after the thinking
    replies = [m for m in second.body["messages"] if m["role"] == "assistant"]
    thinking = [block for block in replies[0]["content"] if block["type"] == "thinking"]
    assert thinking and thinking[0]["signature"] and "Bisecting" in thinking[0]["thinking"]
    events = episodes(tmp_path)[0].events
    used = events[0].usage
    assert events[0].reasoning == thinking[0]["thinking"] and used is not None and used.reasoning_tokens > 0


def test_google_openrouter_and_vllm_models_reach_a_local_endpoint_in_their_wire_formats(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "sk-google-test-key")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-openrouter-test-key")
    run_llm(tmp_path / "google", model(fake, "google/gemini-2.5-pro"), tasks=["tiny-00"])
    run_llm(
        tmp_path / "openrouter", model(fake, "openrouter/qwen/qwen3-32b", reasoning_effort="low"), tasks=["tiny-00"]
    )
    google = [r for r in fake.requests if ":generateContent" in r.path]
    assert google and all("contents" in r.body and "functionDeclarations" in str(r.body["tools"]) for r in google)
    assert google[0].path.endswith("/models/gemini-2.5-pro:generateContent")
    routed = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert routed and all(r.body["model"] == "qwen/qwen3-32b" and r.body["reasoning"] for r in routed)
    run_llm(tmp_path / "vllm", model(fake, "vllm/meta-llama/Llama-3.1-8B-Instruct"), tasks=["tiny-00"])  # a server
    assert episodes(tmp_path / "vllm")[0].score.value == 1.0 and fake.requests[-1].body["model"].startswith(
        "meta-llama"
    )
    for name in ("google", "openrouter"):
        episode = episodes(tmp_path / name)[0]
        assert episode.score.value == 1.0 and episode.usage().reasoning_tokens > 0
        assert episode.usage().cost_usd > 0  # both priced from the one table
        assert episode.events[0].reasoning


def test_a_reply_that_spends_its_budget_on_reasoning_is_asked_again_with_more_room(tmp_path, fake):
    fake.script.append(Exhausted())
    run_llm(tmp_path, model(fake, "anthropic/claude-opus-4-5", max_tokens="300"), tasks=["tiny-00"])
    first, second = messages_requests(fake)[:2]
    assert (first.body["max_tokens"], second.body["max_tokens"]) == (300, 600)
    episode = episodes(tmp_path)[0]
    assert episode.score.value == 1.0 and episode.outcome.termination == Termination.SUBMITTED
    spent = episode.events[0].usage
    assert spent is not None and spent.output_tokens >= 300  # the spent reply is paid for, on the call it led to


def test_a_reply_that_spends_its_budget_on_reasoning_twice_is_a_no_answer_that_says_why(tmp_path, fake):
    fake.script.extend([Exhausted(), Exhausted()])
    run_llm(tmp_path, model(fake, "anthropic/claude-opus-4-5", max_tokens="300"), tasks=["tiny-00"])
    episode = episodes(tmp_path)[0]
    assert episode.outcome.termination == Termination.NO_ANSWER and episode.events == []
    assert "spent its whole output budget (600 tokens) on reasoning" in str(episode.outcome.agent_message)
    assert [r.body["max_tokens"] for r in messages_requests(fake)] == [300, 600]
    final = episode.outcome.final_usage
    assert final is not None and final.output_tokens == 900 and episode.outcome.final_reasoning


def test_a_provider_whose_sdk_is_missing_is_a_plain_user_error(fake, monkeypatch):
    monkeypatch.setenv("MISTRAL_API_KEY", "sk-mistral-test-key")
    if importlib.util.find_spec("mistralai") is not None:
        pytest.skip("mistralai is installed here")
    with pytest.raises(UserError, match=r"pip install mistralai") as raised:
        make_llm_agent(AgentOptions(name="llm", model=f"mistral/mistral-large-latest@{fake.url}"))
    assert "[bold]" not in str(raised.value)


def test_tool_choice_required_asks_every_reply_for_a_call_and_only_where_tools_are_offered(tmp_path, fake):
    run_llm(tmp_path, llm_options(fake, tool_choice="required"))
    sent = [r.body for r in fake.requests if r.path.endswith("/chat/completions")]
    assert sent and all(body["tool_choice"] == "required" and body["tools"] for body in sent)
    assert episodes(tmp_path)[0].provenance.agent_settings["tool_choice"] == "required"
    run_llm(tmp_path / "auto", llm_options(fake))
    assert fake.requests[-1].body["tool_choice"] == "auto"
    with pytest.raises(UserError, match="only mode=native offers tools"):
        make_llm_agent(llm_options(fake, tool_choice="required", mode="text"))
