"""Language-model agents: one agent loop over Inspect's model API (every provider Inspect speaks to).

Registered as ``--agent llm`` through the ``discogym.agents`` entry point; the SDKs are the ``llm``
extra and are imported only when the agent is made.
"""

from discogym.core import Agent, AgentOptions, UserError, register_agent

DESCRIPTION = (
    "a language model: --model PROVIDER/NAME (Inspect's names: anthropic/, openai/, google/, openrouter/, vllm/, "
    "...; openai-compatible/NAME@URL); --agent-opt mode=native|text|suite, scaffold=plancraft|autumnbench "
    "(see docs/llm.md, discogym models)"
)

# The fields of discogym.llm.agent.LLMSettings (a test keeps them equal), named here so that registering the
# agent does not import the model SDKs.
OPTIONS = (
    "mode",
    "tool_choice",
    "images",
    "timeout_s",
    "retries",
    "max_tokens",
    "temperature",
    "key_env",
    "cache",
    "reasoning_effort",
    "reasoning_tokens",
    "backoff_s",
    "context",
    "window_turns",
    "window_messages",
    "compact_at",
    "context_window",
    "notes",
    "notes_chars",
    "scaffold",
)


def _make(options: AgentOptions) -> Agent:
    try:
        from discogym.llm.agent import make_llm_agent
    except ImportError as err:
        raise UserError(f"agent 'llm' needs the model SDKs: pip install 'discogym[llm]' ({err})") from None
    return make_llm_agent(options)


def register() -> None:
    """Make ``--agent llm`` available."""
    register_agent("llm", _make, DESCRIPTION, takes_model=True, options=OPTIONS)
