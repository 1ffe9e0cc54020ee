"""Tools declared outside our code: Python handlers named in config or entry points, and HTTP tools.

Their arguments are described by JSON Schema, not a pydantic model, so they share ``SchemaTool``: a
pass-through argument model, the declared schema as what the model sees (``parameters_override``), and a check
of the arguments against that schema before the policy is consulted. They are named ``{group}__{export}`` and
pass the same executor and policy as every other tool: by default they ask (``PermissionKind.CUSTOM``), HTTP
tools ask as ``NETWORK`` to their URL.

- Custom tools: ``c.HdspAgentApp.custom_tools = [{"name", "entry": "python.module", "exports": [{"name",
  "description", "parameters", "handler"?, "readOnly"?}]}]`` or the entry-point group ``hdsp_agent.tools``
  (the entry point loads such a declaration, or a callable returning one; ``entry`` defaults to its module). A
  handler is ``async def handler(ctx, input) -> str | ToolOutput | JSON``.
- HTTP tools (Continue's URI tools): ``c.HdspAgentApp.http_tools = [{"name", "description", "parameters",
  "url", "headers"?}]``; a call POSTs ``{"arguments": ...}`` and returns the answer's ``output``.

A bad declaration or a failing import is reported (``problems``) and skipped; it never stops the others.
"""

from __future__ import annotations

import importlib
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import entry_points
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict

from ..user_text import user_text
from .args import coerce_to_schema
from .base import ErrorCode, PermissionAction, PermissionKind, Tool, ToolContext, ToolError, ToolOutput
from .naming import group_tool_name, split_tool_name

ENTRY_POINT_GROUP = "hdsp_agent.tools"
HTTP_GROUP = "http"
BODY_EXCERPT_CHARS = 500
log = logging.getLogger("hdsp_agent.tools.declared")

Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[Any]]
SchemaToolT = TypeVar("SchemaToolT", bound="SchemaTool")


class PassThroughArgs(BaseModel):
    """Arguments whose schema is JSON Schema from outside: kept as given; ``SchemaTool`` checks them."""

    model_config = ConfigDict(extra="allow")

    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def normalize_schema(schema: Any) -> dict[str, Any]:
    """An object schema as providers want it: ``type: object``, ``properties``, no $schema or top title."""
    normalized = dict(schema) if isinstance(schema, Mapping) else {}
    normalized.pop("$schema", None)
    normalized.pop("title", None)
    normalized["type"] = "object"
    normalized.setdefault("properties", {})
    return normalized


class SchemaTool(Tool[PassThroughArgs]):
    """A tool described by JSON Schema. Build one with ``create`` (name and description vary per instance)."""

    args_model = PassThroughArgs
    schema: dict[str, Any] = {"type": "object", "properties": {}}

    @classmethod
    def create(
        cls: type[SchemaToolT], *, name: str, description: str, read_only: bool, **attributes: Any
    ) -> SchemaToolT:
        # ``Tool`` declares name, description and read_only on the class: each declared tool gets a class.
        bound = type(cls.__name__, (cls,), {"name": name, "description": description, "read_only": read_only})
        tool: SchemaToolT = bound()
        for key, value in attributes.items():
            setattr(tool, key, value)
        return tool

    def parameters_override(self) -> dict[str, Any]:
        """What ``definitions.parameters_schema`` sends instead of the pass-through model's schema."""
        return normalize_schema(self.schema)

    def arguments(self, args: PassThroughArgs) -> dict[str, Any]:
        return coerce_to_schema(args.arguments(), self.schema)

    def check_arguments(self, arguments: dict[str, Any]) -> None:
        """Validate against the declared schema; raises ``E_TOOL_INVALID_ARGS`` with at most five problems."""
        validator = _validator(self.parameters_override())
        if validator is None:
            return
        problems = sorted(validator.iter_errors(arguments), key=str)
        if not problems:
            return
        listed = [
            f"{'.'.join(map(str, p.absolute_path)) or '(arguments)'}: {p.message}" for p in problems[:5]
        ]
        more = f"; +{len(problems) - 5} more" if len(problems) > 5 else ""
        raise ToolError(
            ErrorCode.INVALID_ARGS.value,
            "invalid arguments: " + "; ".join(listed) + more,
            user_text("Send arguments matching the schema: %1", json.dumps(self.parameters_override())[:400]),
        )

    def guarded_action(
        self, args: PassThroughArgs, action: PermissionAction | None
    ) -> PermissionAction | None:
        # Checked here so a malformed call is answered before the user is asked about it.
        self.check_arguments(self.arguments(args))
        return action


