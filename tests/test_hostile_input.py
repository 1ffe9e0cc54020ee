"""Property-based tests: whatever the model or a client sends, parsing and path checks fail cleanly."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdsp_agent.agent.accumulator import StreamAccumulator
from hdsp_agent.permissions.paths import is_inside, resolve_in_root
from hdsp_agent.tools.args import find_truncation, parse_arguments
from hdsp_agent.tools.base import ToolError
from hdsp_agent.wire import parse_command

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.text(max_size=300))
@settings(max_examples=400, deadline=None)
def test_parse_arguments_returns_an_object_or_a_clear_error(raw: str) -> None:
    try:
        parsed = parse_arguments(raw)
    except ToolError as error:
        assert error.code == "E_TOOL_INVALID_ARGS" and error.message and error.suggestion
    else:
        assert isinstance(parsed.value, dict)


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=6))
@settings(max_examples=200, deadline=None)
def test_valid_json_objects_parse_exactly_without_repair(value: dict) -> None:
    parsed = parse_arguments(json.dumps(value))
    assert parsed.value == value and parsed.repaired is False


@given(
    st.dictionaries(st.text(min_size=1, max_size=10), st.text(max_size=20), min_size=1, max_size=4), st.data()
)
@settings(max_examples=200, deadline=None)
def test_a_cut_off_object_is_never_completed(value: dict, data: st.DataObject) -> None:
    text = json.dumps(value)
    cut = data.draw(st.integers(min_value=1, max_value=len(text) - 1))
    prefix = text[:cut]
    if find_truncation(prefix) is None:
        return  # e.g. a cut right after a complete inner value: not recognisably truncated, nothing to assert
    try:
        parse_arguments(prefix)
    except ToolError as error:
        assert "truncated" in error.message
    else:
        raise AssertionError(f"truncated arguments {prefix!r} were accepted")


path_parts = st.sampled_from(["..", ".", "a", "b", "link", "~", "/", "/etc", "x\\y", "%2e%2e", "..."])


@given(st.lists(path_parts, min_size=1, max_size=6))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_resolved_paths_never_leave_the_root(tmp_path: Path, parts: list[str]) -> None:
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    if not (root / "a" / "link").is_symlink():
        (root / "a" / "link").symlink_to(outside)
    user_path = os.path.join(*parts)
    try:
        resolved = resolve_in_root(root, user_path)
    except ToolError as error:
        assert error.code in ("E_PATH_OUTSIDE_ROOT", "E_PATH_INVALID")
    else:
        assert is_inside(resolved, root.resolve())


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_websocket_commands_are_validated_or_rejected(raw: str) -> None:
    try:
        parse_command(raw)
    except ValueError:
        pass  # includes pydantic.ValidationError and json.JSONDecodeError


@given(st.lists(json_values, max_size=8))
@settings(max_examples=200, deadline=None)
def test_accumulator_never_raises_on_malformed_chunks(chunks: list) -> None:
    accumulator = StreamAccumulator()
    accumulator.add({"choices": [{"index": 0, "delta": {"content": "kept"}}]})
    for chunk in chunks:
        accumulator.add(chunk if isinstance(chunk, dict) else {"choices": chunk})
        accumulator.add({"choices": [chunk]})
        accumulator.add({"choices": [{"index": 0, "delta": {"tool_calls": [chunk]}}]})
    message = accumulator.result()
    assert message.content.startswith("kept")
    assert all(isinstance(call.arguments, str) for call in message.tool_calls)
