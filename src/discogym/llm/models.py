"""Model strings, keys, prices and the facts of known models.

``--model`` takes Inspect's model names (``anthropic/claude-sonnet-4-5``, ``google/gemini-2.5-pro``,
``openrouter/qwen/qwen3-32b``, ``vllm/...``), and the older forms keep working: ``openai-compatible/NAME@URL``
for any OpenAI-compatible server, and ``@URL`` at the end of any name for another endpoint. This module
reads them without importing Inspect, so ``discogym models`` and a missing key cost no model SDK import.
"""

import json
import os
import re
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from discogym.core import Usage, UserError

# The variable each provider's key is read from; None: the provider takes no single key (a local server, or
# cloud credentials the provider's SDK finds itself).
KEY_VARIABLES: dict[str, str | None] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GOOGLE_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "together": "TOGETHER_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "grok": "XAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "perplexity": "PERPLEXITY_API_KEY",
    "sambanova": "SAMBANOVA_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
    "bedrock": None,
    "vertex": None,
    "azureai": None,
    "vllm": None,
    "sglang": None,
    "ollama": None,
}
LOCAL_PROVIDERS = ("vllm", "sglang", "ollama")
PRICES_VARIABLE = "DISCOGYM_PRICES"
MODEL_FORMS = (
    "PROVIDER/MODEL with PROVIDER one of "
    + ", ".join(sorted(KEY_VARIABLES))
    + " (openai-compatible/NAME@http://HOST:PORT/v1 for any OpenAI-compatible server; any of them may end in @URL)"
)
DEFAULT_CONTEXT_WINDOW = 128_000  # Inspect's assumption for a model it does not know

_ENDPOINT = re.compile(r"@(https?://\S+)$")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ModelSpec(BaseModel):
    """Which model, behind which endpoint, and where its key comes from. Never holds the key itself."""

    model_config = ConfigDict(frozen=True)

    provider: str
    name: str
    base_url: str | None = None
    key_variable: str | None

    def api_key(self) -> str | None:
        """The key from the environment; ``"no-key"`` for a provider that needs none (a local server, an
        OpenAI-compatible endpoint with no key set, cloud credentials), unless a variable was named explicitly."""
        if self.key_variable is None:
            return "no-key"
        key = os.environ.get(self.key_variable)
        if key:
            return key
        if self.provider == "openai-compatible" and self.key_variable == KEY_VARIABLES["openai-compatible"]:
            return "no-key"
        return None

    @property
    def id(self) -> str:
        """``provider/name``: how the model is named in the price table and the reports."""
        return f"{self.provider}/{self.name}"

    @property
    def inspect_name(self) -> str:
        """The model's name in Inspect's model API."""
        if self.provider == "openai-compatible":
            return f"openai-api/compatible/{self.name}"
        return self.id


def parse_model(text: str, key_variable: str | None = None) -> ModelSpec:
    """Parse a model string, or raise a UserError that shows the accepted forms.

    ``NAME@URL`` points any provider at another endpoint (a proxy, a local server); an ``@`` not followed
    by a URL is part of the name (Vertex-style ``claude-...@20240620``).
    """
    provider, slash, rest = text.partition("/")
    if not slash or not rest:
        raise UserError(f"model {text!r} is not {MODEL_FORMS}")
    if provider not in KEY_VARIABLES:
        raise UserError(f"model {text!r} has unknown provider {provider!r}; use {MODEL_FORMS}")
    endpoint = _ENDPOINT.search(rest)
    name = rest[: endpoint.start()] if endpoint else rest
    if not name:
        raise UserError(f"model {text!r} has no model name before the '@'")
    if provider == "openai-compatible" and endpoint is None:
        raise UserError(f"model {text!r}: write openai-compatible/NAME@http://HOST:PORT/v1")
    if key_variable is not None and not _VARIABLE.fullmatch(key_variable):
        raise UserError(f"key_env={key_variable!r} is not an environment variable name")
    return ModelSpec(
        provider=provider,
        name=name,
        base_url=endpoint.group(1) if endpoint else None,
        key_variable=key_variable or KEY_VARIABLES[provider],
    )


