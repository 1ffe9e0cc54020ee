"""Tool definitions as each consumer wants them: OpenAI, Anthropic, MCP, and Markdown for the README.

The JSON Schema comes from the tool's pydantic model, with ``$ref``s inlined and pydantic's ``title`` noise
removed: several OpenAI-compatible servers (llama.cpp, older vLLM) do not resolve ``$defs``. An optional
argument
(``str | None = None``) is shown as its plain type, not pydantic's ``anyOf [X, null]`` with ``default: null``:
the
argument is simply not required, and every tool's schema is sent on every step, so the noise costs tokens each
time.
Validation still runs on the pydantic model, which accepts an explicit null.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from .base import Tool

ExportFormat = Literal["openai", "anthropic", "mcp", "markdown"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("openai", "anthropic", "mcp", "markdown")


def parameters_schema(tool: Tool[Any]) -> dict[str, Any]:
    # Tools described by JSON Schema from outside (MCP, declared tools) give theirs as is.
    override = getattr(tool, "parameters_override", None)
    if override is not None:
        return dict(override())
    schema = tool.args_model.model_json_schema()
    defs = schema.pop("$defs", {})
    cleaned = _clean(schema, defs)
    cleaned.setdefault("properties", {})
    cleaned["type"] = "object"
    return cleaned


def _clean(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return _clean(merged, defs)
        cleaned = {key: _clean(value, defs) for key, value in node.items() if key != "title"}
        return _without_null_option(cleaned)
    if isinstance(node, list):
        return [_clean(item, defs) for item in node]
    return node


def _without_null_option(node: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, {"type": "null"}], "default": None, ...}`` → ``{...X, ...}`` (module docstring)."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    if "default" in node and node["default"] is not None:
        return node
    (kept,) = [option for option in options if option != {"type": "null"}]
    rest = {key: value for key, value in node.items() if key not in ("anyOf", "default")}
    return {**kept, **rest}


def to_openai(tool: Tool[Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters_schema(tool),
        },
    }


def to_anthropic(tool: Tool[Any]) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": parameters_schema(tool)}


def to_mcp(tool: Tool[Any]) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": parameters_schema(tool),
        "annotations": {"readOnlyHint": tool.read_only, "destructiveHint": not tool.read_only},
    }


def to_summary(tool: Tool[Any]) -> dict[str, Any]:
    """The shape the sidebar receives in ``GET /hdsp-agent/info``."""
    return {
        "name": tool.name,
        "description": tool.description,
        "read_only": tool.read_only,
        "parameters": parameters_schema(tool),
    }


def to_markdown(tools: Iterable[Tool[Any]]) -> str:
    lines = ["| tool | read-only | parameters | description |", "|---|---|---|---|"]
    for tool in tools:
        schema = parameters_schema(tool)
        required = set(schema.get("required", []))
        params = ", ".join(
            f"`{name}`{'' if name in required else '?'}: {_type_label(prop)}"
            for name, prop in schema["properties"].items()
        )
        summary = tool.description.strip().split("\n")[0].replace("|", "\\|")
        lines.append(f"| `{tool.name}` | {'yes' if tool.read_only else 'no'} | {params or '—'} | {summary} |")
    return "\n".join(lines) + "\n"


def _type_label(prop: dict[str, Any]) -> str:
    if "type" in prop:
        kind = prop["type"]
        if kind == "array" and isinstance(prop.get("items"), dict):
            return f"{_type_label(prop['items'])}[]"
        return "|".join(kind) if isinstance(kind, list) else str(kind)
    if "enum" in prop:
        return "|".join(json.dumps(v) for v in prop["enum"])
    options = prop.get("anyOf") or prop.get("oneOf") or []
    labels = [_type_label(option) for option in options if option.get("type") != "null"]
    return "|".join(labels) or "any"


def export(tools: Iterable[Tool[Any]], fmt: ExportFormat) -> str:
    """All definitions in one format, as text: JSON for the machine formats, a table for Markdown."""
    tool_list = list(tools)
    if fmt == "markdown":
        return to_markdown(tool_list)
    convert = {"openai": to_openai, "anthropic": to_anthropic, "mcp": to_mcp}[fmt]
    return json.dumps([convert(tool) for tool in tool_list], indent=2, ensure_ascii=False)
