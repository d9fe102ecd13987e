"""Values that can be stored in an episode file exactly and reproducibly.

Every free-form field of the harness's models (tool arguments and data, task parameters, outcomes,
score components, audits) passes through :func:`json_safe`, so a suite or agent that hands over a numpy
scalar, a tuple or a set gets a plain JSON value, and one that hands over something with no JSON form
gets a clear error where it did so, not a failure when the episode is written.
"""

import enum
import math
from typing import Annotated, Any

import numpy as np
import orjson
from pydantic import BaseModel, BeforeValidator, ValidationInfo

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def _sort_key(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


MAX_DEPTH = 200  # the episode writer (orjson) refuses deeper nesting


def json_safe(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON types: numpy scalars and arrays, tuples, enums and pydantic models are
    converted; sets become sorted lists (their iteration order changes with PYTHONHASHSEED); NaN and
    infinities become None (JSON has no such numbers); integers beyond 64 bits become decimal strings;
    lone surrogates in strings become U+FFFD. Raises TypeError for values with no JSON form and
    ValueError for nesting deeper than :data:`MAX_DEPTH`."""
    kind = type(value)
    if kind is str:
        return value if value.isascii() else _valid_text(value)  # isascii is free: CPython marks ASCII strings
    if value is None or kind is bool:
        return value
    if kind is int:
        return value if _INT64_MIN <= value <= _UINT64_MAX else str(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        raise ValueError(f"a value is nested deeper than {MAX_DEPTH} levels")
    if kind is dict:  # the common case, without _key's checks for keys that need none
        return {
            key if type(key) is str and key.isascii() else _key(key): json_safe(item, depth + 1)
            for key, item in value.items()
        }
    if kind is list:
        if all(type(item) is str and item.isascii() for item in value):  # a row of a grid, a list of names
            return value.copy()
        return [json_safe(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {_key(key): json_safe(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item, depth + 1) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((json_safe(item, depth + 1) for item in value), key=_sort_key)
    if isinstance(value, enum.Enum):
        return json_safe(value.value, depth + 1)
    if isinstance(value, np.generic | np.ndarray):
        return json_safe(value.tolist(), depth + 1)
    if isinstance(value, BaseModel):
        return json_safe(value.model_dump(mode="python"), depth + 1)
    for plain in (bool, int, float, str):  # subclasses, e.g. numpy's float64
        if isinstance(value, plain):
            return json_safe(plain(value), depth + 1)
    raise TypeError(f"a value of type {kind.__name__} cannot be stored as JSON (use numbers, strings, lists and dicts)")


def _valid_text(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, e.g. from a JSON "\\ud800" escape
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _valid_text(key)
    if isinstance(key, bool | int | float | np.generic):
        return orjson.dumps(json_safe(key)).decode()  # as JSON would write it: 1, 2.5, true
    raise TypeError(f"a dict key of type {type(key).__name__} cannot be stored as JSON")


def _validated(value: Any, info: ValidationInfo) -> Any:
    """:func:`json_safe` for a model's field, with a short way for a value parsed from JSON (an episode file being
    read: a quarter of its time). pydantic's JSON parser gives plain types and valid strings only, and refuses a
    document nested deeper than :data:`JSON_PARSER_MAX_NESTING`, so a field's value (inside its model's object) is
    never nested deeper than :data:`MAX_DEPTH`. What json_safe would still change is an integer beyond 64 bits,
    which orjson refuses to write, and a NaN or an infinity, which orjson writes as ``null``: a value that orjson
    writes without ``null`` is returned as it is."""
    if info.mode == "json":
        try:
            if b"null" not in orjson.dumps(value):
                return value
        except orjson.JSONEncodeError:
            pass
    return json_safe(value)


JSON_PARSER_MAX_NESTING = 201  # pydantic's JSON parser refuses deeper documents (tested)
JsonValue = Annotated[Any, BeforeValidator(_validated)]
JsonDict = Annotated[dict[str, Any], BeforeValidator(_validated)]
