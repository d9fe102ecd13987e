"""Values that can be stored in an episode file exactly and reproducibly.

Every free-form field of the harness's models (tool arguments and data, task parameters, outcomes,
score components, audits) passes through :func:`json_safe`, so a suite or agent that hands over a numpy
scalar, a tuple or a set gets a plain JSON value, and one that hands over something with no JSON form
gets a clear error where it did so, not a failure when the episode is written.
"""

import enum
from typing import Annotated, Any

import numpy as np
import orjson
from pydantic import BaseModel, BeforeValidator

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def _sort_key(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON types: numpy scalars and arrays, tuples, enums and pydantic models are
    converted; sets become sorted lists (their iteration order changes with PYTHONHASHSEED); integers
    beyond 64 bits become decimal strings. Raises TypeError for anything else."""
    if value is None or isinstance(value, str | bool | float):
        return value
    if isinstance(value, int):
        return value if _INT64_MIN <= value <= _UINT64_MAX else str(value)
    if isinstance(value, dict):
        return {_key(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((json_safe(item) for item in value), key=_sort_key)
    if isinstance(value, np.generic | np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, enum.Enum):
        return json_safe(value.value)
    if isinstance(value, BaseModel):
        return json_safe(value.model_dump(mode="python"))
    raise TypeError(
        f"a value of type {type(value).__name__} cannot be stored as JSON (use numbers, strings, lists and dicts)"
    )


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool | int | float | np.generic):
        return orjson.dumps(json_safe(key)).decode()  # as JSON would write it: 1, 2.5, true
    raise TypeError(f"a dict key of type {type(key).__name__} cannot be stored as JSON")


JsonValue = Annotated[Any, BeforeValidator(json_safe)]
JsonDict = Annotated[dict[str, Any], BeforeValidator(json_safe)]
