"""The fake CLI endpoints speak the real wire formats: the official SDKs read their streams (no CLI needed)."""

import json

import anthropic
import openai
import pytest

from tests.agent_clis.fake_endpoints import SCRIPT_OVER, AnthropicEndpoint, ResponsesEndpoint
from tests.llm.fake_endpoint import Calls, Say, Status

MESSAGE: list[anthropic.types.MessageParam] = [{"role": "user", "content": "play"}]


def test_the_anthropic_endpoint_streams_tool_calls_and_text_and_answers_plain_json_too():
    with AnthropicEndpoint() as endpoint:
        endpoint.script.extend([Calls([("probe", json.dumps({"n": 5}))]), Say("done"), Status(500)])
        client = anthropic.Anthropic(base_url=endpoint.root, api_key="dummy", max_retries=0)
        with client.messages.stream(model="m", max_tokens=100, messages=MESSAGE) as stream:
            streamed = stream.get_final_message()
        plain = client.messages.create(model="m", max_tokens=100, messages=MESSAGE)
        with pytest.raises(anthropic.InternalServerError):
            client.messages.create(model="m", max_tokens=100, messages=MESSAGE)
        over = client.messages.create(model="m", max_tokens=100, messages=MESSAGE)
    (call,) = streamed.content
    assert call.type == "tool_use" and (call.name, call.input) == ("mcp__discogym__probe", {"n": 5})
    assert streamed.stop_reason == "tool_use" and streamed.usage.output_tokens > 0
    assert plain.stop_reason == "end_turn" and plain.content[0].text == "done"  # type: ignore[union-attr]
    assert over.content[0].text == SCRIPT_OVER  # type: ignore[union-attr]
    assert [r.body.get("stream", False) for r in endpoint.model_requests] == [True, False, False, False]


def test_the_responses_endpoint_streams_namespaced_function_calls_and_text():
    with ResponsesEndpoint() as endpoint:
        endpoint.script.extend([Calls([("start_task", json.dumps({"task_id": "tiny-00"}))]), Say("done")])
        client = openai.OpenAI(base_url=endpoint.url, api_key="dummy", max_retries=0)
        finals = []
        for _ in range(2):
            with client.responses.stream(model="m", input="play") as stream:
                kinds = [event.type for event in stream]
                finals.append(stream.get_final_response())
    assert kinds == ["response.created", "response.output_item.done", "response.completed"]
    call = finals[0].output[0].model_dump()
    assert (call["type"], call["namespace"], call["name"]) == ("function_call", "mcp__discogym", "start_task")
    assert json.loads(call["arguments"]) == {"task_id": "tiny-00"}
    assert finals[1].output_text == "done" and finals[1].usage is not None and finals[1].usage.output_tokens > 0
    assert [r.body["input"] for r in endpoint.model_requests] == ["play", "play"]
