"""The metering proxy between an agent CLI and its model endpoint: the official SDKs, pointed at it, get the fake
endpoints' answers intact (streamed or whole), the usage of every answer is summed and priced, and once the
budget is spent every model request is refused with a 400 in the provider's format and never reaches the
endpoint. The end-to-end tests run the real CLIs with a small ``--token-limit`` (skipped when not installed)."""

import http.client
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import openai
import pytest

from discogym.agent_clis.meter import Meter, UsageReader, is_model_request
from discogym.core import AgentOptions, Usage
from discogym.core.running.storage import RunDir
from discogym.llm.models import Price
from tests.agent_clis.fake_endpoints import AnthropicEndpoint, ResponsesEndpoint, sse
from tests.agent_clis.test_cli_agent import CLIS, DIGIT, run_cli_agent
from tests.conftest import run_discogym
from tests.llm.fake_endpoint import Calls, Say

UNLIMITED = AgentOptions(name="cli")
MESSAGES: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hello"}]


def port(meter: Meter) -> int:
    """The port ``meter`` listens on."""
    return int(urllib.parse.urlsplit(meter.url).port or 0)


def send(
    meter: Meter, method: str, path: str, body: object = None, prefix: str | None = None
) -> tuple[int, dict[str, Any]]:
    """One plain request through ``meter`` to ``path`` after ``prefix`` (by default the meter's secret path, as
    its CLI sends): the status and the JSON answer."""
    prefix = urllib.parse.urlsplit(meter.url).path if prefix is None else prefix
    connection = http.client.HTTPConnection("127.0.0.1", port(meter), timeout=10)
    try:
        connection.request(method, prefix + path, None if body is None else json.dumps(body))
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


def budget(**limits: float) -> AgentOptions:
    return AgentOptions.model_validate({"name": "cli", **limits})


class meter_for:
    """A started meter in front of ``upstream``, closed at the end of the ``with``."""

    def __init__(self, upstream: str, limits: AgentOptions, price: Price | None = None) -> None:
        self.meter = Meter(upstream, limits, price)

    def __enter__(self) -> Meter:
        return self.meter.start()

    def __exit__(self, *exc: object) -> None:
        self.meter.close()


def test_anthropic_streams_and_whole_messages_pass_intact_and_their_usage_is_summed():
    with AnthropicEndpoint() as endpoint, meter_for(endpoint.root, UNLIMITED, Price(input=3, output=15)) as meter:
        endpoint.script.extend([Say("streamed hello"), Calls([("probe", '{"n": 4}')]), Say("whole hello")])
        client = anthropic.Anthropic(base_url=meter.url, api_key="test-key", max_retries=0)
        with client.messages.stream(model="claude-x", max_tokens=100, messages=MESSAGES) as stream:
            texts = list(stream.text_stream)
            first = stream.get_final_message()
        with client.messages.stream(model="claude-x", max_tokens=100, messages=MESSAGES) as stream:
            second = stream.get_final_message()
        third = client.messages.create(model="claude-x", max_tokens=100, messages=MESSAGES)
    assert "".join(texts) == "streamed hello"
    assert second.content[0].type == "tool_use" and second.content[0].input == {"n": 4}
    assert third.content[0].type == "text" and third.content[0].text == "whole hello"
    expected = Usage()
    for message in (first, second, third):
        cached = message.usage.cache_read_input_tokens or 0
        expected += Usage(
            input_tokens=message.usage.input_tokens + cached,
            output_tokens=message.usage.output_tokens,
            cached_tokens=cached,
        )
    assert expected.input_tokens > 0 and expected.cached_tokens > 0
    assert meter.usage == expected.model_copy(update={"cost_usd": Price(input=3, output=15).cost(expected)})
    assert all("test-key" in str(r.headers) for r in endpoint.model_requests)  # the key forwarded
    assert meter.exhausted is None


def test_responses_streams_pass_intact_and_their_usage_is_summed():
    with ResponsesEndpoint() as endpoint, meter_for(endpoint.url, UNLIMITED) as meter:
        endpoint.script.extend([Say("hello there"), Calls([("probe", '{"n": 2}')])])
        client = openai.OpenAI(base_url=meter.url, api_key="test-key", max_retries=0)
        finals = []
        for _ in range(2):
            with client.responses.stream(model="gpt-x", input="hello") as stream:
                finals.append(stream.get_final_response())
    assert finals[0].output_text == "hello there"
    assert finals[1].output[0].type == "function_call" and finals[1].output[0].arguments == '{"n": 2}'
    usages = [final.usage for final in finals if final.usage is not None]
    assert meter.usage == Usage(
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        cached_tokens=sum(u.input_tokens_details.cached_tokens for u in usages),
    )
    assert meter.usage.input_tokens > 0
    assert endpoint.model_requests[0].headers["authorization"] == "Bearer test-key"


