"""Language-model agents: one agent loop over two client adapters (OpenAI-compatible and Anthropic).

Registered as ``--agent llm`` through the ``discogym.agents`` entry point; the SDKs are the ``llm``
extra and are imported only when the agent is made.
"""

from discogym.core import Agent, AgentOptions, UserError, register_agent

DESCRIPTION = (
    "a language model: --model openai/NAME, anthropic/NAME or openai-compatible/NAME@URL; "
    "--agent-opt mode=native|text|suite (see docs/llm.md)"
)

# The fields of discogym.llm.agent.LLMSettings (a test keeps them equal), named here so that registering the
# agent does not import the model SDKs.
OPTIONS = ("mode", "images", "timeout_s", "retries", "max_tokens", "temperature", "key_env")


def _make(options: AgentOptions) -> Agent:
    try:
        from discogym.llm.agent import make_llm_agent
    except ImportError as err:
        raise UserError(f"agent 'llm' needs the model SDKs: pip install 'discogym[llm]' ({err})") from None
    return make_llm_agent(options)


def register() -> None:
    """Make ``--agent llm`` available."""
    register_agent("llm", _make, DESCRIPTION, takes_model=True, options=OPTIONS)
