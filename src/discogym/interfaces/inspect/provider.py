"""The offline model provider ``discogym`` (``--model discogym/reference``, ``discogym/random``, or any agent a
suite offers): a discogym agent answers in the model's place, so ``inspect eval`` runs with no key and reproduces
``discogym run --agent NAME``.

The agent plays the sample's running episode (found through the sample's store): it starts from the episode's
context, as the runner starts it (reference solvers get the suite's hints, which never reach a real model), and
each turn it is asked for its next call given the calls so far; its call is the model's tool call. When the agent
ends the episode, the provider ends it and answers with the agent's last words and no tool call.
"""

from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo
from inspect_ai.util import store_as

from discogym.core import Agent, Turn
from discogym.core.running.episode_loop import EpisodeRecorder, EpisodeStopped
from discogym.interfaces.inspect.episodes import PROVIDER
from discogym.interfaces.inspect.tasks import RUNNING, EpisodeState


@modelapi(name=PROVIDER)
class DiscogymAgentAPI(ModelAPI):
    """A discogym agent as an Inspect model; one instance serves every sample, so agents are kept per sample."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's own signature
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.agents: dict[str, Agent] = {}

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        for ended in [key for key in self.agents if key not in RUNNING]:
            del self.agents[ended]
        key = store_as(EpisodeState).running
        recorder = RUNNING.get(key)
        if recorder is None:
            raise RuntimeError(
                f"model {PROVIDER}/{self.model_name} plays discogym tasks only (inspect eval discogym/...)"
            )
        try:
            agent = self.agents.get(key) or self._start(key, recorder)
            decision = recorder.decide(agent, [Turn(call=event.call, result=event.result) for event in recorder.events])
        except EpisodeStopped as err:  # the agent failed (or the environment, telling it): recorded as discogym does
            self.agents.pop(key, None)
            return ModelOutput.from_content(self.model_name, str(err))
        if decision.call is None:
            recorder.apply(decision)
            self.agents.pop(key, None)
            return ModelOutput.from_content(self.model_name, decision.message or "")
        call = ToolCall(
            id=f"call_{len(recorder.events) + 1}",
            function=decision.call.tool,
            arguments=decision.call.args if isinstance(decision.call.args, dict) else {"value": decision.call.args},
        )
        message = ChatMessageAssistant(content=decision.message or "", tool_calls=[call], model=self.model_name)
        return ModelOutput(
            model=self.model_name, choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")]
        )

    def _start(self, key: str, recorder: EpisodeRecorder) -> Agent:
        """The sample's agent, made, recorded and started as the runner's episode driver does it."""
        agent = recorder.start_agent(recorder.make_agent())
        self.agents[key] = agent
        return agent