def test_once_the_token_limit_is_reached_model_requests_get_an_anthropic_400_and_never_reach_the_endpoint():
    with AnthropicEndpoint() as endpoint, meter_for(endpoint.root, budget(token_limit=1)) as meter:
        endpoint.script.extend([Say("one"), Say("two")])
        client = anthropic.Anthropic(base_url=meter.url, api_key="test-key", max_retries=0)
        first = client.messages.create(model="claude-x", max_tokens=100, messages=MESSAGES)
        assert meter.exhausted is None  # reached, but nothing was refused yet
        for _ in range(2):
            with pytest.raises(anthropic.BadRequestError) as refused:
                client.messages.create(model="claude-x", max_tokens=100, messages=MESSAGES)
            assert "token limit is spent" in str(refused.value)
        spent = meter.usage
    assert first.content[0].type == "text" and first.content[0].text == "one"
    assert len(endpoint.model_requests) == 1
    assert meter.exhausted == "token_limit"
    assert spent.input_tokens + spent.output_tokens > 0  # the refusals added nothing


def test_once_the_cost_limit_is_reached_responses_requests_get_an_openai_400():
    price = Price(input=1_000_000, output=1_000_000)  # a dollar a token
    with ResponsesEndpoint() as endpoint, meter_for(endpoint.url, budget(cost_limit=1.0), price) as meter:
        endpoint.script.extend([Say("one"), Say("two")])
        client = openai.OpenAI(base_url=meter.url, api_key="test-key", max_retries=0)
        assert [event.type for event in client.responses.create(model="gpt-x", input="hello", stream=True)]
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model="gpt-x", input="hello")
    assert refused.value.code == "budget_exhausted" and "cost limit is spent" in refused.value.message
    assert len(endpoint.model_requests) == 1
    assert meter.exhausted == "cost_limit" and meter.usage.cost_usd >= 1.0


def test_other_requests_pass_after_the_limit_and_do_not_count():
    with AnthropicEndpoint() as endpoint, meter_for(endpoint.root, budget(token_limit=1)) as meter:
        endpoint.script.append(Say("one"))
        assert send(meter, "POST", "/v1/messages", {"messages": MESSAGES})[0] == 200
        assert send(meter, "POST", "/v1/messages", {"messages": MESSAGES})[0] == 400
        status, side = send(meter, "GET", "/v1/models?limit=1")
        assert status == 404 and side["error"]["type"] == "not_found"  # the endpoint's own answer
    assert [r.path for r in endpoint.requests] == ["/v1/messages", "/v1/models?limit=1"]


