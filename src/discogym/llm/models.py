"""Model strings (``openai/gpt-5``, ``anthropic/claude-...``, ``openai-compatible/NAME@URL``), keys and prices."""

import json
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discogym.core import Usage, UserError

Provider = Literal["openai", "anthropic", "openai-compatible"]

KEY_VARIABLES: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
}
PRICES_VARIABLE = "DISCOGYM_PRICES"
MODEL_FORMS = (
    "openai/MODEL, anthropic/MODEL or openai-compatible/NAME@http://HOST:PORT/v1 (any of them may end in @URL)"
)

_ENDPOINT = re.compile(r"@(https?://\S+)$")


class ModelSpec(BaseModel):
    """Which model, behind which endpoint, and where its key comes from. Never holds the key itself."""

    model_config = ConfigDict(frozen=True)

    provider: Provider
    name: str
    base_url: str | None = None
    key_variable: str

    def api_key(self) -> str | None:
        """The key from the environment. Local OpenAI-compatible servers need none, unless a variable was
        named explicitly."""
        key = os.environ.get(self.key_variable)
        if key:
            return key
        if self.provider == "openai-compatible" and self.key_variable == KEY_VARIABLES["openai-compatible"]:
            return "no-key"
        return None

    @property
    def id(self) -> str:
        """``provider/name``: how the model is named in the price table."""
        return f"{self.provider}/{self.name}"


def parse_model(text: str, key_variable: str | None = None) -> ModelSpec:
    """Parse a model string, or raise a UserError that shows the accepted forms.

    ``NAME@URL`` points any provider at another endpoint (a proxy, a local server); an ``@`` not followed
    by a URL is part of the name (Vertex-style ``claude-...@20240620``).
    """
    provider, slash, rest = text.partition("/")
    if not slash or not rest:
        raise UserError(f"model {text!r} is not one of {MODEL_FORMS}")
    if provider not in KEY_VARIABLES:
        raise UserError(f"model {text!r} has unknown provider {provider!r}; use {MODEL_FORMS}")
    endpoint = _ENDPOINT.search(rest)
    name = rest[: endpoint.start()] if endpoint else rest
    if not name:
        raise UserError(f"model {text!r} has no model name before the '@'")
    if provider == "openai-compatible" and endpoint is None:
        raise UserError(f"model {text!r}: write openai-compatible/NAME@http://HOST:PORT/v1")
    if key_variable is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key_variable):
        raise UserError(f"key_env={key_variable!r} is not an environment variable name")
    return ModelSpec.model_validate(
        {
            "provider": provider,
            "name": name,
            "base_url": endpoint.group(1) if endpoint else None,
            "key_variable": key_variable or KEY_VARIABLES[provider],
        }
    )


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs in dollars."""
        cached = min(usage.cached_tokens, usage.input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        fresh = usage.input_tokens - cached
        return (fresh * self.input + cached * cached_rate + usage.output_tokens * self.output) / 1_000_000


def _price(input: float, output: float, cached: float) -> Price:
    return Price(input=input, output=output, cached_input=cached)


# Providers' list prices in dollars per million tokens (standard tier, prompt-cache reads as "cached"),
# as published by OpenAI and Anthropic in 2025. A dated model id is priced as its undated family
# (`claude-sonnet-4-5-20250929` as `claude-sonnet-4-5`). Add or override prices with a JSON file named by
# DISCOGYM_PRICES: {"openai-compatible/llama3": {"input": 0.1, "output": 0.1}}.
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
    "anthropic/claude-3-5-haiku": _price(0.8, 4.0, 0.08),
    "anthropic/claude-3-7-sonnet": _price(3.0, 15.0, 0.3),
    "anthropic/claude-sonnet-4": _price(3.0, 15.0, 0.3),
    "anthropic/claude-sonnet-4-5": _price(3.0, 15.0, 0.3),
    "anthropic/claude-haiku-4-5": _price(1.0, 5.0, 0.1),
    "anthropic/claude-opus-4": _price(15.0, 75.0, 1.5),
    "anthropic/claude-opus-4-1": _price(15.0, 75.0, 1.5),
    "anthropic/claude-opus-4-5": _price(5.0, 25.0, 0.5),
}


def price_table() -> dict[str, Price]:
    """The built-in prices, updated from the JSON file named by ``DISCOGYM_PRICES`` if set."""
    table = dict(BUILTIN_PRICES)
    path = os.environ.get(PRICES_VARIABLE)
    if not path:
        return table
    problem = (
        f"{PRICES_VARIABLE}={path} is not a JSON object of prices like "
        + '{"openai/MODEL": {"input": 1.0, "output": 2.0}}'
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