def _validator(schema: dict[str, Any]) -> Any:
    """A JSON Schema validator; None without jsonschema (the mcp SDK brings it) or for a broken schema."""
    try:
        from jsonschema import Draft202012Validator, SchemaError
    except ImportError:
        return None
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return None
    return Draft202012Validator(schema)


# -- custom Python tools -------------------------------------------------------------------------------------


class CustomTool(SchemaTool):
    handler: Handler

    def permission(self, args: PassThroughArgs, ctx: ToolContext) -> PermissionAction | None:
        action = None if self.read_only else PermissionAction(PermissionKind.CUSTOM, self.name)
        return self.guarded_action(args, action)

    async def run(self, args: PassThroughArgs, ctx: ToolContext) -> str | ToolOutput:
        output = await self.handler(ctx, self.arguments(args))
        if isinstance(output, (str, ToolOutput)):
            return output
        return json.dumps(output, ensure_ascii=False, default=str)


# -- HTTP tools ----------------------------------------------------------------------------------------------


class HttpTool(SchemaTool):
    url: str = ""
    headers: dict[str, str] = {}

    def permission(self, args: PassThroughArgs, ctx: ToolContext) -> PermissionAction | None:
        return self.guarded_action(
            args, PermissionAction(PermissionKind.NETWORK, self.url, f"POST {self.url}")
        )

    async def run(self, args: PassThroughArgs, ctx: ToolContext) -> str:
        timeout = self.timeout or 60.0
        try:
            async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
                response = await client.post(
                    self.url, json={"arguments": self.arguments(args)}, headers=self.headers
                )
        except httpx.HTTPError as error:
            raise ToolError(
                "E_HTTP_TOOL_UNREACHABLE",
                user_text("%1 could not be reached: %2: %3", self.url, type(error).__name__, error),
                user_text("The tool's service may be down; tell the user rather than retrying many times."),
            ) from None
        body = response.text
        if response.status_code >= 400:
            raise ToolError(
                "E_HTTP_TOOL_FAILED",
                user_text("%1 answered HTTP %2: %3", self.url, response.status_code, _excerpt(body)),
                user_text(
                    "Check the arguments against the tool's description; a 5xx is the service's fault."
                ),
            )
        try:
            payload = response.json()
        except ValueError:
            raise ToolError(
                "E_HTTP_TOOL_FAILED", user_text("%1 did not answer JSON: %2", self.url, _excerpt(body)), None
            ) from None
        if not isinstance(payload, dict) or "output" not in payload:
            raise ToolError(
                "E_HTTP_TOOL_FAILED",
                user_text("%1 answered without 'output': %2", self.url, _excerpt(body)),
                None,
            )
        return _output_text(payload["output"])


def _excerpt(body: str) -> str:
    text = body.strip()
    return text if len(text) <= BODY_EXCERPT_CHARS else text[:BODY_EXCERPT_CHARS] + "..."