class SlowStream(BaseHTTPRequestHandler):
    """Answers with two server-sent events a second apart, so a test can see the first arrive before the second."""

    protocol_version = "HTTP/1.1"
    release = threading.Event()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(sse("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 7}}}))
        self.wfile.flush()
        self.release.wait(10)
        self.wfile.write(sse("message_delta", {"type": "message_delta", "usage": {"output_tokens": 3}}))


@pytest.mark.parametrize("prefix", ["", "/wrong-secret", "/x/../SECRET", "/SECRETx", "/SECRE"])
def test_requests_without_the_episodes_secret_path_get_a_403_and_never_reach_the_endpoint(prefix: str):
    with AnthropicEndpoint() as endpoint, meter_for(endpoint.root, UNLIMITED) as meter:
        endpoint.script.append(Say("one"))
        prefix = prefix.replace("SECRET", meter.secret)
        status, answer = send(meter, "POST", "/v1/messages", {"messages": MESSAGES}, prefix)
        assert status == 403 and "secret path" in answer["error"]["message"]
        assert send(meter, "GET", "/v1/models", prefix=prefix)[0] == 403
        assert endpoint.requests == [] and meter.usage == Usage()
        assert send(meter, "POST", "/v1/messages", {"messages": MESSAGES})[0] == 200  # the right secret passes
        assert [request.path for request in endpoint.requests] == ["/v1/messages"]


def test_each_meter_has_its_own_secret_of_at_least_128_bits():
    with meter_for("http://127.0.0.1:9", UNLIMITED) as one, meter_for("http://127.0.0.1:9", UNLIMITED) as two:
        assert one.secret != two.secret and len(one.secret) >= 22  # 32 random bytes, base64: 43 characters
        assert one.url == f"http://127.0.0.1:{port(one)}/{one.secret}"
        status, _ = send(one, "POST", "/v1/messages", {}, prefix=f"/{two.secret}")
        assert status == 403


def test_server_sent_events_are_forwarded_as_they_arrive():
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), SlowStream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with meter_for(f"http://127.0.0.1:{upstream.server_address[1]}", UNLIMITED) as meter:
            connection = http.client.HTTPConnection("127.0.0.1", port(meter), timeout=10)
            connection.request("POST", f"/{meter.secret}/v1/messages", "{}")
            answer = connection.getresponse()
            started = time.monotonic()
            assert answer.readline() == b"event: message_start\n"  # before the endpoint sends the rest
            assert time.monotonic() - started < 5
            SlowStream.release.set()
            rest = answer.read()
            connection.close()
            assert b"message_delta" in rest
            assert meter.usage == Usage(input_tokens=7, output_tokens=3)
    finally:
        upstream.shutdown()
        upstream.server_close()


def test_an_unreachable_endpoint_is_a_502_in_the_provider_format():
    with AnthropicEndpoint() as gone:
        root = gone.root
    with meter_for(root, UNLIMITED) as meter:
        status, answer = send(meter, "POST", "/v1/messages", {})
    assert status == 502 and answer["type"] == "error"
    assert "not reached" in answer["error"]["message"]


def test_the_reader_replaces_anthropic_counts_and_takes_split_events():
    reader = UsageReader("text/event-stream; charset=utf-8")
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 5}}}
    body = sse("message_start", start) + sse("message_delta", {"type": "message_delta", "usage": {"output_tokens": 1}})
    body += sse("message_delta", {"type": "message_delta", "usage": {"output_tokens": 9, "server_tool_use": None}})
    body = body.replace(b"\n", b"\r\n")
    for i in range(0, len(body), 7):  # split anywhere, even inside a line ending
        reader.feed(body[i : i + 7])
    assert reader.usage() == Usage(input_tokens=15, output_tokens=9, cached_tokens=5)


def test_model_requests_are_the_posts_for_an_answer():
    assert is_model_request("POST", "/v1/messages?beta=true") and is_model_request("POST", "/responses")
    assert not is_model_request("POST", "/v1/messages/count_tokens") and not is_model_request("GET", "/v1/messages")


@pytest.fixture(params=sorted(CLIS))
def cli(request, claude, codex) -> str:
    return str(request.param)


def test_a_cli_past_its_token_limit_ends_the_episode_as_token_limit_scored(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        probes = [Calls([("probe", json.dumps({"n": n}))]) for n in range(5)]
        endpoint.script.extend([*probes, Calls([("submit", json.dumps({"n": DIGIT}))]), Say("done")])
        done = run_cli_agent(cli, endpoint, tmp_path, "--token-limit", "1")
        answered = len(endpoint.model_requests)
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert episode.outcome.termination == "token_limit" and episode.score.success is False
    assert answered == 1  # the meter refused the second model request
    assert [e.call.tool for e in episode.events] == ["probe"]
    assert episode.usage().input_tokens > 0 and episode.usage().output_tokens > 0
    assert episode.provenance.agent_settings["usage_from"] == "meter"


def test_a_cli_past_its_cost_limit_ends_the_episode_as_cost_limit_with_the_cost_recorded(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        probes = [Calls([("probe", json.dumps({"n": n}))]) for n in range(5)]
        endpoint.script.extend([*probes, Say("done")])
        done = run_cli_agent(cli, endpoint, tmp_path, "--cost-limit", "0.000001")
        answered = len(endpoint.model_requests)
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert episode.outcome.termination == "cost_limit" and episode.score.success is False
    assert answered == 1 and episode.usage().cost_usd >= 0.000001


def test_a_cost_limit_without_a_price_for_the_model_is_refused():
    done = run_discogym(
        "run", "toy", "--agent", "cli", "--agent-opt", "cli=codex", "--model", "openai-compatible/nameless@"
        "http://127.0.0.1:9/v1", "--cost-limit", "1", OPENAI_API_KEY="test-key"
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error: --cost-limit needs a price for openai-compatible/nameless")
