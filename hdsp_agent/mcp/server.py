"""Our tools as an MCP server (the SDK's low-level ``Server``), for the HTTP endpoint and ``hdsp-agent mcp``.

Listing gives each tool of the catalog with its schema and annotations from our metadata (``readOnlyHint``,
``destructiveHint``). A call goes through the same ``ToolExecutor`` and policy as the sidebar's: what the
policy allows runs, what it denies is refused, and what needs approval goes to the executor's approver — the
sidebar (``SidebarApprover``) on the Jupyter server, nobody (a refusal saying so) on stdio unless ``--approve
all``. Tools that come from MCP servers we are a client of are not served again (no loops between two agents).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import BaseModel

from .. import __version__
from ..events import ToolProgressEvent
from ..tools.base import CancelToken, Tool, ToolCall, ToolContext, ToolResult
from ..tools.definitions import parameters_schema
from ..tools.executor import ToolExecutor
from ..tools.profiles import TOOL_INDEX
from ..tools.registry import ToolCatalog
from .tools import McpTool

ContextFactory = Callable[..., ToolContext]
INSTRUCTIONS = (
    "Tools of hdsp-agent, running on a Jupyter server: files, search and shell in the server's root "
    "directory, and notebook tools that run on the live kernels of the user's notebooks. Calls that change "
    "things may need the user's approval in the hdsp-agent sidebar."
)


class McpEndpoint:
    """Serves the catalog of one executor's registry; ``server()`` builds the SDK server for a transport."""

    def __init__(
        self,
        executor: ToolExecutor,
        context_factory: ContextFactory,
        *,
        disabled: list[str] | None = None,
        name: str = "hdsp-agent",
    ) -> None:
        self.executor = executor
        self.context_factory = context_factory
        self.disabled = list(disabled or [])
        self.name = name

    def server(self) -> Server[Any]:
        return Server(
            self.name,
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def catalog(self, ctx: ToolContext) -> ToolCatalog:
        return self.executor.registry.catalog(ctx, include=_served, disabled=self.disabled)

    async def _list_tools(
        self, request: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[mcp_definition(tool) for tool in self.catalog(self.context_factory())]
        )

    async def _call_tool(
        self, request: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        forward = _ProgressForwarder(request)
        ctx = self.context_factory(session_id="mcp", emit=forward, cancel=CancelToken())
        call = ToolCall(
            id=f"mcp-{uuid.uuid4().hex[:12]}", name=params.name, arguments=dict(params.arguments or {})
        )
        try:
            result = await self.executor.execute(call, ctx, self.catalog(ctx))
        finally:
            await forward.settle()
        return call_result(result)


def _served(tool: Tool[Any]) -> bool:
    # Neither the tools of the servers we are a client of nor their index (it lists tools not served here).
    return not isinstance(tool, McpTool) and tool.name != TOOL_INDEX


def mcp_definition(tool: Tool[Any]) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=parameters_schema(tool),
        annotations=types.ToolAnnotations(read_only_hint=tool.read_only, destructive_hint=not tool.read_only),
    )


def call_result(result: ToolResult) -> types.CallToolResult:
    """Our result as MCP content: text (notes first), images from ``details["images"]``, errors as isError."""
    lines = [f"Note: {note}" for note in result.notes]
    if result.ok:
        lines.append(result.content)
    elif result.error is not None:
        lines.append(f"Error [{result.error.code}]: {result.error.message}")
        if result.error.suggestion:
            lines.append(f"Suggestion: {result.error.suggestion}")
    content: list[types.TextContent | types.ImageContent] = [
        types.TextContent(type="text", text="\n".join(lines))
    ]
    images = (result.details.get("images") or []) if result.ok else []
    for image in images:
        content.append(types.ImageContent(type="image", data=image["data"], mime_type=image["mime_type"]))
    return types.CallToolResult(content=list(content), is_error=not result.ok)


class _ProgressForwarder:
    """Turns a tool's progress events into MCP progress notifications (when the client asked for them)."""

    def __init__(self, request: ServerRequestContext[Any]) -> None:
        self.request = request
        self.count = 0
        self.pending: set[asyncio.Task[None]] = set()

    def __call__(self, event: BaseModel) -> None:
        if not isinstance(event, ToolProgressEvent):
            return
        self.count += 1
        task = asyncio.get_running_loop().create_task(self._send(self.count, event.message))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def _send(self, count: int, message: str) -> None:
        try:
            await self.request.session.report_progress(count, None, message)
        except Exception:  # the client went away; the call's result is what matters
            return

    async def settle(self) -> None:
        if self.pending:
            await asyncio.wait(set(self.pending), timeout=5)
