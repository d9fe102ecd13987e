"""Model strings, keys, prices and the JSON text protocol's parser."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discogym.core import Usage, UserError
from discogym.llm.models import BUILTIN_PRICES, Price, find_price, parse_model, price_table
from discogym.llm.modes import parse_json_call


def test_model_strings_name_provider_model_endpoint_and_key_variable():
    spec = parse_model("openai/gpt-5")
    assert (spec.provider, spec.name, spec.base_url, spec.key_variable) == ("openai", "gpt-5", None, "OPENAI_API_KEY")
    spec = parse_model("openai-compatible/llama3.1:8b@http://127.0.0.1:11434/v1")
    assert (spec.name, spec.base_url) == ("llama3.1:8b", "http://127.0.0.1:11434/v1")
    # An '@' without a URL belongs to the name (Vertex-style ids); one with a URL names a proxy.
    assert parse_model("anthropic/claude-3-5-sonnet@20240620").name == "claude-3-5-sonnet@20240620"
    proxied = parse_model("anthropic/claude-sonnet-4-5@https://proxy.example/anthropic")
    assert (proxied.name, proxied.base_url) == ("claude-sonnet-4-5", "https://proxy.example/anthropic")
    assert parse_model("openai/gpt-5", key_variable="MY_KEY").key_variable == "MY_KEY"


def test_inspect_model_names_are_taken_and_the_old_forms_map_onto_them():
    for name, variable in [
        ("google/gemini-2.5-pro", "GOOGLE_API_KEY"),
        ("openrouter/qwen/qwen3-32b", "OPENROUTER_API_KEY"),
        ("together/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", "TOGETHER_API_KEY"),
        ("groq/llama-3.1-8b-instant", "GROQ_API_KEY"),
        ("bedrock/anthropic.claude-sonnet-4-5", None),
        ("vllm/meta-llama/Llama-3.1-8B-Instruct", None),
    ]:
        spec = parse_model(name)
        assert (spec.inspect_name, spec.key_variable) == (name, variable)
    local = parse_model("openai-compatible/qwen3@http://127.0.0.1:8000/v1")
    assert (local.inspect_name, local.base_url) == ("openai-api/compatible/qwen3", "http://127.0.0.1:8000/v1")
    assert parse_model("vllm/m").api_key() == "no-key"  # a local server, or cloud credentials: no key to check


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpt-5", "is not PROVIDER/MODEL with PROVIDER one of anthropic, "),
        ("openai/", "is not PROVIDER/MODEL"),
        ("mystery/large", "unknown provider 'mystery'"),
        ("openai-compatible/llama", "write openai-compatible/NAME@http://HOST:PORT/v1"),
        ("openai-compatible/@http://127.0.0.1:1/v1", "no model name"),
    ],
)
def test_malformed_model_strings_say_what_is_accepted(text, message):
    with pytest.raises(UserError, match=message):
        parse_model(text)


def test_a_bad_key_variable_name_is_refused():
    with pytest.raises(UserError, match="not an environment variable name"):
        parse_model("openai/gpt-5", key_variable="1 bad")


def test_keys_come_from_the_environment_only(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    assert parse_model("openai/gpt-5").api_key() is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-1")
    assert parse_model("openai/gpt-5").api_key() == "sk-1"
    local = parse_model("openai-compatible/m@http://127.0.0.1:1/v1")
    assert local.api_key() == "no-key"  # local servers need none
    monkeypatch.delenv("TOGETHER_KEY", raising=False)
    assert parse_model("openai-compatible/m@http://127.0.0.1:1/v1", key_variable="TOGETHER_KEY").api_key() is None


def test_prices_by_exact_id_then_longest_family():
    table = dict(BUILTIN_PRICES)
    assert find_price(parse_model("openai/gpt-4o"), table) == BUILTIN_PRICES["openai/gpt-4o"]
    assert find_price(parse_model("openai/gpt-4o-mini-2024-07-18"), table) == BUILTIN_PRICES["openai/gpt-4o-mini"]
    assert find_price(parse_model("openai/gpt-4o-2024-08-06"), table) == BUILTIN_PRICES["openai/gpt-4o"]
    dated = parse_model("anthropic/claude-sonnet-4-5-20250929")
    assert find_price(dated, table) == BUILTIN_PRICES["anthropic/claude-sonnet-4-5"]
    assert find_price(parse_model("openai/gpt-4omega"), table) is None
    assert find_price(parse_model("openai-compatible/gpt-4o@http://h:1/v1"), table) is None


def test_cost_prices_cache_reads_and_writes_each_at_its_own_rate():
    price = Price(input=2.0, output=8.0, cache_read=0.5, cache_write=2.5)
    usage = Usage(input_tokens=1_000_000, cached_tokens=400_000, cache_write_tokens=100_000, output_tokens=500_000)
    assert price.cost(usage) == pytest.approx(0.5 * 2.0 + 0.4 * 0.5 + 0.1 * 2.5 + 0.5 * 8.0)
    assert Price(input=1.0, output=1.0).cost(usage) == pytest.approx(1.5)  # a rate left out is the input's
    assert Price.model_validate({"input": 2, "output": 8, "cached_input": 0.5}).cache_read == 0.5  # the older name


def test_anthropic_prices_bill_cache_writes_above_input_and_reads_below():
    sonnet = BUILTIN_PRICES["anthropic/claude-sonnet-4-5"]
    assert (sonnet.input, sonnet.cache_write, sonnet.cache_read) == (3.0, 3.75, 0.3)


def test_the_price_table_is_extended_from_a_file(tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai-compatible/llama": {"input": 0.1, "output": 0.2}}))
    monkeypatch.setenv("DISCOGYM_PRICES", str(prices))
    table = price_table()
    assert table["openai-compatible/llama"] == Price(input=0.1, output=0.2)
    assert table["openai/gpt-5"] == BUILTIN_PRICES["openai/gpt-5"]
    for content, message in [
        ("[1, 2]", "not a JSON object of prices"),
        ("{", "not a JSON object of prices"),
        ('{"x/y": {"input": -1, "output": 1}}', "x/y: input: Input should be greater than or equal to 0"),
        ('{"x/y": {"input": 1}}', "x/y: output: Field required"),
    ]:
        prices.write_text(content)
        with pytest.raises(UserError, match=message):
            price_table()
    monkeypatch.setenv("DISCOGYM_PRICES", str(tmp_path / "missing.json"))
    with pytest.raises(UserError, match="cannot read DISCOGYM_PRICES"):
        price_table()


def test_a_text_reply_must_be_exactly_one_call_object():
    assert parse_json_call('{"tool": "probe", "args": {"n": 3}}').model_dump() == {"tool": "probe", "args": {"n": 3}}
    assert parse_json_call('```json\n{"tool": "look"}\n```').model_dump() == {"tool": "look", "args": {}}
    for reply, message in [
        ('I will probe. {"tool": "probe", "args": {}}', "the reply is not valid JSON"),
        ('{"tool": "a", "args": {}} {"tool": "b", "args": {}}', r"the reply is not valid JSON \(Extra data"),
        ('["probe"]', "a JSON list, not an object"),
        ('{"tool": "probe", "args": {}, "why": "x"}', 'only "tool" and "args"'),
        ('{"args": {}}', 'needs "tool"'),
        ('{"tool": "probe", "args": [3]}', '"args" must be a JSON object'),
        ("[" * 100_000, "nested too deeply|not valid JSON"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_json_call(reply)


@given(st.text(max_size=200))
def test_any_text_reply_parses_or_is_refused_with_a_value_error(reply):
    try:
        call = parse_json_call(reply)
    except ValueError:
        return
    assert isinstance(call.tool, str) and isinstance(call.args, dict)


def test_a_window_keeps_the_head_and_whole_turns():
    from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser

    from discogym.llm.context import FullContext, WindowContext, turns

    head: list[ChatMessage] = [ChatMessageSystem(content="rules"), ChatMessageUser(content="brief")]
    first: list[ChatMessage] = [ChatMessageAssistant(content="no call"), ChatMessageUser(content="Your reply was bad")]
    second: list[ChatMessage] = [
        ChatMessageAssistant(content="two calls"),
        ChatMessageTool(content="a"),
        ChatMessageTool(content="b"),
    ]
    messages = [*head, *first, *second]
    assert turns(messages) == [first, second]
    window = WindowContext(1)
    assert window.prompt(messages) == [*head, *second]
    assert WindowContext(5).prompt(messages) == messages
    assert not window.shrink(messages)  # one turn left: nothing more can go
    wide = WindowContext(8)
    assert wide.shrink(messages) and wide.size == 1  # halves what it actually sends (two turns)
    assert FullContext().prompt(messages) == messages and not FullContext().shrink(messages)
