"""The ``llm`` agent through the official SDKs against a real local HTTP endpoint: protocols, accounting,
images, budgets, and faults (malformed replies, 429s, 500s, timeouts, dropped connections)."""

import base64
import json
from collections import deque

import pytest

from discogym.core import EndingKind, Termination, Usage, UserError
from discogym.core.reporting.run_report import build_report
from discogym.core.running.runner import RunConfig
from discogym.core.running.storage import RunDir
from discogym.llm.redaction import Redactor
from tests.core.toy_suite import PICTURE, suite
from tests.llm.conftest import SECRET, episodes, llm_options, run_llm
from tests.llm.fake_endpoint import Calls, Delay, Drop, Normal, Raw, Say, Status, conversation_texts, prompt_tokens

PROVIDERS_AND_MODES = [
    ("openai-compatible", "native"),
    ("openai-compatible", "text"),
    ("openai-compatible", "suite"),
    ("anthropic", "native"),
    ("anthropic", "text"),
    ("anthropic", "suite"),
    ("openai", "native"),
]


@pytest.mark.parametrize(("provider", "mode"), PROVIDERS_AND_MODES)
def test_complete_episodes_with_every_provider_and_protocol(tmp_path, fake, monkeypatch, provider, mode):
    if provider == "openai":  # openai/MODEL with the SDK's own base-URL variable
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        agent = llm_options(fake, mode=mode).model_copy(update={"model": "openai/gpt-4o-mini"})
    else:
        agent = llm_options(fake, provider, mode=mode)
    summary = run_llm(tmp_path, agent)
    assert (summary.written, summary.faults) == (2, {})
    for episode in episodes(tmp_path):
        assert episode.outcome.termination == "submitted" and episode.score.value == 1.0
        assert all(event.usage is not None and event.usage.input_tokens > 0 for event in episode.events)
        assert all(event.usage and event.usage.output_tokens > 0 for event in episode.events)
        assert episode.usage().cached_tokens == sum(e.usage.cached_tokens for e in episode.events if e.usage)
        assert episode.provenance.agent_settings["mode"] == mode
    assert len(fake.requests) == sum(len(e.events) for e in episodes(tmp_path))
    native = [r for r in fake.requests if r.body.get("tools")]
    assert len(native) == (len(fake.requests) if mode == "native" else 0)
    if provider == "openai":  # a known model is priced, and the endpoint the SDK was sent to is recorded
        assert all(e.usage().cost_usd > 0 for e in episodes(tmp_path))
        assert {e.provenance.agent_settings["base_url"] for e in episodes(tmp_path)} == {fake.url}