class Price(BaseModel):
    """US dollars per million tokens: fresh input, output (reasoning included), prompt-cache writes and reads."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    cache_read: float | None = Field(default=None, ge=0, validation_alias=AliasChoices("cache_read", "cached_input"))

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs in dollars; a rate left out is the input rate."""
        read = min(usage.cached_tokens, usage.input_tokens)
        written = min(usage.cache_write_tokens, usage.input_tokens - read)
        fresh = usage.input_tokens - read - written
        read_rate = self.input if self.cache_read is None else self.cache_read
        write_rate = self.input if self.cache_write is None else self.cache_write
        dollars = fresh * self.input + read * read_rate + written * write_rate + usage.output_tokens * self.output
        return dollars / 1_000_000


def _price(input: float, output: float, cache_read: float, cache_write: float | None = None) -> Price:
    return Price(input=input, output=output, cache_read=cache_read, cache_write=cache_write)


def _anthropic(input: float, output: float) -> Price:
    """Anthropic's rates: 5-minute cache writes at 1.25x input, reads at 0.1x."""
    return _price(input, output, round(input * 0.1, 6), round(input * 1.25, 6))


# Providers' list prices in dollars per million tokens (standard tier; a prompt-cache read at its own rate,
# an Anthropic 5-minute cache write at 1.25x input), as published by the providers; docs/llm.md says where
# and when they were read. Gemini's rates are those of prompts up to 200k tokens. A dated model id is priced
# as its undated family (`claude-sonnet-4-5-20250929` as `claude-sonnet-4-5`). Add or override prices with a
# JSON file named by DISCOGYM_PRICES: {"vllm/llama3": {"input": 0.1, "output": 0.1}}.
BUILTIN_PRICES: dict[str, Price] = {
    "openai/gpt-4o": _price(2.5, 10.0, 1.25),
    "openai/gpt-4o-mini": _price(0.15, 0.6, 0.075),
    "openai/gpt-4.1": _price(2.0, 8.0, 0.5),
    "openai/gpt-4.1-mini": _price(0.4, 1.6, 0.1),
    "openai/gpt-4.1-nano": _price(0.1, 0.4, 0.025),
    "openai/o3": _price(2.0, 8.0, 0.5),
    "openai/o4-mini": _price(1.1, 4.4, 0.275),
    "openai/gpt-5": _price(1.25, 10.0, 0.125),
    "openai/gpt-5-mini": _price(0.25, 2.0, 0.025),
    "openai/gpt-5-nano": _price(0.05, 0.4, 0.005),
    "openai/gpt-5.1": _price(1.25, 10.0, 0.125),
    "openai/gpt-5.2": _price(1.75, 14.0, 0.175),
    "anthropic/claude-3-5-haiku": _anthropic(0.8, 4.0),
    "anthropic/claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "anthropic/claude-sonnet-4": _anthropic(3.0, 15.0),
    "anthropic/claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "anthropic/claude-haiku-4-5": _anthropic(1.0, 5.0),
    "anthropic/claude-opus-4": _anthropic(15.0, 75.0),
    "anthropic/claude-opus-4-1": _anthropic(15.0, 75.0),
    "anthropic/claude-opus-4-5": _anthropic(5.0, 25.0),
    "google/gemini-2.5-pro": _price(1.25, 10.0, 0.125),
    "google/gemini-2.5-flash": _price(0.3, 2.5, 0.03),
    "google/gemini-3-pro-preview": _price(2.0, 12.0, 0.2),
    # Open models as OpenRouter serves them (its routing picks a host; no cache rates published)
    "openrouter/qwen/qwen3-32b": _price(0.08, 0.24, 0.08),
    "openrouter/qwen/qwen-2.5-72b-instruct": _price(0.36, 0.40, 0.36),
    "openrouter/meta-llama/llama-3.1-8b-instruct": _price(0.02, 0.03, 0.02),
    "openrouter/meta-llama/llama-3.1-70b-instruct": _price(0.40, 0.40, 0.40),
    "openrouter/meta-llama/llama-3.3-70b-instruct": _price(0.10, 0.32, 0.10),
}

