"""Registry, per-step catalog, and the exported definitions each consumer reads."""

from __future__ import annotations

import json

import jsonschema
import pytest
from openai.types.chat import ChatCompletionToolParam
from pydantic import Field, TypeAdapter

from hdsp_agent.tools.base import Tool, ToolArgs, ToolContext
from hdsp_agent.tools.builtin import builtin_tools
from hdsp_agent.tools.definitions import export, parameters_schema, to_anthropic, to_mcp, to_openai
from hdsp_agent.tools.registry import DuplicateToolError, ToolRegistry


class Inner(ToolArgs):
    start: int = Field(description="first line")


class NestedArgs(ToolArgs):
    path: str
    ranges: list[Inner] = Field(default_factory=list)


class NestedTool(Tool[NestedArgs]):
    name = "nested"
    description = "A tool with a nested model."
    args_model = NestedArgs
    read_only = True


class Unavailable(Tool[NestedArgs]):
    name = "needs_backend"
    description = "Needs a backend."
    args_model = NestedArgs

    def is_available(self, ctx: ToolContext) -> bool:
        return False


def test_registry_refuses_duplicates_and_invalid_names() -> None:
    registry = ToolRegistry([NestedTool()])
    with pytest.raises(DuplicateToolError):
        registry.register(NestedTool())

    class BadName(NestedTool):
        name = "bad name"

    with pytest.raises(ValueError):
        registry.register(BadName())


def test_catalog_filters_by_availability_disabled_and_predicate(tmp_path) -> None:
    registry = ToolRegistry([NestedTool(), Unavailable(), *builtin_tools()])
    ctx = ToolContext(root_dir=tmp_path)
    assert "needs_backend" not in registry.catalog(ctx)
    assert "needs_backend" in registry.catalog()  # without a context nothing is judged unavailable
    assert "nested" not in registry.catalog(ctx, disabled=["nested"])
    read_only = registry.catalog(ctx, include=lambda tool: tool.read_only)
    assert "nested" in read_only and "ls" in read_only
    assert read_only.without(["ls"]).names() == [name for name in read_only.names() if name != "ls"]


def test_schemas_inline_refs_and_drop_titles() -> None:
    schema = parameters_schema(NestedTool())
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and '"title"' not in text
    assert schema["properties"]["ranges"]["items"]["properties"]["start"]["type"] == "integer"
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({"path": "a", "ranges": [{"start": 1}]}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"path": "a", "other": 1}, schema)


@pytest.mark.parametrize("tool", [NestedTool(), *builtin_tools()], ids=lambda tool: tool.name)
def test_openai_definitions_are_valid_chat_completion_tools(tool: Tool) -> None:
    definition = to_openai(tool)
    TypeAdapter(ChatCompletionToolParam).validate_python(definition)
    assert definition["type"] == "function"
    assert definition["function"]["parameters"]["type"] == "object"
    jsonschema.Draft202012Validator.check_schema(definition["function"]["parameters"])


def test_anthropic_and_mcp_shapes() -> None:
    tool = NestedTool()
    anthropic = to_anthropic(tool)
    assert set(anthropic) == {"name", "description", "input_schema"}
    mcp = to_mcp(tool)
    assert mcp["inputSchema"] == anthropic["input_schema"]
    assert mcp["annotations"] == {"readOnlyHint": True, "destructiveHint": False}


def test_markdown_table_lists_parameters_with_optional_marks() -> None:
    table = export([NestedTool()], "markdown")
    assert "| `nested` | yes | `path`: string, `ranges`?: object[] | A tool with a nested model. |" in table


def test_export_json_formats_round_trip() -> None:
    for fmt in ("openai", "anthropic", "mcp"):
        parsed = json.loads(export([NestedTool()], fmt))
        assert isinstance(parsed, list) and len(parsed) == 1
