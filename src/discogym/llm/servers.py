"""What a local model server says of itself: the models it serves, and the context window of each where the server
says it. vLLM gives ``max_model_len`` with each model of ``GET /v1/models``; llama.cpp's server gives the window
it was started with (``--ctx-size``) as ``n_ctx`` in ``GET /props`` (beside ``/v1``). Other servers (Ollama,
SGLang, ...) list their models but not a window here: give it with ``--agent-opt context_window=N``."""

from typing import Any

import httpx
from pydantic import BaseModel

from discogym.core import UserError

ASK_SECONDS = 5.0  # how long a server may take to say what it serves
VLLM_SOURCE = "the server's /v1/models (vLLM's max_model_len)"
LLAMA_CPP_SOURCE = "the server's /props (llama.cpp's n_ctx)"


class ServedModel(BaseModel):
    """A model a server serves, with its context window in tokens and where that came from (None: not said)."""

    name: str
    context_window: int | None = None
    source: str | None = None


def served_models(url: str) -> list[ServedModel]:
    """The models the OpenAI-compatible server at ``url`` (its ``.../v1``) serves, each with its context window
    where the server says it; a UserError when the server cannot be reached or answers something else."""
    listing = _json_of(url.rstrip("/") + "/models")
    items = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(items, list):
        raise UserError(f"{url}/models did not answer an OpenAI-compatible list of models ({{'data': [...]}})")
    models = [_served(item) for item in items if isinstance(item, dict) and isinstance(item.get("id"), str)]
    if any(model.context_window is None for model in models):
        window = _llama_cpp_window(url)
        if window is not None:
            models = [
                model
                if model.context_window
                else model.model_copy(update={"context_window": window, "source": LLAMA_CPP_SOURCE})
                for model in models
            ]
    return models


def served_window(url: str, name: str) -> tuple[int | None, str]:
    """The context window the server at ``url`` says model ``name`` has, and where it said it; (None, why not)
    when it says none or cannot be asked."""
    try:
        models = served_models(url)
    except UserError as err:
        return None, str(err)
    for model in models:
        if model.name == name and model.context_window is not None:
            return model.context_window, model.source or ""
    listed = ", ".join(model.name for model in models) or "none"
    return None, f"the server at {url} says no context window for {name!r} (it serves: {listed})"


def _served(item: dict[str, Any]) -> ServedModel:
    window = _window(item.get("max_model_len"))
    return ServedModel(name=item["id"], context_window=window, source=VLLM_SOURCE if window else None)


def _window(value: Any) -> int | None:
    """``value`` if it is a window in tokens (a positive integer), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def llama_cpp_root(url: str) -> str | None:
    """The root of the llama.cpp server whose OpenAI-style ``url`` (``.../v1``) this is, or None when the server
    there is no llama.cpp server (it has no ``/props`` with a window)."""
    return url.rstrip("/").removesuffix("/v1") if _llama_cpp_window(url) is not None else None


def _llama_cpp_window(url: str) -> int | None:
    """llama.cpp's ``n_ctx`` from ``/props`` beside ``/v1``, or None where the server has no such page."""
    root = url.rstrip("/").removesuffix("/v1")
    try:
        props = _json_of(root + "/props")
    except UserError:
        return None
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    return _window(settings.get("n_ctx")) if isinstance(settings, dict) else None


def _json_of(address: str) -> Any:
    try:
        answer = httpx.get(address, timeout=ASK_SECONDS)
    except httpx.HTTPError as err:
        raise UserError(f"cannot ask {address}: {type(err).__name__}: {err}") from None
    if answer.status_code != 200:
        raise UserError(f"{address} answered HTTP {answer.status_code}")
    try:
        return answer.json()
    except ValueError:
        raise UserError(f"{address} did not answer JSON") from None


__all__ = ["ServedModel", "llama_cpp_root", "served_models", "served_window"]