def test_tokens_are_counted_as_the_endpoint_reports_them(tmp_path, fake):
    run_llm(tmp_path / "openai", llm_options(fake), tasks=["tiny-00"])
    run_llm(tmp_path / "anthropic", llm_options(fake, "anthropic"), tasks=["tiny-00"])
    openai_requests = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    first = episodes(tmp_path / "openai")[0].events[0].usage
    sent = len(json.dumps(openai_requests[0].body["messages"], sort_keys=True)) // 4
    assert first is not None and (first.input_tokens, first.cached_tokens) == (sent, sent // 4)
    # Anthropic reports cache reads and writes apart from input_tokens; discogym's input counts them in.
    anthropic_requests = [r for r in fake.requests if r.path.endswith("/messages")]
    first, second = (e.usage for e in episodes(tmp_path / "anthropic")[0].events[:2])
    assert first is not None and second is not None
    assert first.input_tokens == prompt_tokens(anthropic_requests[0].body, "anthropic")
    assert (first.cached_tokens, first.cache_write_tokens) == (0, first.input_tokens)  # all written, none read
    assert second.input_tokens == prompt_tokens(anthropic_requests[1].body, "anthropic")
    assert second.cached_tokens == first.cache_write_tokens and second.cache_write_tokens > 0


def test_costs_follow_the_price_table_and_users_can_add_prices(tmp_path, fake, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai-compatible/fake": {"input": 1.0, "output": 3.0, "cached_input": 0.5}}))
    monkeypatch.setenv("DISCOGYM_PRICES", str(prices))
    run_llm(tmp_path / "run", llm_options(fake), tasks=["tiny-00"])
    for event in episodes(tmp_path / "run")[0].events:
        usage = event.usage
        assert usage is not None
        fresh = usage.input_tokens - usage.cached_tokens
        expected = (fresh * 1.0 + usage.cached_tokens * 0.5 + usage.output_tokens * 3.0) / 1e6
        assert usage.cost_usd == pytest.approx(expected) and usage.cost_usd > 0


def test_the_key_is_sent_to_the_endpoint_but_never_stored(tmp_path, fake):
    run_llm(tmp_path / "o", llm_options(fake))
    run_llm(tmp_path / "a", llm_options(fake, "anthropic"))
    for request in fake.requests:  # as each SDK sends it (a bearer token, or Anthropic's x-api-key)
        assert SECRET in (request.headers.get("authorization", "") + request.headers.get("x-api-key", ""))
    stored = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(stored) > 4 and not any(SECRET in p.read_text() for p in stored)
    settings = episodes(tmp_path / "o")[0].provenance.agent_settings
    assert settings["key_variable"] == "OPENAI_COMPATIBLE_API_KEY" and settings["base_url"] == fake.url


def test_episodes_against_a_deterministic_endpoint_are_byte_identical(tmp_path, fake):
    run_llm(tmp_path / "one", llm_options(fake, mode="text"))
    run_llm(tmp_path / "two", llm_options(fake, mode="text"))
    first, second = RunDir(tmp_path / "one"), RunDir(tmp_path / "two")
    assert [p.read_bytes() for p in first.episode_paths()] == [p.read_bytes() for p in second.episode_paths()]


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_images_reach_multimodal_models_in_each_wire_format(tmp_path, fake, provider):
    run_llm(tmp_path, llm_options(fake, provider), condition="pictures", tasks=["tiny-00"])
    assert episodes(tmp_path)[0].events[0].result.images  # the log keeps what the agent saw
    last = fake.requests[-1].body["messages"]
    if provider == "anthropic":
        results = [block for m in last if isinstance(m["content"], list) for block in m["content"]]
        images = [part for block in results if block["type"] == "tool_result" for part in block["content"][1:]]
        assert images and images[0]["source"]["media_type"] == "image/png"
        data = images[0]["source"]["data"]
    else:
        # Tool messages carry text only, so the pictures follow them in a user message.
        tool_index = next(i for i, m in enumerate(last) if m["role"] == "tool")
        after = last[tool_index + 1]
        assert after["role"] == "user" and after["content"][0]["type"] == "image_url"
        data = after["content"][0]["image_url"]["url"].removeprefix("data:image/png;base64,")
    assert base64.b64decode(data) == PICTURE


def test_images_can_be_withheld(tmp_path, fake):
    run_llm(tmp_path, llm_options(fake, images="false"), condition="pictures", tasks=["tiny-00"])
    assert "image_url" not in json.dumps(fake.requests[-1].body)


def test_a_reply_without_a_call_gets_one_retry_then_the_episode_is_a_no_answer(tmp_path, fake):
    fake.script.extend([Say("Let me think about it.")])
    run_llm(tmp_path / "retried", llm_options(fake), tasks=["tiny-00"])
    retried = episodes(tmp_path / "retried")[0]
    assert retried.score.value == 1.0
    assert str(retried.events[0].agent_message).startswith("Let me think about it.")
    assert "Your reply could not be used: it called no tool" in conversation_texts(fake.requests[1].body)[-1]
    sent = [len(json.dumps(r.body["messages"], sort_keys=True)) // 4 for r in fake.requests[:2]]
    assert (retried.events[0].usage or Usage()).input_tokens == sum(sent)  # both replies are paid for

    fake.script.extend([Say("hmm"), Say("still thinking")])
    run_llm(tmp_path / "gave-up", llm_options(fake), tasks=["tiny-00"])
    gave_up = episodes(tmp_path / "gave-up")[0]
    assert (gave_up.outcome.status, gave_up.outcome.termination, gave_up.events) == ("completed", "no_answer", [])
    assert str(gave_up.outcome.agent_message).startswith("it called no tool; last reply: 'still thinking'")
    assert gave_up.usage().input_tokens > 0 and gave_up.score.value == 0.0


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_text_protocol_replies_that_are_not_one_json_call_are_retried_once(tmp_path, fake, provider):
    fake.script.extend([Say('I will probe 4: {"tool": "probe", "args": {"n": 4}}')])
    run_llm(tmp_path / "ok", llm_options(fake, provider, mode="text"), tasks=["tiny-00"])
    assert episodes(tmp_path / "ok")[0].score.value == 1.0
    fake.script.extend([Say("probe 4"), Say('{"tool": "probe", "args": [4]}')])
    run_llm(tmp_path / "no", llm_options(fake, provider, mode="text"), tasks=["tiny-00"])
    ended = episodes(tmp_path / "no")[0].outcome
    assert ended.termination == "no_answer"
    assert str(ended.agent_message).startswith('"args" must be a JSON object')


def test_suite_syntax_replies_the_environment_cannot_parse_are_retried_once(tmp_path, fake):
    fake.script.extend([Say("probe four"), Say("I submit 3")])
    run_llm(tmp_path, llm_options(fake, mode="suite"), tasks=["tiny-00"])
    ended = episodes(tmp_path)[0].outcome
    assert ended.termination == "no_answer"
    assert str(ended.agent_message).startswith("answer with one line: 'probe N' or 'submit N'")
    assert "You play the digit game" in conversation_texts(fake.requests[0].body)[0]  # the suite's own prompt


def test_malformed_native_calls_come_back_as_tool_errors_and_the_episode_goes_on(tmp_path, fake):
    fake.script.extend([Calls([("probe", "{not json")]), Calls([("teleport", "{}")]), Calls([("probe", "[4]")])])
    run_llm(tmp_path, llm_options(fake), tasks=["tiny-00"])
    episode = episodes(tmp_path)[0]
    assert episode.score.value == 1.0
    errors = [str(event.result.error) for event in episode.events[:3]]
    assert "arguments are not valid JSON" in errors[0] and "{not json" in str(episode.events[0].call.args)
    assert errors[1].startswith("unknown tool 'teleport'")
    # Arguments that are not an object are read as the tool's first argument (Inspect's rule), checked as usual.
    assert episode.events[2].call.args == {"n": [4]} and errors[2] != "None"


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_several_native_calls_in_one_reply_are_all_made_before_the_model_is_asked_again(tmp_path, fake, provider):
    fake.script.extend([Calls([("probe", '{"n": 0}'), ("probe", '{"n": 9}'), ("roll", "{}")])])
    run_llm(tmp_path, llm_options(fake, provider), tasks=["tiny-00"])
    episode = episodes(tmp_path)[0]
    assert [e.call.tool for e in episode.events[:3]] == ["probe", "probe", "roll"]
    assert episode.events[1].usage is None and episode.events[0].usage is not None  # one reply, paid once
    second = fake.requests[1].body["messages"]
    if provider == "anthropic":
        results = [
            b for m in second if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_result"
        ]
        assert [b["tool_use_id"] for b in results] == ["toolu_1_0", "toolu_1_1", "toolu_1_2"]
    else:
        assert [m["tool_call_id"] for m in second if m["role"] == "tool"] == ["call_2_0", "call_2_1", "call_2_2"]
    assert episode.score.value == 1.0


@pytest.mark.parametrize(
    "fault",
    [
        Status(429, {"retry-after-ms": "20"}, "rate limited"),
        Status(500),
        Status(503, {"retry-after": "0.01"}),
        Delay(1.5),
        Drop(),
    ],
    ids=["429", "500", "503", "timeout", "dropped"],
)
@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_transient_faults_are_retried_with_backoff_and_the_episode_is_unaffected(
    tmp_path, fake, fault, provider, capfd
):
    fake.script.append(fault)
    summary = run_llm(tmp_path, llm_options(fake, provider, timeout_s="0.5"), tasks=["tiny-00"])
    assert (summary.written, summary.faults) == (1, {})
    episode = episodes(tmp_path)[0]
    assert episode.score.value == 1.0 and len(fake.requests) == len(episode.events) + 1
    assert fake.requests[0].body == fake.requests[1].body  # the same request, sent again
    failed = episode.usage()  # the failed attempt is counted apart: what it was billed, no server says
    billed = sum(event.usage.input_tokens for event in episode.events if event.usage is not None)
    assert (failed.failed_attempts, failed.input_tokens) == (1, billed)
    assert failed.failed_input_tokens > 0  # what it sent, as discogym counts a prompt
    said = capfd.readouterr().err  # the retry is said, with what to do when a local server was slow
    assert said.count(f"discogym: {provider}/fake: attempt 1 failed (") == 1
    assert ("a longer timeout_s" in said) == isinstance(fault, Delay)


@pytest.mark.parametrize(
    "faults",
    [[Status(500), Status(500)], [Status(429), Status(429)], [Raw(b"<html>bad gateway</html>")], [Delay(1.5)] * 2],
    ids=["500s", "429s", "garbage", "timeouts"],
)
@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_an_endpoint_that_stays_down_is_an_infrastructure_fault_never_the_agents_failure(
    tmp_path, fake, faults, provider
):
    fake.script.extend(faults)
    agent = llm_options(fake, provider, timeout_s="0.5")
    summary = run_llm(tmp_path, agent, tasks=["tiny-00"])
    assert (summary.written, summary.complete) == (0, False)
    (message,) = summary.faults.values()
    assert f"model endpoint {provider}/fake failed after retries" in message and SECRET not in message
    assert RunDir(tmp_path).episode_paths() == []
    again = run_llm(tmp_path, agent, tasks=["tiny-00"])  # the next pass
    assert (again.written, again.complete) == (1, True) and episodes(tmp_path)[0].score.value == 1.0


def test_what_a_play_lost_to_a_fault_had_cost_counts_in_the_runs_totals(tmp_path, fake, capfd):
    fake.script.extend([Normal(), Status(500), Status(500)])  # the second request fails for good (one retry)
    agent = llm_options(fake)
    lost = run_llm(tmp_path, agent, tasks=["tiny-00"])
    assert (lost.written, lost.lost_plays, lost.lost_unknown) == (0, 1, 0)
    assert lost.lost_spent.failed_attempts == 2 and lost.lost_spent.failed_input_tokens > 0
    said = capfd.readouterr().err
    assert "attempt 1 failed (InternalServerError); the next in" in said
    assert "attempt 2 failed (InternalServerError); no retry left" in said
    (line,) = (tmp_path / "faults.jsonl").read_text().splitlines()
    assert json.loads(line)["episode"] == next(iter(lost.faults)) and "failed after retries" in line
    run_llm(tmp_path, agent, tasks=["tiny-00"])  # played again, to its end
    episode = episodes(tmp_path)[0]
    first = episode.events[0].usage  # the same first request as the lost play's, billed the same
    assert first is not None and first.input_tokens > 0
    assert (lost.lost_spent.input_tokens, lost.lost_spent.output_tokens) == (first.input_tokens, first.output_tokens)
    header = build_report(tmp_path).header
    assert header.input_tokens == episode.usage().input_tokens + first.input_tokens
    assert header.output_tokens == episode.usage().output_tokens + first.output_tokens
    assert (header.lost_plays, header.failed_attempts) == (1, 2)
    lines = dict(header.lines())
    assert lines["of them in no counted episode"] == (
        f"{first.input_tokens:,} in, {first.output_tokens:,} out, $0.0000: "
        "1 play abandoned by infrastructure faults (faults.jsonl)"
    )
    assert lines["failed attempts"].startswith("2 failed attempts of a request (about ")


def test_a_request_the_endpoint_refuses_for_good_ends_the_episode_as_a_no_answer(tmp_path, fake):
    fake.script.extend([Normal(), Status(400, message="maximum context length exceeded")])
    run_llm(tmp_path, llm_options(fake), tasks=["tiny-00"])
    ended = episodes(tmp_path)[0].outcome
    assert ended.termination == "no_answer" and "maximum context length exceeded" in str(ended.agent_message)
    assert str(ended.agent_message).startswith("the endpoint refused the request")


def test_llama_cpps_refusal_of_a_request_longer_than_its_window_is_a_context_overflow(tmp_path, fake):
    said = "request (1613 tokens) exceeds the available context size (1536 tokens), try increasing it"
    fake.script.extend([Normal(), Status(400, message=said)])  # as llama.cpp's server words it
    run_llm(tmp_path, llm_options(fake, context="full"), tasks=["tiny-00"])
    ended = episodes(tmp_path)[0].outcome
    assert ended.termination == "context_overflow" and said in str(ended.agent_message)
    assert "Request:" not in str(ended.agent_message)  # the provider's words, not Inspect's dump of the request


@pytest.mark.parametrize("code", [400, 422])
def test_a_refused_first_request_is_a_configuration_fault_not_the_models_answer(tmp_path, fake, code):
    fake.script.append(Status(code, message="unsupported parameter: max_tokens"))
    summary = run_llm(tmp_path, llm_options(fake), tasks=["tiny-00"])
    assert (summary.written, summary.complete) == (0, False)
    (message,) = summary.faults.values()
    assert "refused the episode's first request" in message and "unsupported parameter: max_tokens" in message


def test_budgets_end_the_episode_between_decisions(tmp_path, fake, monkeypatch):
    summary = run_llm(tmp_path / "tokens", llm_options(fake, token_limit=100), tasks=["tiny-01"])
    episode = episodes(tmp_path / "tokens")[0]
    assert summary.written == 1 and episode.outcome.termination == "token_limit"
    used = [e.usage.input_tokens + e.usage.output_tokens for e in episode.events if e.usage]
    assert sum(used[:-1]) < 100 <= sum(used)  # checked before each decision: the last one overshoots
    assert (
        episode.key.token_limit == 100
        and episode.key.agent_label() == "llm[backoff_s=0.05,retries=1,timeout_s=5,token_limit=100]"
    )

    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai-compatible/fake": {"input": 1000.0, "output": 1000.0}}))
    monkeypatch.setenv("DISCOGYM_PRICES", str(prices))
    run_llm(tmp_path / "cost", llm_options(fake, cost_limit=0.2), tasks=["tiny-01"])
    episode = episodes(tmp_path / "cost")[0]
    assert episode.outcome.termination == "cost_limit" and episode.usage().cost_usd >= 0.2
    assert str(episode.outcome.agent_message).startswith("cost_limit reached:")


def test_a_cost_limit_needs_a_price(fake):
    with pytest.raises(UserError, match="--cost-limit needs a price for openai-compatible/fake"):
        RunConfig.for_suite(suite, [llm_options(fake, cost_limit=1.0)])


def test_a_model_without_its_key_is_skipped_with_a_clear_message(fake, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    skipped: list[str] = []
    config = RunConfig.for_suite(suite, [llm_options(fake, "anthropic"), "bisect"], skipped=skipped)
    assert [a.name for a in config.agents] == ["bisect"]
    assert skipped == [f"anthropic/fake@{fake.root}: no API key; set ANTHROPIC_API_KEY to run it"]
    with pytest.raises(UserError, match=r"no agent left to run .*set ANTHROPIC_API_KEY"):
        RunConfig.for_suite(suite, [llm_options(fake, "anthropic")], skipped=[])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "telepathy"}, "mode: Input should be 'native', 'text' or 'suite'"),
        ({"retries": "-1"}, "retries: Input should be greater than or equal to 0"),
        ({"colour": "blue"}, "colour: unknown option"),
        ({"images": "maybe"}, "images: Input should be a valid boolean"),
    ],
)
def test_bad_agent_options_are_user_errors(fake, options, message):
    with pytest.raises(UserError, match=message):
        RunConfig.for_suite(suite, [llm_options(fake, **options)])


