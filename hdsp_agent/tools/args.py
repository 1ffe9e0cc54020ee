"""Turning the model's argument string into a validated pydantic model, or an error the model can fix.

Steps: strict JSON → repair with json-repair (recorded) → coercion toward the schema → pydantic validation.
A truncated argument string (a stream cut mid-way) is never "repaired": completing it would invent values, so
it is an ``E_TOOL_INVALID_ARGS`` error, as is anything that does not come out as a JSON object.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

import json_repair
from pydantic import BaseModel, ValidationError

from .base import ErrorCode, ToolError

MAX_LISTED_PROBLEMS = 5


@dataclass
class ParsedArguments:
    value: dict[str, Any]
    repaired: bool = False
    notes: list[str] = field(default_factory=list)


def _invalid(message: str, suggestion: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_ARGS.value, message, suggestion)


def find_truncation(text: str) -> str | None:
    """Why ``text`` looks cut off (unclosed string or bracket, a key without a value), or None.

    json-repair happily completes ``{"path": `` into ``{"path": ""}``; that is guessing, so we refuse such
    input. Quotes of either kind open strings because models (and json-repair) use single quotes too.
    """
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    awaiting_value = False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char.isspace():
            continue
        if awaiting_value and char in ",}]":
            return "a key has no value"
        awaiting_value = char == ":"
        if char in "\"'":
            quote = char
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack and stack[-1] == char:
            stack.pop()
    if quote:
        return "a string is not closed"
    if awaiting_value:
        return "the last key has no value"
    if stack:
        return f"{len(stack)} bracket(s) not closed"
    return None


def parse_arguments(raw: str | dict[str, Any] | None) -> ParsedArguments:
    """Parse the arguments the model sent. Raises ``ToolError(E_TOOL_INVALID_ARGS)`` with what was wrong."""
    if isinstance(raw, dict):
        return ParsedArguments(dict(raw))
    if raw is None or not raw.strip():
        # No arguments at all is how several providers call a tool that takes none.
        return ParsedArguments({})
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as strict_error:
        value = _repair(raw, strict_error)
        parsed = ParsedArguments(
            {}, repaired=True, notes=[f"arguments were not valid JSON ({strict_error.msg})"]
        )
    else:
        parsed = ParsedArguments({})
    value = _unwrap_json_string(value)
    if not isinstance(value, dict):
        raise _invalid(
            f"arguments must be a JSON object, got {type(value).__name__}",
            'Send the arguments as one JSON object, e.g. {"name": "value"}.',
        )
    parsed.value = value
    return parsed


def _repair(raw: str, strict_error: json.JSONDecodeError) -> Any:
    truncation = find_truncation(raw)
    if truncation:
        raise _invalid(
            f"arguments are not valid JSON and look truncated: {truncation} "
            f"(at char {strict_error.pos} of {len(raw)})",
            "Send the complete JSON object again; if a value is very long, split the work into smaller "
            "calls.",
        )
    repaired = json_repair.repair_json(raw, return_objects=True)
    if repaired == "" or repaired is None:
        raise _invalid(
            f"arguments are not valid JSON: {strict_error.msg} at char {strict_error.pos}",
            "Send the arguments as one JSON object with double-quoted keys and strings.",
        )
    return repaired


def _unwrap_json_string(value: Any) -> Any:
    """Some models double-encode: the arguments are a JSON string whose content is the object."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except json.JSONDecodeError:
            return value
        if isinstance(inner, dict):
            return inner
    return value


def coerce_to_schema(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Nudge values toward the schema where the intent is unambiguous; pydantic's lax mode does the rest.

    Handles what lax mode does not: an object or array sent as a JSON string, and a single value where an
    array is expected.
    """
    properties = schema.get("properties", {})
    coerced = dict(value)
    for key, item in value.items():
        prop = properties.get(key)
        if prop is None:
            continue
        expected = _types_of(prop, schema)
        if isinstance(item, str) and expected & {"object", "array"} and "string" not in expected:
            decoded = _json_or_none(item)
            if isinstance(decoded, (dict, list)):
                coerced[key] = decoded
                continue
        if expected == {"array"} and not isinstance(item, list) and item is not None:
            coerced[key] = [item]
    return coerced


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _types_of(prop: dict[str, Any], schema: dict[str, Any]) -> set[str]:
    if "$ref" in prop:
        ref_name = prop["$ref"].rsplit("/", 1)[-1]
        prop = schema.get("$defs", {}).get(ref_name, {})
    if "type" in prop:
        kind = prop["type"]
        return set(kind) if isinstance(kind, list) else {kind}
    types: set[str] = set()
    for option in prop.get("anyOf", []) + prop.get("oneOf", []):
        types |= _types_of(option, schema)
    if "properties" in prop:
        types.add("object")
    return types


@functools.lru_cache(maxsize=512)
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    # Generating a JSON Schema is costly; an argument model's never changes.
    return model.model_json_schema()


def validate_arguments(model: type[BaseModel], value: dict[str, Any]) -> BaseModel:
    """Validate with pydantic; the error lists at most five problems, then "+N more"."""
    coerced = coerce_to_schema(value, _schema_of(model))
    try:
        return model.model_validate(coerced)
    except ValidationError as error:
        raise _invalid(format_validation_error(error, model), _schema_hint(model)) from None


def format_validation_error(error: ValidationError, model: type[BaseModel]) -> str:
    problems = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or "(arguments)"
        if item["type"] == "extra_forbidden":
            allowed = ", ".join(model.model_fields) or "none"
            problems.append(f"{location}: unexpected field (allowed: {allowed})")
        elif item["type"] == "missing":
            problems.append(f"{location}: required field missing")
        else:
            problems.append(f"{location}: {item['msg']} (got {_short(item.get('input'))})")
    listed = problems[:MAX_LISTED_PROBLEMS]
    more = len(problems) - len(listed)
    text = "invalid arguments: " + "; ".join(listed)
    return text + (f"; +{more} more" if more else "")


def _schema_hint(model: type[BaseModel]) -> str:
    fields = []
    for name, info in model.model_fields.items():
        kind = getattr(info.annotation, "__name__", None) or str(info.annotation).replace("typing.", "")
        fields.append(f"{name}: {kind}{'' if info.is_required() else ' (optional)'}")
    return "Call again with arguments matching the schema: {" + ", ".join(fields) + "}."


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
