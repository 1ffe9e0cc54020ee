from __future__ import annotations

import pytest
from pydantic import Field

from hdsp_agent.tools.args import find_truncation, parse_arguments, validate_arguments
from hdsp_agent.tools.base import ErrorCode, ToolArgs, ToolError


class Sample(ToolArgs):
    path: str
    count: int = 1
    verbose: bool = False
    options: dict[str, int] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)


class Wide(ToolArgs):
    a: int
    b: int
    c: int
    d: int
    e: int
    f: int
    g: int


def test_strict_json_is_parsed_without_repair() -> None:
    parsed = parse_arguments('{"path": "a.py", "count": 2}')
    assert parsed.value == {"path": "a.py", "count": 2}
    assert parsed.repaired is False


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": "a.py",}', {"path": "a.py"}),  # trailing comma
        ("{'path': 'a.py'}", {"path": "a.py"}),  # single quotes
        ('{"path": "line1\nline2"}', {"path": "line1\nline2"}),  # raw newline (llama.cpp grammar)
        ('{path: "a.py"}', {"path": "a.py"}),  # unquoted key
        ('{"flag": True, "x": None}', {"flag": True, "x": None}),  # Python literals
    ],
)
def test_broken_but_complete_json_is_repaired_and_recorded(raw: str, expected: dict[str, object]) -> None:
    parsed = parse_arguments(raw)
    assert parsed.value == expected
    assert parsed.repaired is True
    assert parsed.notes and "not valid JSON" in parsed.notes[0]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"dirPath": ', "the last key has no value"),
        ('{"dirPath": "src', "a string is not closed"),
        ('{"a": {"b": 1}', "bracket(s) not closed"),
        ('{"a": }', "a key has no value"),
        ('{"a": 1, "b": ]', "a key has no value"),
    ],
)
def test_truncated_arguments_are_refused_not_completed(raw: str, why: str) -> None:
    with pytest.raises(ToolError) as caught:
        parse_arguments(raw)
    assert caught.value.code == ErrorCode.INVALID_ARGS.value
    assert "truncated" in caught.value.message and why in caught.value.message
    assert caught.value.suggestion


def test_find_truncation_ignores_brackets_inside_strings() -> None:
    assert find_truncation('{"code": "if x: {["}') is None
    assert find_truncation('{"code": "say \\"hi\\" {"}') is None


@pytest.mark.parametrize("raw", ["garbage", "[1, 2]", "42", '"just a string"'])
def test_non_object_arguments_are_refused(raw: str) -> None:
    with pytest.raises(ToolError) as caught:
        parse_arguments(raw)
    assert caught.value.code == ErrorCode.INVALID_ARGS.value


def test_empty_arguments_mean_no_arguments() -> None:
    assert parse_arguments("").value == {}
    assert parse_arguments("   ").value == {}
    assert parse_arguments(None).value == {}


def test_double_encoded_object_is_unwrapped() -> None:
    assert parse_arguments('"{\\"path\\": \\"a.py\\"}"').value == {"path": "a.py"}


def test_coercion_of_numeric_and_boolean_strings() -> None:
    args = validate_arguments(Sample, {"path": "a", "count": "3", "verbose": "true"})
    assert isinstance(args, Sample)
    assert args.count == 3 and args.verbose is True


def test_coercion_of_json_in_a_string_and_single_value_to_list() -> None:
    args = validate_arguments(Sample, {"path": "a", "options": '{"x": 1}', "tags": "one"})
    assert isinstance(args, Sample)
    assert args.options == {"x": 1}
    assert args.tags == ["one"]


def test_missing_and_extra_fields_are_named() -> None:
    with pytest.raises(ToolError) as caught:
        validate_arguments(Sample, {"count": 1, "colour": "red"})
    message = caught.value.message
    assert "path: required field missing" in message
    assert "colour: unexpected field (allowed: path, count, verbose, options, tags)" in message
    assert caught.value.suggestion and "path: str" in caught.value.suggestion


def test_wrong_type_reports_the_value_given() -> None:
    with pytest.raises(ToolError) as caught:
        validate_arguments(Sample, {"path": "a", "count": "many"})
    assert "count:" in caught.value.message and '"many"' in caught.value.message


def test_at_most_five_problems_then_plus_n_more() -> None:
    with pytest.raises(ToolError) as caught:
        validate_arguments(Wide, {})
    message = caught.value.message
    assert message.count("required field missing") == 5
    assert message.endswith("; +2 more")