def test_llm_needs_a_model():
    with pytest.raises(UserError, match="agent 'llm' needs --model"):
        RunConfig.for_suite(suite, ["llm"])


def test_reply_caps_and_temperature_reach_the_endpoint_under_each_apis_name(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    official = llm_options(fake, max_tokens="64").model_copy(update={"model": "openai/gpt-4o"})
    run_llm(tmp_path / "openai", official, tasks=["tiny-00"])
    reasoning = llm_options(fake, max_tokens="64").model_copy(update={"model": "openai/gpt-5"})
    run_llm(tmp_path / "gpt-5", reasoning, tasks=["tiny-00"])
    run_llm(tmp_path / "local", llm_options(fake, max_tokens="64", temperature="0.5"), tasks=["tiny-00"])
    run_llm(tmp_path / "anthropic", llm_options(fake, "anthropic"), tasks=["tiny-00"])
    bodies = {(r.body["model"], r.path.rsplit("/", 1)[-1]): r.body for r in fake.requests}
    official_body, local_body = bodies[("gpt-4o", "completions")], bodies[("fake", "completions")]
    assert official_body["max_tokens"] == 64 and "temperature" not in official_body
    assert bodies[("gpt-5", "responses")]["max_output_tokens"] == 64  # GPT-5 goes through the Responses API
    assert local_body["max_tokens"] == 64 and local_body["temperature"] == 0.5
    assert bodies[("fake", "messages")]["max_tokens"] > 0  # Anthropic requires a cap; Inspect sets one


DEEP_JSON = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_a_deeply_nested_reply_is_a_fault_like_any_unreadable_reply(tmp_path, fake, provider):
    # Anthropic's replies are streamed (server-sent events): the nesting arrives as an event's data.
    fake.script.append(
        Raw(b"event: message_start\ndata: " + DEEP_JSON + b"\n\n" if provider == "anthropic" else DEEP_JSON)
    )
    agent = llm_options(fake, provider)
    summary = run_llm(tmp_path, agent, tasks=["tiny-00"])
    assert (summary.written, summary.complete) == (0, False)  # retried on the next pass, not the agent's failure
    (message,) = summary.faults.values()
    assert f"model endpoint {provider}/fake failed after retries: RecursionError" in message
    assert run_llm(tmp_path, agent, tasks=["tiny-00"]).complete


def _echoes(key: str) -> list[str]:
    return [key, key.lower(), key.upper(), " ".join(key), base64.b64encode(key.encode()).decode()]


@pytest.mark.parametrize("key", [SECRET, "k3Y"], ids=["long", "short"])
@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_a_key_the_endpoint_echoes_in_any_form_is_never_printed(tmp_path, fake, monkeypatch, provider, key):
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_COMPATIBLE_API_KEY"):
        monkeypatch.setenv(variable, key)
    echoed = "; ".join(f"form {form} rejected" for form in _echoes(key))
    fake.script.extend([Status(401, message=echoed)] * 2)
    summary = run_llm(tmp_path, llm_options(fake, provider), tasks=["tiny-00"])
    (message,) = summary.faults.values()
    assert message.count("form [key] rejected") == 5, message
    assert all(form not in message for form in _echoes(key))


def test_a_short_key_is_redacted_only_where_it_stands_alone():
    redact = Redactor("k3Y")
    assert redact("the key K3Y is wrong; k3Yk3Y and ak3y stay") == "the key [key] is wrong; k3Yk3Y and ak3y stay"


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_a_model_that_repeats_the_key_does_not_get_it_stored(tmp_path, fake, provider):
    spaced = " ".join(SECRET)
    fake.script.extend([Say(f"my key is {SECRET}"), Calls([("probe", json.dumps({"n": 4, "note": spaced.lower()}))])])
    run_llm(tmp_path, llm_options(fake, provider), tasks=["tiny-00"])
    episode = episodes(tmp_path)[0]
    assert str(episode.events[0].agent_message).startswith("my key is [key]")
    assert episode.events[0].call.args == {"n": 4, "note": "[key]"}
    stored = [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(form in text for form in (SECRET, spaced, spaced.lower()) for text in stored)
    assert all(SECRET not in text for text in conversation_texts(fake.requests[-1].body))  # nor sent back to it


@pytest.mark.parametrize(
    ("provider", "refusal"),
    [
        ("openai-compatible", Status(400, message="too many tokens", error_code="context_length_exceeded")),
        ("anthropic", Status(400, message="prompt is too long: 250000 tokens > 200000 maximum")),
    ],
    ids=["openai", "anthropic"],
)
def test_a_conversation_too_long_for_the_context_window_ends_as_a_context_overflow(tmp_path, fake, provider, refusal):
    fake.script.extend([Normal(), refusal])
    run_llm(tmp_path, llm_options(fake, provider), tasks=["tiny-00"])
    ended = episodes(tmp_path)[0].outcome
    assert ended.termination == Termination.CONTEXT_OVERFLOW and ended.termination.kind == EndingKind.LIMIT
    assert "the conversation no longer fits the model's context window" in str(ended.agent_message)


def test_a_window_sends_the_head_and_the_newest_turns_with_each_call_beside_its_result(tmp_path, fake):
    run_llm(tmp_path, llm_options(fake, context="window", window_turns="1"), tasks=["tiny-00"])
    assert episodes(tmp_path)[0].score.value == 1.0
    for request in fake.requests[1:]:
        roles = [m["role"] for m in request.body["messages"]]
        assert roles == ["system", "user", "assistant", "tool"]  # the brief, then the last reply and its result
    assert episodes(tmp_path)[0].provenance.agent_settings["context"] == "window"


def test_an_overflow_shrinks_the_window_and_asks_again_until_nothing_more_can_be_dropped(tmp_path, fake):
    too_long = Status(400, message="too many tokens", error_code="context_length_exceeded")
    fake.script.extend([Normal(), Normal(), too_long])
    run_llm(tmp_path / "window", llm_options(fake, context="window", window_turns="4"), tasks=["tiny-00"])
    refused, again = fake.requests[2:4]
    assert len(again.body["messages"]) < len(refused.body["messages"])  # two turns sent, then one
    assert episodes(tmp_path / "window")[0].score.value == 1.0
    fake.script.extend([Normal(), too_long])
    run_llm(tmp_path / "one", llm_options(fake, context="window", window_turns="1"), tasks=["tiny-00"])
    ended = episodes(tmp_path / "one")[0].outcome
    assert ended.termination == Termination.CONTEXT_OVERFLOW and "context=window" in str(ended.agent_message)
    assert fake.script == deque()  # the overflowing request was not sent again
