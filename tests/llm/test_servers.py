"""A local model server asked what it serves, and the context window of a model none is known for (issue 47)."""

import json

import pytest
from inspect_ai.model import ChatMessage, ChatMessageUser

from discogym.core import AgentOptions, UserError
from discogym.llm.context import estimate_tokens
from discogym.llm.models import parse_model
from discogym.llm.servers import LLAMA_CPP_SOURCE, VLLM_SOURCE, served_models
from discogym.llm.tokens import LlamaCppCounter, TokenCounter, token_counter
from tests.conftest import run_discogym
from tests.llm.conftest import SECRET, episodes, run_llm
from tests.llm.fake_endpoint import FakeEndpoint


def test_vllm_and_llama_cpp_say_their_windows_and_other_servers_list_their_models_only():
    with FakeEndpoint() as server:
        server.pages["/v1/models"] = {"data": [{"id": "qwen", "max_model_len": 32768}, {"id": "other"}, "junk"]}
        served = served_models(server.url)
        assert [(m.name, m.context_window, m.source) for m in served] == [
            ("qwen", 32768, VLLM_SOURCE),
            ("other", None, None),  # no window, and no llama.cpp /props to ask
        ]
        server.pages["/props"] = {"default_generation_settings": {"n_ctx": 8192}}
        server.pages["/v1/models"] = {"data": [{"id": "smollm2"}]}
        assert [(m.name, m.context_window, m.source) for m in served_models(server.url)] == [
            ("smollm2", 8192, LLAMA_CPP_SOURCE)
        ]
        server.pages["/v1/models"] = {"models": []}
        with pytest.raises(UserError, match="did not answer an OpenAI-compatible list of models"):
            served_models(server.url)
        url = server.url
    with pytest.raises(UserError, match=f"cannot ask {url}/models: ConnectError"):
        served_models(url)


def test_a_model_with_no_known_window_takes_its_servers_and_the_episode_says_where_from(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", SECRET)
    with FakeEndpoint() as server:
        model = f"openai-compatible/smollm2@{server.url}"
        agent = AgentOptions(name="llm", model=model, options={"retries": "1", "timeout_s": "5"})
        with pytest.raises(UserError, match=r"its context window is not known here \(.*answered HTTP 404\)"):
            run_llm(tmp_path / "none", agent, tasks=["tiny-00"])
        server.pages["/v1/models"] = {"data": [{"id": "smollm2"}]}
        server.pages["/props"] = {"default_generation_settings": {"n_ctx": 8192}}
        run_llm(tmp_path / "asked", agent, tasks=["tiny-00"])
    (episode,) = episodes(tmp_path / "asked")
    settings = episode.provenance.agent_settings
    assert settings["context_window"] == 8192 and settings["context_window_source"] == LLAMA_CPP_SOURCE
    assert settings["compact_at"] == int(8192 * 0.8)  # the policy works to the server's window, not 16,000


def test_models_url_lists_what_a_server_serves_with_the_model_string_to_give():
    with FakeEndpoint() as server:
        server.pages["/v1/models"] = {"data": [{"id": "qwen", "max_model_len": 32768}, {"id": "other"}]}
        shown = run_discogym("models", "--url", server.url)
        as_json = run_discogym("models", "--url", server.url, "--json")
    assert shown.returncode == 0, shown.stderr
    assert f"openai-compatible/qwen@{server.url}" in shown.stdout and "32,768" in shown.stdout
    assert "needs --agent-opt context_window=N" in shown.stdout
    document = json.loads(as_json.stdout)
    assert [(m["name"], m["context_window"]) for m in document["models"]] == [("qwen", 32768), ("other", None)]
    gone = run_discogym("models", "--url", server.url)
    assert gone.returncode != 0 and f"cannot ask {server.url}/models" in gone.stderr


def test_a_llama_cpp_server_counts_the_prompts_and_the_quarter_stands_in_where_it_cannot():
    messages: list[ChatMessage] = [ChatMessageUser(content="frame 0: black " * 40)]
    with FakeEndpoint() as server:
        spec = parse_model(f"openai-compatible/smollm2@{server.url}", None)
        assert type(token_counter(spec)[0]) is TokenCounter  # no /props: not llama.cpp
        server.pages["/props"] = {"default_generation_settings": {"n_ctx": 8192}}
        counter, why = token_counter(spec)
        assert isinstance(counter, LlamaCppCounter) and why.endswith(f"llama.cpp server at {server.root}")
        # this server has no /apply-template (the real one's count is checked in tests/real_model): the quarter
        assert counter.prompt(messages, []) == estimate_tokens(messages, [])