def _output_text(output: Any) -> str:
    """Continue's HTTP tools answer a string or context items (``{name, description, content}``)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(isinstance(item, dict) and "content" in item for item in output):
        parts = []
        for item in output:
            title = item.get("name") or item.get("description")
            parts.append(f"## {title}\n{item['content']}" if title else str(item["content"]))
        return "\n\n".join(parts)
    return json.dumps(output, ensure_ascii=False, default=str)


# -- loading -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeclarationProblem:
    source: str
    message: str

    def public(self) -> dict[str, Any]:
        return {"source": self.source, "message": self.message}


@dataclass
class DeclaredTools:
    tools: list[Tool[Any]] = field(default_factory=list)
    problems: list[DeclarationProblem] = field(default_factory=list)


class _Invalid(ValueError):
    pass


def load_declared_tools(config: Any) -> DeclaredTools:
    """Custom tools (trait and entry points) and HTTP tools from ``config`` (an ``HdspAgentConfig``)."""
    loaded = DeclaredTools()
    names: set[str] = set()

    def add(source: str, build: Callable[[], list[Tool[Any]]]) -> None:
        try:
            tools = build()
        except Exception as error:  # a plugin's import can fail in any way; it must not stop the others
            loaded.problems.append(DeclarationProblem(source, f"{type(error).__name__}: {error}"))
            return
        for tool in tools:
            if tool.name in names:
                loaded.problems.append(
                    DeclarationProblem(source, f"{tool.name!r} is already declared; skipped")
                )
                continue
            names.add(tool.name)
            loaded.tools.append(tool)

    for index, declaration in enumerate(getattr(config, "custom_tools", None) or []):
        label = f"custom_tools[{index}]" + (
            f" ({declaration.get('name')})" if isinstance(declaration, dict) else ""
        )
        add(label, partial(_custom_tools, declaration, None))
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        add(f"entry point {entry_point.name} ({entry_point.value})", partial(_from_entry_point, entry_point))
    for index, declaration in enumerate(getattr(config, "http_tools", None) or []):
        add(f"http_tools[{index}]", partial(_http_tools, declaration))
    return loaded


def declared_tools(config: Any) -> list[Tool[Any]]:
    """The declared tools that loaded; the others are logged (and listed by GET /hdsp-agent/mcp/servers)."""
    loaded = load_declared_tools(config)
    for problem in loaded.problems:
        log.warning("hdsp-agent: declared tool skipped: %s: %s", problem.source, problem.message)
    return loaded.tools


def _from_entry_point(entry_point: Any) -> list[Tool[Any]]:
    declaration = entry_point.load()
    if callable(declaration) and not isinstance(declaration, Mapping):
        declaration = declaration()
    if not isinstance(declaration, Mapping):
        raise _Invalid("the entry point must load a declaration object (or a function returning one)")
    return _custom_tools({"name": entry_point.name, **declaration}, entry_point.module)


def _custom_tools(declaration: Any, default_module: str | None) -> list[Tool[Any]]:
    if not isinstance(declaration, Mapping):
        raise _Invalid("a declaration must be an object {name, entry, exports}")
    group = declaration.get("name")
    entry = declaration.get("entry") or default_module
    exports = declaration.get("exports")
    if not isinstance(group, str) or not group or "__" in group:
        raise _Invalid("'name' must be a non-empty string without '__'")
    if not isinstance(entry, str) or not entry:
        raise _Invalid("'entry' (a Python module) is required")
    if not isinstance(exports, list) or not exports:
        raise _Invalid("'exports' must be a non-empty list")
    module = importlib.import_module(entry)
    return [_custom_tool(group, module, export) for export in exports]


def _custom_tool(group: str, module: Any, export: Any) -> Tool[Any]:
    name, description, schema = _described(export)
    handler = getattr(module, str(export.get("handler") or name), None)
    if handler is None:
        raise _Invalid(f"{module.__name__} has no handler {export.get('handler') or name!r}")
    if not inspect.iscoroutinefunction(handler):
        raise _Invalid(f"{module.__name__}.{handler.__name__} must be 'async def handler(ctx, input)'")
    return CustomTool.create(
        name=group_tool_name(group, name),
        description=description,
        read_only=bool(export.get("readOnly", False)),
        schema=schema,
        handler=handler,
    )


def _http_tools(declaration: Any) -> list[Tool[Any]]:
    return [_http_tool(declaration)]


def _http_tool(declaration: Any) -> Tool[Any]:
    name, description, schema = _described(declaration)
    url = declaration.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise _Invalid("'url' must be an http(s) URL")
    headers = declaration.get("headers") or {}
    if not isinstance(headers, Mapping):
        raise _Invalid("'headers' must be an object")
    group, export = split_tool_name(name)
    return HttpTool.create(
        name=group_tool_name(group or HTTP_GROUP, export),
        description=description,
        read_only=False,
        schema=schema,
        url=url,
        headers={str(k): str(v) for k, v in headers.items()},
    )


def _described(export: Any) -> tuple[str, str, dict[str, Any]]:
    if not isinstance(export, Mapping):
        raise _Invalid("each export must be an object {name, description, parameters}")
    name, description = export.get("name"), export.get("description")
    if not isinstance(name, str) or not name:
        raise _Invalid("an export needs a 'name'")
    if not isinstance(description, str) or not description.strip():
        raise _Invalid(f"{name!r} needs a 'description' (what the model reads to decide when to call it)")
    schema = export.get("parameters") or {"type": "object", "properties": {}}
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise _Invalid(f"{name!r}: 'parameters' must be a JSON Schema of type object")
    if _validator({"type": "object", "properties": {}}) is not None and _validator(dict(schema)) is None:
        raise _Invalid(f"{name!r}: 'parameters' is not a valid JSON Schema")
    return name, description, dict(schema)