# Context windows of the papers' models that Inspect's model database does not know (the models' cards:
# Llama 3.1, Llama 3.3 and Qwen2.5 take 128k tokens).
CONTEXT_WINDOWS: dict[str, int] = {
    "openrouter/qwen/qwen-2.5-72b-instruct": 131_072,
    "openrouter/meta-llama/llama-3.1-8b-instruct": 131_072,
    "openrouter/meta-llama/llama-3.1-70b-instruct": 131_072,
    "openrouter/meta-llama/llama-3.3-70b-instruct": 131_072,
    "vllm/meta-llama/Llama-3.1-8B-Instruct": 131_072,
    "vllm/meta-llama/Llama-3.1-70B-Instruct": 131_072,
    "vllm/meta-llama/Llama-3.3-70B-Instruct": 131_072,
}

# The models of the four papers, named as `--model` takes them (docs/llm.md has the command that runs each);
# `discogym models` lists them beside the priced ones.
PAPER_MODELS: dict[str, str] = {
    "openai/gpt-5.2": "SciCrafter",
    "google/gemini-3-pro-preview": "SciCrafter",
    "anthropic/claude-opus-4-5": "SciCrafter",
    "openrouter/qwen/qwen3-32b": "SciCrafter",
    "openrouter/qwen/qwen-2.5-72b-instruct": "SciCrafter",
    "openai/o3": "AutumnBench",
    "anthropic/claude-sonnet-4": "AutumnBench",
    "google/gemini-2.5-pro": "AutumnBench",
    "openai/gpt-4o-mini": "Plancraft",
    "openrouter/meta-llama/llama-3.1-8b-instruct": "Plancraft",
    "openrouter/meta-llama/llama-3.3-70b-instruct": "Plancraft",  # the paper's "3.3 70B" (Section 4)
}


def price_table() -> dict[str, Price]:
    """The built-in prices, updated from the JSON file named by ``DISCOGYM_PRICES`` if set."""
    table = dict(BUILTIN_PRICES)
    path = os.environ.get(PRICES_VARIABLE)
    if not path:
        return table
    problem = (
        f"{PRICES_VARIABLE}={path} is not a JSON object of prices like "
        + '{"openai/MODEL": {"input": 1.0, "output": 2.0, "cache_read": 0.1}}'
    )
    try:
        extra = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise UserError(f"cannot read {PRICES_VARIABLE}={path}: {err.strerror}") from None
    except (ValueError, RecursionError):
        raise UserError(problem) from None
    if not isinstance(extra, dict):
        raise UserError(problem)
    for name, price in extra.items():
        try:
            table[name] = Price.model_validate(price)
        except ValidationError as err:
            first = err.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"]) or "price"
            raise UserError(f"{PRICES_VARIABLE}={path}: {name}: {where}: {first['msg']}") from None
    return table


def find_price(spec: ModelSpec, table: dict[str, Price]) -> Price | None:
    """The price of ``spec``: its own entry, else the longest family prefix (``gpt-4o-2024-08-06`` →
    ``gpt-4o``, never ``gpt-4o-mini`` → ``gpt-4o``)."""
    if spec.id in table:
        return table[spec.id]
    families = [name for name in table if spec.id.startswith(name + "-")]
    return table[max(families, key=len)] if families else None


class ModelFacts(BaseModel):
    """What is known of a model: its window and output limit (from Inspect's model database), and its price."""

    model: str
    provider: str
    context_window: int | None
    context_window_source: str | None = None  # where a window not in Inspect's database came from (a server)
    output_limit: int | None
    price: Price | None
    key_variable: str | None
    key_set: bool


def model_facts(spec: ModelSpec, table: dict[str, Price]) -> ModelFacts:
    """The facts of ``spec``; imports Inspect's model database (about a second)."""
    from inspect_ai.model import get_model_info

    info = get_model_info(spec.inspect_name)
    return ModelFacts(
        model=spec.id,
        provider=spec.provider,
        context_window=info.context_length if info and info.context_length else CONTEXT_WINDOWS.get(spec.id),
        output_limit=info.output_tokens if info else None,
        price=find_price(spec, table),
        key_variable=spec.key_variable,
        key_set=spec.key_variable is None or bool(os.environ.get(spec.key_variable)),
    )


def known_models() -> list[ModelFacts]:
    """The papers' models and every priced one, sorted by name."""
    table = price_table()
    names = sorted(set(PAPER_MODELS) | {name for name in table if name.partition("/")[0] in KEY_VARIABLES})
    return [model_facts(parse_model(name), table) for name in names if not name.startswith("openai-compatible/")]
