"""Values read from JSON take a short way through the models' JSON fields (see ``jsonsafe._validated``): it must
give exactly what :func:`json_safe` gives."""

import math
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from discogym.core.model.jsonsafe import JSON_PARSER_MAX_NESTING, MAX_DEPTH, JsonDict, json_safe


class Holder(BaseModel):
    data: JsonDict


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_pydantics_json_parser_refuses_what_the_short_way_relies_on():
    parse = TypeAdapter(Any).validate_json
    parse(b"[" * JSON_PARSER_MAX_NESTING + b"]" * JSON_PARSER_MAX_NESTING)
    with pytest.raises(ValidationError):
        parse(b"[" * (JSON_PARSER_MAX_NESTING + 1) + b"]" * (JSON_PARSER_MAX_NESTING + 1))
    with pytest.raises(ValidationError):
        parse(b'"\\ud800"')  # a lone surrogate
    assert JSON_PARSER_MAX_NESTING - 1 <= MAX_DEPTH  # a field's value sits inside its model's object


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": 1, "b": [1.5, "x", true, {"c": []}]}',
        b'{"a": NaN, "b": [Infinity, -Infinity, 1]}',
        b'{"big": 123456789012345678901234567890, "small": -9223372036854775809}',
        b'{"edge": 18446744073709551615, "low": -9223372036854775808}',
        b'{"none": null, "text": "null", "nested": {"n": null}}',
        b'{"deep": ' + orjson.dumps(nested(JSON_PARSER_MAX_NESTING - 2)) + b"}",  # as deep as a file can hold
        '{"unicode": "café ☃", "kéy": 1}'.encode(),  # not ASCII
    ],
)
def test_a_value_read_from_json_is_what_json_safe_makes_of_it(text):
    read = Holder.model_validate_json(b'{"data": ' + text + b"}").data
    parsed = TypeAdapter(Any).validate_json(text)  # the parser's own reading: NaN, infinities and big ints kept
    assert _same(read, json_safe(parsed))


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right
